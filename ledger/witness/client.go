package witness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/writ-ledger/writ/ledger/formats"
	"golang.org/x/mod/sumdb/tlog"
)

// Bounds of a witness's answers, as the client reads them.
const (
	// MaxSignatureLines is the most signature lines a 200 answer to
	// add-checkpoint may carry (one per witness key; signed-note asks
	// verifiers to accept 16 signatures on a note).
	MaxSignatureLines = 16
	// MaxSignatureLine bounds one signature line, in bytes: an ML-DSA-44
	// cosignature (4 + 8 + 2420 bytes in base64, about 3.3 kB) with its
	// name fits.
	MaxSignatureLine = 8 << 10
	// maxErrorBody is how much of an error answer is read, for its
	// first line.
	maxErrorBody = 4 << 10
	// ClientTimeout bounds one request of a Client whose HTTP is nil,
	// from dialling to the last byte.
	ClientTimeout = 30 * time.Second
)

// Client talks to witnesses over HTTP (c2sp.org/tlog-witness) from the
// log's side. URLs must be https://, or http:// to a loopback host
// (127.0.0.0/8, ::1, "localhost"), the rule of tiles.OpenSource: plain
// HTTP elsewhere would let the network answer for the witness. The zero
// Client is ready to use.
type Client struct {
	// HTTP sends the requests; nil means a client with ClientTimeout that
	// follows no redirect (a witness that redirects is an ErrWitness).
	HTTP *http.Client
}

var defaultHTTP = NewClient(ClientTimeout).HTTP

// NewClient returns a Client whose every request, from dialling to the
// last byte, is cut off after timeout, and which follows no redirect (a
// witness that redirects is an ErrWitness), like the zero Client with
// another timeout.
func NewClient(timeout time.Duration) *Client {
	return &Client{HTTP: &http.Client{
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return defaultHTTP
}

// AddCheckpoint submits the signed checkpoint with the old size and the
// consistency proof from it (MarshalRequest) to the witness whose
// submission prefix is submissionURL (the request goes to
// submissionURL + "/add-checkpoint"), and returns the witness's
// signature lines: the 200 body, checked to be 1 to MaxSignatureLines
// lines of the form "— <key name> <base64>\n", each at most
// MaxSignatureLine bytes. It does not verify them: append them to signed
// and open the note with the witness keys the caller trusts (the
// specification tells clients to ignore unknown keys).
//
// Errors: *ConflictError (409, wrapping ErrConflict) with the size the
// witness holds, read from a body that must be exactly "<decimal>\n"
// under Content-Type text/x.tlog.size; otherwise a *ResponseError
// wrapping ErrBadRequest (400), ErrForbidden (403), ErrUnknownLog (404),
// ErrInconsistent (422) or ErrWitness (any other status, a transport
// failure, a malformed 200 or 409 body, or a URL that breaks the rule
// above); or MarshalRequest's errors (ErrBadRequest) before any request.
func (c *Client) AddCheckpoint(ctx context.Context, submissionURL string, old int64, proof tlog.TreeProof, signed []byte) ([]byte, error) {
	body, err := MarshalRequest(old, proof, signed)
	if err != nil {
		return nil, err
	}
	u, err := endpoint(submissionURL, "add-checkpoint")
	if err != nil {
		return nil, err
	}
	resp, err := c.do(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		b, err := readAtMost(resp.Body, MaxSignatureLines*MaxSignatureLine)
		if err == nil {
			err = checkSignatureLines(b)
		}
		if err != nil {
			return nil, &ResponseError{URL: u, Status: resp.StatusCode, Kind: ErrWitness, Err: err}
		}
		return b, nil
	case http.StatusConflict:
		b, err := readAtMost(resp.Body, 32)
		var size int64
		if err == nil {
			size, err = parseConflict(resp.Header.Get("Content-Type"), b)
		}
		if err != nil {
			return nil, &ResponseError{URL: u, Status: resp.StatusCode, Kind: ErrWitness, Err: err}
		}
		return nil, &ConflictError{Size: size}
	}
	kind := map[int]error{
		http.StatusBadRequest:          ErrBadRequest,
		http.StatusForbidden:           ErrForbidden,
		http.StatusNotFound:            ErrUnknownLog,
		http.StatusUnprocessableEntity: ErrInconsistent,
	}[resp.StatusCode]
	if kind == nil {
		kind = ErrWitness
	}
	return nil, &ResponseError{URL: u, Status: resp.StatusCode, Line: firstLine(resp.Body), Kind: kind}
}

// Checkpoint fetches the checkpoint the witness whose monitoring prefix
// is monitoringURL last cosigned for origin: GET
// monitoringURL/<OriginHash(origin)>/checkpoint. The answer, at most
// MaxCheckpointSize bytes, must be a checkpoint of that origin
// (ParseCheckpoint); its signatures are not verified (open it with the
// log's and the witness's keys). Errors are *ResponseError wrapping
// ErrNotCosigned (404) or ErrWitness (another status, a transport
// failure, a body that is not such a checkpoint, a URL that breaks the
// rule of Client).
func (c *Client) Checkpoint(ctx context.Context, monitoringURL, origin string) ([]byte, error) {
	u, err := endpoint(monitoringURL, OriginHash(origin)+"/checkpoint")
	if err != nil {
		return nil, err
	}
	resp, err := c.do(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return nil, &ResponseError{URL: u, Status: resp.StatusCode, Line: firstLine(resp.Body), Kind: ErrNotCosigned}
	default:
		return nil, &ResponseError{URL: u, Status: resp.StatusCode, Line: firstLine(resp.Body), Kind: ErrWitness}
	}
	b, err := readAtMost(resp.Body, MaxCheckpointSize)
	if err != nil {
		return nil, &ResponseError{URL: u, Status: resp.StatusCode, Kind: ErrWitness, Err: err}
	}
	cp, err := ParseCheckpoint(b)
	if err == nil && cp.Origin != origin {
		err = fmt.Errorf("the checkpoint served is of origin %q", cp.Origin)
	}
	if err != nil {
		return nil, &ResponseError{URL: u, Status: resp.StatusCode, Kind: ErrWitness, Err: err}
	}
	return b, nil
}

// endpoint joins a witness URL prefix and a path after checking the
// prefix: https://, or http:// to a loopback host; no user, query or
// fragment. Errors are *ResponseError wrapping ErrWitness.
// do sends one request to u; a failure to send it or to get an answer is
// a *ResponseError wrapping ErrWitness.
func (c *Client) do(ctx context.Context, method, u string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, &ResponseError{URL: u, Kind: ErrWitness, Err: err}
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return nil, &ResponseError{URL: u, Kind: ErrWitness, Err: err}
	}
	return resp, nil
}

func endpoint(prefix, path string) (string, error) {
	u, err := url.Parse(prefix)
	bad := func(why string) error {
		return &ResponseError{URL: prefix, Kind: ErrWitness, Err: errors.New(why)}
	}
	switch {
	case err != nil:
		return "", bad("not a URL")
	case u.Scheme == "https" && u.Host != "":
	case u.Scheme == "http" && isLoopback(u.Hostname()):
	case u.Scheme == "http":
		return "", bad("plain http:// only on loopback (127.0.0.1, ::1, localhost); use https://")
	default:
		return "", bad("the scheme must be https://, or http:// on loopback")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", bad("a witness URL has no user, query or fragment")
	}
	return strings.TrimSuffix(u.String(), "/") + "/" + path, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// readAtMost reads all of r, refusing more than max bytes.
func readAtMost(r io.Reader, max int) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > max {
		return nil, fmt.Errorf("the answer is larger than %d bytes", max)
	}
	return b, nil
}

// parseConflict reads a 409 answer: Content-Type text/x.tlog.size (media
// type parameters ignored) and a body of exactly a tree size (decimal,
// no leading zeros, at most 2^56 (formats.MaxTreeSize)) and "\n".
func parseConflict(contentType string, body []byte) (int64, error) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil || mt != SizeContentType {
		return 0, fmt.Errorf("a 409 answer with Content-Type %q, not %s", contentType, SizeContentType)
	}
	s, ok := strings.CutSuffix(string(body), "\n")
	n, okSize := parseSize(s)
	if !ok || !okSize {
		return 0, fmt.Errorf("a 409 answer whose body %q is not a tree size and a newline", body)
	}
	return n, nil
}

