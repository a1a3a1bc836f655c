package logservice

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fxamacker/cbor/v2"
	"github.com/writ-ledger/writ/internal/endpoint"
	"github.com/writ-ledger/writ/internal/humanize"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
	"golang.org/x/mod/sumdb/tlog"
)

// ErrAnswer: a service's answer to a submission does not prove what it
// claims (a checkpoint the log's key did not sign, an entry that is not
// the record sent, an inclusion proof that fails). The records may or
// may not be in the log: do not submit them again before checking it
// (a second submission of an appended record is refused as a duplicate).
var ErrAnswer = errors.New("the service's answer does not verify")

// ErrServiceURL: a service URL that is not https://, or http:// on
// loopback, with a host and nothing after the path.
var ErrServiceURL = errors.New("unusable service URL")

// maxAnswer bounds an answer's body, in bytes: an appended submission's
// answer holds a checkpoint and, per record, a digest and about 40
// hashes (at most 4,096 records).
const maxAnswer = 16 << 20

// Client submits records to a writer service (Service) and verifies each
// answer before it reports anything appended.
type Client struct {
	// URL is the service's base URL: https://host[:port][/path], or
	// http:// on loopback.
	URL string
	// VKey is the log's checkpoint verifier key (`writ ledger vkey`): an
	// answer must carry a checkpoint it signed that includes every
	// record.
	VKey *formats.LogKey
	// HTTP is the client the requests go through (nil: one with a 60 s
	// timeout, proxies from the environment).
	HTTP *http.Client

	verified checkpointCache // the checkpoints VKey verified lately
	keyOK    atomic.Bool     // the service's checkpoint verified under VKey once
}

// Appended is what a verified answer proves: each record's entry, proven
// into the tree of Checkpoint (Signed, the signed note) by its inclusion
// proof.
type Appended struct {
	Entries    []AddedEntry
	Checkpoint formats.Checkpoint
	Signed     []byte
}

// Append submits records (each a signed record as its file holds it, 1
// to the service's --max-records of them) to be appended all or none, in
// order, and returns them once the answer verifies: a checkpoint VKey
// signed, of VKey's log, and for each record in order an entry whose
// digest is the record's SHA-256 and whose leaf (the record's RFC 9162
// leaf hash) its inclusion proof proves into that checkpoint's tree, at
// consecutive indexes. Errors: ErrServiceURL; a *Refusal when the service
// refused the submission (its Status, RetryAfter, Exit, Rule and Hints;
// nothing was appended); an error wrapping ErrAnswer when the answer does
// not verify; a *ledger.TrustError (rules.VKeyMismatch) when the
// service's log is not signed by VKey, found before anything is sent;
// the transport's.
func (c *Client) Append(ctx context.Context, records [][]byte) (*Appended, error) {
	u, err := c.addURL()
	if err != nil {
		return nil, err
	}
	if c.VKey == nil {
		return nil, errors.New("logservice.Client: VKey is required: an answer is verified under the log's key")
	}
	hc := c.HTTP
	if hc == nil {
		hc = defaultHTTP
	}
	if err := c.checkKey(ctx, hc, u); err != nil {
		return nil, err
	}
	body, err := cbor.Marshal(records)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", ContentTypeBatch)
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, fmt.Errorf("reading the service's answer: %w", err)
	}
	if len(data) > maxAnswer {
		return nil, fmt.Errorf("%w: an answer over %d bytes", ErrAnswer, maxAnswer)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, refusalOf(resp, data)
	}
	var added Added
	if err := json.Unmarshal(data, &added); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrAnswer, err)
	}
	return verifyAdded(&added, records, c.VKey, &c.verified)
}

// checkKey, before the first submission, reads the service's checkpoint
// (its read API) and refuses a VKey that did not sign it
// (ledger.OpenTrusted: a *ledger.TrustError, rules.VKeyMismatch), so
// that a wrong key is found before anything is appended, not after. A
// checkpoint it cannot read is left to the submission's answer, which is
// verified whatever this found.
func (c *Client) checkKey(ctx context.Context, hc *http.Client, addURL string) error {
	if c.keyOK.Load() {
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(addURL, AddPath)+"/checkpoint", nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	signed, err := io.ReadAll(io.LimitReader(resp.Body, formats.MaxCheckpointSize+1))
	if err != nil || resp.StatusCode != http.StatusOK || len(signed) > formats.MaxCheckpointSize {
		return nil
	}
	if _, err := ledger.OpenTrusted(signed, c.VKey, "authority"); errors.Is(err, ledger.ErrVKeyMismatch) {
		return err
	} else if err == nil {
		c.keyOK.Store(true)
	}
	return nil
}

// addURL checks the service URL and returns its AddPath.
func (c *Client) addURL() (string, error) {
	u, err := url.Parse(c.URL)
	switch {
	case err != nil:
		return "", fmt.Errorf("%w: %v", ErrServiceURL, err)
	case u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return "", fmt.Errorf("%w: %s: a host, and no user, query or fragment", ErrServiceURL, c.URL)
	case u.Scheme == "https":
	case u.Scheme == "http" && endpoint.IsLoopbackHost(u.Hostname()):
	case u.Scheme == "http":
		return "", fmt.Errorf("%w: %s: plain http:// only on loopback (127.0.0.1, ::1, localhost); use https://", ErrServiceURL, c.URL)
	default:
		return "", fmt.Errorf("%w: %s: the scheme must be https://, or http:// on loopback", ErrServiceURL, c.URL)
	}
	return strings.TrimSuffix(u.String(), "/") + AddPath, nil
}

// refusalOf reads a refusal: the service's JSON (a 4xx or 5xx status,
// an exit code of 1 to 4), or what answered in its place, which is judged
// by its status alone: the line of text its bounds answer with before a
// submission reaches it (413, 429, 503: nothing appended), a proxy's
// error page (502, 504 and other 5xx: the submission may have reached the
// service, so the records may or may not be appended), a redirect (not
// followed) or any other status (bad input: exit 2).
func refusalOf(resp *http.Response, data []byte) *Refusal {
	r := &Refusal{}
	if err := json.Unmarshal(data, r); err != nil || r.Err == "" || r.Exit < 1 || r.Exit > 4 || resp.StatusCode < 400 {
		r = foreignRefusal(resp, data)
	}
	if r.Hints == nil {
		r.Hints = []string{}
	}
	r.Status = resp.StatusCode
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		r.RetryAfter = s
	}
	return r
}

