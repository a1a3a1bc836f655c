package publish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/tiles"
)

// ServeOptions tunes a Server. Zero values take the defaults.
type ServeOptions struct {
	// MaxInFlight bounds the requests reading the log at once (default
	// 16); the others wait, or get 503 when their client gives up. A
	// response is written after its slot is freed.
	MaxInFlight int
	// Lease is how long one read-only open of the log serves requests
	// before it is closed, so that a writer waiting for the log gets it
	// (default 1 s).
	Lease time.Duration
	// MaxAnswerBytes bounds the bytes that answers hold in memory, all
	// requests together: bodies read and not yet written to their
	// connections, and gzip compressors at work (default
	// DefaultMaxAnswerBytes, at least MinMaxAnswerBytes). A request that
	// would pass it is answered 503 with Retry-After at once.
	MaxAnswerBytes int64
	// MinWriteRate is the slowest a client may take an answer, in bytes
	// per second over each 64 KiB written (default DefaultMinWriteRate);
	// a slower one is cut off and what its answer held is freed.
	MinWriteRate int64
	// WriteTimeout bounds the writing of one answer from the start of its
	// request (default 60 s): set it to the HTTP server's.
	WriteTimeout time.Duration
	// RetryAfter is the Retry-After of a 503 past MaxAnswerBytes, rounded
	// up to whole seconds (default 1 s).
	RetryAfter time.Duration
	// Refused, if not nil, is called for each request refused past
	// MaxAnswerBytes.
	Refused func()
	// Metrics, if not nil, counts what the server does.
	Metrics ServeMetrics
	// Keep: the log open returns is a writer's own, open for the
	// writer's life (a writer service reading its log as it appends):
	// the server opens it once, never closes it, and Lease is unused.
	Keep bool
	// Checkpoint, when set, says which signed checkpoint is served and
	// bounds the tiles served (a witnessed writer's last checkpoint its
	// policy's quorum cosigned); it returns the bytes served and their
	// body, verified. Nil: the log's latest, with the cosignatures stored
	// for it (ledger.Log.CosignedCheckpoint).
	Checkpoint func(*ledger.Log) ([]byte, formats.Checkpoint, error)
}

// Defaults and bounds of ServeOptions.
const (
	// DefaultMaxAnswerBytes is MaxAnswerBytes's default, in bytes.
	DefaultMaxAnswerBytes = 24 << 20
	// MinMaxAnswerBytes is the least MaxAnswerBytes, in bytes: the
	// largest answer (an entry bundle of tiles.MaxBundleSize bytes,
	// gzipped) fits in it.
	MinMaxAnswerBytes = 20 << 20
	// DefaultMinWriteRate is MinWriteRate's default, in bytes per second.
	DefaultMinWriteRate = 16 << 10
)

// ServeMetrics receives what a Server does, for /metrics: the tree size
// and signed time of each checkpoint it serves, and each request's kind
// ("checkpoint", "tile", "entries", "history", "other"), HTTP status
// and body size in bytes.
type ServeMetrics interface {
	Checkpoint(size int64, signed time.Time)
	Request(kind string, status int, bytes int)
}

// Server serves a log's c2sp.org/tlog-tiles read API straight from its
// Badger directory: GET /checkpoint, /tile/<L>/<N>[.p/<W>],
// /tile/entries/<N>[.p/<W>] and writ's /writ/history/<N>[.p/<W>], the
// same bytes Publish writes. Tiles and bundles are immutable
// (Cache-Control: public, max-age=31536000, immutable), the checkpoint is
// not cached (no-cache); bundles are gzipped for clients that accept it.
// The log is opened read-only for at most Lease at a time, so a writer is
// never locked out for long; a tile past the checkpoint the server last
// read is 404 until the next read sees it. An answer is read whole before
// it is written, so the bytes all answers hold are bounded together
// (MaxAnswerBytes; past it, 503 with Retry-After) and a client that reads
// slower than MinWriteRate is cut off.
type Server struct {
	open func() (*ledger.Log, error)
	opts ServeOptions
	sem  chan struct{}
	// budget counts the bytes answers hold (opts.MaxAnswerBytes).
	budget *byteBudget

	mu      sync.Mutex
	log     *ledger.Log
	users   int
	opened  time.Time // when the current lease began
	closed  time.Time // when the last lease ended
	retired bool
	timer   *time.Timer // closes an idle lease when it expires
	idle    *sync.Cond
}