// checkSignatureLines checks a 200 answer to add-checkpoint: 1 to
// MaxSignatureLines lines, each of at most MaxSignatureLine bytes and a
// signature line (formats.ParseSigLine: "— <key name> <base64 of at
// least 5 bytes>") and a newline (c2sp.org/signed-note).
func checkSignatureLines(b []byte) error {
	if len(b) == 0 || b[len(b)-1] != '\n' {
		return errors.New("the answer is empty or does not end in a newline")
	}
	lines := strings.Split(string(b[:len(b)-1]), "\n")
	if len(lines) > MaxSignatureLines {
		return fmt.Errorf("%d signature lines, at most %d", len(lines), MaxSignatureLines)
	}
	for _, l := range lines {
		if len(l) > MaxSignatureLine {
			return fmt.Errorf("a signature line of %d bytes, at most %d", len(l), MaxSignatureLine)
		}
		if _, err := formats.ParseSigLine(l); err != nil {
			return err
		}
	}
	return nil
}

// firstLine reads the first line of an error answer (at most 200 bytes
// of its first maxErrorBody), with bytes that are not printable ASCII
// replaced by '?', for messages.
func firstLine(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, maxErrorBody))
	line, _, _ := bytes.Cut(b, []byte("\n"))
	if len(line) > 200 {
		line = line[:200]
	}
	out := []byte(strings.TrimSuffix(string(line), "\r"))
	for i, c := range out {
		if c < 0x20 || c > 0x7e {
			out[i] = '?'
		}
	}
	return string(out)
}