// foreignRefusal words an answer that is not the service's refusal.
func foreignRefusal(resp *http.Response, data []byte) *Refusal {
	line := strings.TrimSpace(string(bytes.ToValidUTF8(data[:min(len(data), 200)], []byte("?"))))
	if line == "" || strings.HasPrefix(line, "<") {
		line = "(no message)"
	}
	said := "the service answered " + resp.Status + ": " + line
	switch code := resp.StatusCode; {
	case code == http.StatusRequestEntityTooLarge:
		return &Refusal{Err: "nothing appended: " + said, Exit: 2, Hints: []string{"append the records in smaller batches"}}
	case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
		return &Refusal{Err: "nothing appended: " + said, Exit: 4}
	case code >= 300 && code < 400:
		return &Refusal{Err: "nothing appended: " + said + " (to " + resp.Header.Get("Location") + "): writ does not follow redirects", Exit: 2,
			Hints: []string{"give the service's own URL with --to"}}
	case code == http.StatusBadRequest && strings.Contains(line, "HTTPS server"):
		return &Refusal{Err: "nothing appended: " + said, Exit: 2, Hints: []string{"the service speaks HTTPS: give --to https://..."}}
	case code >= 500:
		return &Refusal{Err: "the records may or may not be appended: " + said, Exit: 4,
			Hints: []string{"submit the same records again once the service answers: one it already appended is refused as a duplicate, never appended twice"}}
	}
	return &Refusal{Err: "nothing appended: " + said, Exit: 2}
}

// verifyAdded checks an answer against the records sent (see Append).
func verifyAdded(a *Added, records [][]byte, k *formats.LogKey, cache *checkpointCache) (*Appended, error) {
	cp, err := cache.open([]byte(a.Checkpoint), k)
	if err != nil {
		return nil, fmt.Errorf("%w: its checkpoint: %v", ErrAnswer, err)
	}
	if len(a.Entries) != len(records) {
		return nil, fmt.Errorf("%w: %d entries for %d records", ErrAnswer, len(a.Entries), len(records))
	}
	for i, e := range a.Entries {
		switch {
		case e.Digest != schemas.SHA256Digest(records[i]):
			return nil, fmt.Errorf("%w: entry %d is %s, the record sent is %s", ErrAnswer, e.Index, e.Digest, schemas.SHA256Digest(records[i]))
		case i > 0 && e.Index != a.Entries[0].Index+int64(i):
			return nil, fmt.Errorf("%w: the entries are not consecutive (%d after %d)", ErrAnswer, e.Index, a.Entries[i-1].Index)
		case e.Index < 0 || e.Index >= cp.Size:
			return nil, fmt.Errorf("%w: entry %d is not in the checkpoint's tree of %d entries", ErrAnswer, e.Index, cp.Size)
		}
		// The kind is the record's own, not the answer's word for it.
		env, err := sign.ParseEnvelope(records[i])
		if err != nil || string(env.Kind) != e.Kind {
			return nil, fmt.Errorf("%w: entry %d is said to be a %q record", ErrAnswer, e.Index, humanize.OneLine(e.Kind))
		}
		p := formats.InclusionProof{Index: e.Index, TreeSize: cp.Size, LeafHash: tlog.RecordHash(records[i]), RootHash: cp.Hash, Path: e.InclusionProof}
		if err := p.Verify(); err != nil {
			return nil, fmt.Errorf("%w: entry %d: %v", ErrAnswer, e.Index, err)
		}
	}
	return &Appended{Entries: a.Entries, Checkpoint: cp, Signed: []byte(a.Checkpoint)}, nil
}

// RuleID returns the refusal's rule id (for the CLI's error report).
func (r *Refusal) RuleID() string { return r.Rule }

// defaultHTTP is the client of a Client without one.
var defaultHTTP, _ = HTTPClient("", "")

// HTTPClient returns the HTTP client Client uses by default (a 60 s
// timeout, proxies from the environment, the system's roots, which
// SSL_CERT_FILE may name, no redirect followed), presenting the client certificate in certFile
// with the key in keyFile (PEM) when they are given: for a service that
// takes only clients with a certificate (`--client-ca`). Errors: one of
// the pair without the other; a pair that does not load, naming the
// files.
func HTTPClient(certFile, keyFile string) (*http.Client, error) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	// A control plane submits from many goroutines at once: keep their
	// connections (net/http keeps 2 idle per host by default, and opens a
	// new connection for every other request).
	t.MaxIdleConnsPerHost = 256
	// A redirect is answered, not followed: records go only where --to
	// says, under its scheme's rules.
	hc := &http.Client{Timeout: 60 * time.Second, Transport: t,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	switch {
	case certFile == "" && keyFile == "":
		return hc, nil
	case certFile == "" || keyFile == "":
		return nil, errors.New("a client certificate and its key come together")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("client certificate %s, key %s: %w", certFile, keyFile, err)
	}
	t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	return hc, nil
}