// NewServer returns a Server reading the log that open opens (for
// instance OpenReadOnly of a log directory, or a ledger's decision log).
// A field of opts at zero or below takes its default; MaxAnswerBytes
// under MinMaxAnswerBytes is taken as MinMaxAnswerBytes.
func NewServer(open func() (*ledger.Log, error), opts ServeOptions) *Server {
	opts.MaxInFlight = orDefault(opts.MaxInFlight, 16)
	opts.Lease = orDefault(opts.Lease, time.Second)
	opts.MaxAnswerBytes = max(orDefault(opts.MaxAnswerBytes, DefaultMaxAnswerBytes), MinMaxAnswerBytes)
	opts.MinWriteRate = orDefault(opts.MinWriteRate, DefaultMinWriteRate)
	opts.WriteTimeout = orDefault(opts.WriteTimeout, 60*time.Second)
	opts.RetryAfter = orDefault(opts.RetryAfter, time.Second)
	s := &Server{open: open, opts: opts, sem: make(chan struct{}, opts.MaxInFlight),
		budget: &byteBudget{limit: opts.MaxAnswerBytes}}
	s.idle = sync.NewCond(&s.mu)
	return s
}

// orDefault is v, or def when v is zero or below.
func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// acquire returns the open log, opening it if needed; release must
// follow. A lease older than opts.Lease takes no new users: it is closed
// when its last user is done (at once if it has none), and the next open
// waits a moment (leaseGap) so that a writer waiting for the log gets it.
func (s *Server) acquire(ctx context.Context) (*ledger.Log, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.log != nil && s.expired() {
		if s.users == 0 {
			s.closeLocked()
			break
		}
		s.retired = true
		s.idle.Wait()
	}
	if s.log != nil {
		s.users++
		return s.log, nil
	}
	for pause := 10 * time.Millisecond; ; pause = min(2*pause, 500*time.Millisecond) {
		if gap := leaseGap - time.Since(s.closed); gap > 0 {
			s.mu.Unlock()
			time.Sleep(gap)
			s.mu.Lock()
			if s.log != nil { // another request opened it meanwhile
				s.users++
				return s.log, nil
			}
		}
		l, err := s.open()
		if err == nil {
			s.log, s.users, s.opened, s.retired = l, 1, time.Now(), false
			return l, nil
		}
		if !errors.Is(err, ledger.ErrLocked) {
			return nil, err
		}
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			s.mu.Lock()
			return nil, err
		case <-time.After(pause):
		}
		s.mu.Lock()
		if s.log != nil {
			s.users++
			return s.log, nil
		}
	}
}

// leaseGap is how long the log stays closed between two leases: a
// writer waiting for it (retrying every 500 ms at most) gets it.
const leaseGap = 250 * time.Millisecond

func (s *Server) expired() bool {
	return !s.opts.Keep && (s.retired || time.Since(s.opened) > s.opts.Lease)
}

// release ends one use of the lease. The last user of an expired lease
// closes it; an idle lease is closed when it expires, so that an idle
// server never keeps a writer out.
func (s *Server) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users--
	if s.users > 0 || s.log == nil || s.opts.Keep {
		return
	}
	if s.expired() {
		s.closeLocked()
		return
	}
	if s.timer == nil {
		s.timer = time.AfterFunc(time.Until(s.opened.Add(s.opts.Lease))+time.Millisecond, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.timer = nil
			if s.log != nil && s.users == 0 && s.expired() {
				s.closeLocked()
			}
		})
	}
}

func (s *Server) closeLocked() {
	s.log.Close()
	s.log, s.retired, s.closed = nil, false, time.Now()
	s.idle.Broadcast()
}

// Close closes the log if a lease holds it open.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	if s.log != nil && s.users == 0 && !s.opts.Keep {
		err := s.log.Close()
		s.log = nil
		return err
	}
	return nil
}

var kindNames = map[tiles.Kind]string{tiles.KindCheckpoint: "checkpoint", tiles.KindHashTile: "tile", tiles.KindEntries: "entries", tiles.KindHistory: "history"}

