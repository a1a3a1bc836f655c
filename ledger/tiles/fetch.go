package tiles

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Errors a Source returns; the caller tells a source that cannot be read
// (exit 2 in the CLI) from a log that fails verification.
var (
	// ErrFetch wraps every failure to read a file from a source: a
	// network error, a status other than 200, a stalled response (no
	// complete answer within the source's timeout), a redirect to
	// another host, or a body larger than the file can be.
	ErrFetch = errors.New("reading the published log failed")
	// ErrNotPublished: the source answered 404 or has no such file.
	ErrNotPublished = errors.New("not published")
	// ErrSourceURL: the source is neither an https:// URL, an http://
	// URL on a loopback address, nor a directory.
	ErrSourceURL = errors.New("unusable source")
)

// Source reads the files of a published log (c2sp.org/tlog-tiles) by
// path (Tile.Path, or "checkpoint"). Get returns at most max bytes: a
// file that is larger is an error wrapping ErrFetch, never a truncated
// result. Implementations are safe for concurrent use.
type Source interface {
	Get(ctx context.Context, path string, max int64) ([]byte, error)
	// String names the source in messages.
	String() string
}

// DefaultTimeout is how long one request may take, from dialling to the
// last byte of the body, in seconds: a server that stalls is cut off.
const DefaultTimeout = 30 * time.Second

// OpenSource returns the Source for from: a directory (a path, or a
// file:// URL), an https:// URL, or an http:// URL whose host is a
// loopback address (127.0.0.0/8, ::1 or "localhost"): plain HTTP to any
// other host would let the network choose what a replica sees next and
// when. timeout bounds each request (0: DefaultTimeout). Errors wrap
// ErrSourceURL.
func OpenSource(from string, timeout time.Duration) (Source, error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if !strings.Contains(from, "://") {
		fi, err := os.Stat(from)
		if err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("%w: %s is not a directory, nor an http(s):// URL", ErrSourceURL, from)
		}
		return dirSource(from), nil
	}
	u, err := url.Parse(from)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSourceURL, err)
	}
	switch {
	case u.Scheme == "file" && u.Host == "":
		return OpenSource(u.Path, timeout)
	case u.Scheme == "https" && u.Host != "":
	case u.Scheme == "http" && isLoopback(u.Hostname()):
	case u.Scheme == "http":
		return nil, fmt.Errorf("%w: %s: plain http:// only on loopback (127.0.0.1, ::1, localhost); use https://", ErrSourceURL, from)
	default:
		return nil, fmt.Errorf("%w: %s: the scheme must be https://, or http:// on loopback", ErrSourceURL, from)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%w: %s: no user, query or fragment", ErrSourceURL, from)
	}
	base := *u
	base.Path = strings.TrimSuffix(u.Path, "/") + "/"
	s := &httpSource{base: &base}
	s.client = &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: timeout,
			MaxIdleConnsPerHost:   8,
			IdleConnTimeout:       90 * time.Second,
		},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.URL.Scheme != base.Scheme || req.URL.Host != base.Host {
				return fmt.Errorf("%w: redirected from %s to another origin, %s://%s: not followed", ErrFetch, via[0].URL, req.URL.Scheme, req.URL.Host)
			}
			if len(via) >= 3 {
				return fmt.Errorf("%w: more than 3 redirects", ErrFetch)
			}
			return nil
		},
	}
	return s, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

type httpSource struct {
	base   *url.URL
	client *http.Client
}

func (s *httpSource) String() string { return s.base.String() }

func (s *httpSource) Get(ctx context.Context, path string, max int64) ([]byte, error) {
	u := s.base.JoinPath(path)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFetch, err)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) && ue.Timeout() {
			return nil, fmt.Errorf("%w: %s: no complete answer within %s (the server stalled): %w", ErrFetch, u, s.client.Timeout, err)
		}
		return nil, fmt.Errorf("%w: %s: %w", ErrFetch, u, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("%w: %s: %w (404)", ErrFetch, u, ErrNotPublished)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("%w: %s: HTTP status %s", ErrFetch, u, resp.Status)
	case resp.ContentLength > max:
		return nil, fmt.Errorf("%w: %s: %d bytes announced, at most %d expected", ErrFetch, u, resp.ContentLength, max)
	}
	return readBounded(resp.Body, max, u.String(), s.client.Timeout)
}

// readBounded reads all of r, refusing more than max bytes.
func readBounded(r io.Reader, max int64, name string, timeout time.Duration) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		if os.IsTimeout(err) || errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w: %s: the body did not arrive within %s (the server stalled): %w", ErrFetch, name, timeout, err)
		}
		return nil, fmt.Errorf("%w: %s: %w", ErrFetch, name, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%w: %s: more than %d bytes, at most %d expected: cut off", ErrFetch, name, max, max)
	}
	return b, nil
}

type dirSource string

func (d dirSource) String() string { return string(d) }

func (d dirSource) Get(_ context.Context, path string, max int64) ([]byte, error) {
	if _, err := ParsePath(path); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFetch, err)
	}
	name := filepath.Join(string(d), filepath.FromSlash(path))
	b, err := ReadFile(name, max)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s: %w", ErrFetch, name, ErrNotPublished)
	} else if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFetch, err)
	}
	return b, nil
}

// ReadFile reads a regular file of at most max bytes, the way a published
// file is read from a directory: a FIFO, a device or a larger file is an
// error (a FIFO is opened with O_NONBLOCK and refused at once, never
// waited on), never a hang or an unbounded read. A missing file wraps
// os.ErrNotExist.
func ReadFile(name string, max int64) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s: %d bytes, at most %d expected", name, fi.Size(), max)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(b)) > max {
		err = fmt.Errorf("%s: more than %d bytes (it grew while read)", name, max)
	}
	return b, err
}