// ServeHTTP answers one request of the read API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	status, kind, n := s.serve(w, r)
	if s.opts.Metrics != nil {
		s.opts.Metrics.Request(kind, status, n)
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) (int, string, int) {
	start := time.Now()
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return http.StatusMethodNotAllowed, "other", 0
	}
	t, err := tiles.ParsePath(strings.TrimPrefix(r.URL.Path, "/"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return http.StatusNotFound, "other", 0
	}
	kind := kindNames[t.Kind]
	body, status, err := s.readBody(r, t)
	if err == nil && (t.Kind == tiles.KindEntries || t.Kind == tiles.KindHistory) && acceptsGzip(r) {
		if body, err = body.gzip(); err != nil && !errors.Is(err, errBudget) {
			status, err = http.StatusInternalServerError, fmt.Errorf("gzip: %w", err)
		}
	}
	if errors.Is(err, errBudget) {
		if s.opts.Refused != nil {
			s.opts.Refused()
		}
		w.Header().Set("Retry-After", strconv.FormatInt(retrySeconds(s.opts.RetryAfter), 10))
		http.Error(w, budgetRefusal(s.budget.limit, s.opts.RetryAfter), http.StatusServiceUnavailable)
		return http.StatusServiceUnavailable, kind, 0
	} else if err != nil {
		http.Error(w, err.Error(), status)
		return status, kind, 0
	}
	s.setHeaders(w.Header(), t, body, acceptsGzip(r))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		body.writeTo(w, s.opts.MinWriteRate, start.Add(s.opts.WriteTimeout))
	}
	body.drop()
	return http.StatusOK, kind, body.size
}

// readBody reads tile t into a body counted against the budget, under a
// slot of s.sem and a lease of the log. On an error it returns the
// status to answer (errBudget: 503 past the budget), the body dropped.
func (s *Server) readBody(r *http.Request, t tiles.Tile) (*answerBody, int, error) {
	// The slot covers reading the log only, not writing the answer: a
	// client that reads slowly holds its connection and its answer's
	// bytes of the budget, never a slot.
	select {
	case s.sem <- struct{}{}:
	case <-r.Context().Done():
		return nil, http.StatusServiceUnavailable, errors.New("busy")
	}
	defer func() { <-s.sem }()
	l, err := s.acquire(r.Context())
	if err != nil {
		return nil, http.StatusServiceUnavailable, fmt.Errorf("the log cannot be read now: %w", err)
	}
	body := newAnswerBody(s.budget)
	err = s.read(l, t, body)
	s.release()
	switch {
	case err == nil:
		return body, http.StatusOK, nil
	case errors.Is(err, errBudget):
		body.drop()
		return nil, http.StatusServiceUnavailable, err
	case errors.Is(err, ledger.ErrNotFound):
		body.drop()
		return nil, http.StatusNotFound, err
	}
	body.drop()
	return nil, http.StatusInternalServerError, fmt.Errorf("the log does not verify: %w", err)
}

// setHeaders sets the headers of a 200 answer of tile t with body.
func (s *Server) setHeaders(h http.Header, t tiles.Tile, body *answerBody, gzipped bool) {
	if t.Kind == tiles.KindCheckpoint {
		h.Set("Content-Type", "text/plain; charset=utf-8")
		h.Set("Cache-Control", "no-cache")
	} else {
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	}
	if gzipped && (t.Kind == tiles.KindEntries || t.Kind == tiles.KindHistory) {
		h.Set("Content-Encoding", "gzip")
		h.Set("Vary", "Accept-Encoding")
	}
	h.Set("Content-Length", strconv.Itoa(body.size))
}

// read writes the file's bytes to body: the latest signed checkpoint
// (verified under the log's key), or a tile of the tree it signs.
func (s *Server) read(l *ledger.Log, t tiles.Tile, body *answerBody) error {
	served := latest
	if s.opts.Checkpoint != nil {
		served = s.opts.Checkpoint
	}
	signed, cp, err := served(l)
	if err != nil {
		return err
	}
	if s.opts.Metrics != nil {
		if at, err := formats.CheckpointTime(signed, l.Key()); err == nil {
			s.opts.Metrics.Checkpoint(cp.Size, at)
		}
	}
	if t.Kind == tiles.KindCheckpoint {
		return body.adopt(signed)
	}
	return l.WriteTile(t, cp.Size, body)
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}
