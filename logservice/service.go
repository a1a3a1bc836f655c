package logservice

import (
	"fmt"
	"math"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/writ-ledger/writ/internal/httpbound"
	"github.com/writ-ledger/writ/internal/logmetrics"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/publish"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify"
)

// Options are a Service's bounds on what one client may submit. A field
// at zero takes its default; New refuses one out of range.
type Options struct {
	// MaxRecords bounds the records of one submission
	// (DefaultMaxRecords, at most 4096, ledger.MaxBatchEntries).
	MaxRecords int
	// MaxBodyBytes bounds a submission's body, in bytes
	// (DefaultMaxBodyBytes, at least one record of
	// schemas.MaxRecordSize, at most ledger.MaxBatchBytes).
	MaxBodyBytes int64
	// Rate is how many records per second one client (a remote IP
	// address) may submit on average, and Burst how many at once
	// (DefaultRate, DefaultBurst; Burst at least MaxRecords). Past them a
	// submission is refused 429 with the Retry-After that would let it in.
	Rate  float64
	Burst int
	// MaxClients bounds the clients whose rate is kept at once
	// (DefaultMaxClients); a new client past it is refused 503 while every
	// known one submitted lately.
	MaxClients int
	// MaxAnswerBytes is the read API's answer budget, in bytes (publish:
	// ServeOptions.MaxAnswerBytes).
	MaxAnswerBytes int64
	// ClientIPHeader, when set, names the header a reverse proxy on this
	// host sets to its client's address (X-Real-IP, with nginx's
	// proxy_set_header, which replaces what the client sent): a
	// submission from a loopback peer is rate-limited by that address,
	// when it is one, instead of the proxy's. From any other peer the
	// header is ignored.
	ClientIPHeader string
	// Now is the clock of the rate limits (nil: time.Now).
	Now func() time.Time
	// Policy, when set, is the witness policy (c2sp.org/tlog-policy):
	// after each commit the service gathers its witnesses' cosignatures
	// for the latest checkpoint (each witness within WitnessTimeout,
	// default 10 s), and the read API serves the last checkpoint its
	// quorum cosigned. Warn hears of a collection that failed (it is
	// retried, backing off up to 30 s).
	Policy         *formats.Policy
	WitnessTimeout time.Duration
	Warn           func(format string, args ...any)
}

// Defaults of Options.
const (
	DefaultMaxRecords   = 64
	DefaultMaxBodyBytes = 1 << 20
	DefaultRate         = 2000
	DefaultBurst        = 4000
	DefaultMaxClients   = 4096
)

// withDefaults returns o with its defaults, or an error naming the flag
// (--max-records, ...) and the rule.
func (o Options) withDefaults() (Options, error) {
	o.MaxRecords = orDefault(o.MaxRecords, DefaultMaxRecords)
	o.MaxBodyBytes = orDefault(o.MaxBodyBytes, DefaultMaxBodyBytes)
	o.Rate = orDefault(o.Rate, DefaultRate)
	o.Burst = orDefault(o.Burst, max(DefaultBurst, o.MaxRecords))
	o.MaxClients = orDefault(o.MaxClients, DefaultMaxClients)
	if o.WitnessTimeout == 0 {
		o.WitnessTimeout = 10 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Warn == nil {
		o.Warn = func(string, ...any) {}
	}
	switch {
	case o.MaxRecords < 1 || o.MaxRecords > ledger.MaxBatchEntries:
		return o, fmt.Errorf("--max-records %d: between 1 and %d", o.MaxRecords, ledger.MaxBatchEntries)
	case o.MaxBodyBytes < schemas.MaxRecordSize+16 || o.MaxBodyBytes > ledger.MaxBatchBytes:
		return o, fmt.Errorf("--max-body-bytes %d: between %d (one record) and %d (one batch)", o.MaxBodyBytes, schemas.MaxRecordSize+16, ledger.MaxBatchBytes)
	case !(o.Rate > 0) || math.IsInf(o.Rate, 0):
		return o, fmt.Errorf("--rate %g: a number of records per second above 0 (0 takes the default, %d)", o.Rate, DefaultRate)
	case o.Burst < o.MaxRecords:
		return o, fmt.Errorf("--burst %d: at least --max-records (%d)", o.Burst, o.MaxRecords)
	case o.MaxClients < 1:
		return o, fmt.Errorf("--max-clients %d: at least 1", o.MaxClients)
	}
	return o, nil
}

func orDefault[T int | int64 | float64 | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// Service is the writer service of one authority log (`writ ledger serve
// --write`): it holds the log open for writing with its verified
// authority state, takes submissions at AddPath, checks every record's
// signatures and authority exactly as `writ ledger append` does
// (verify.Authority.Append: all or none, in order), commits concurrent
// submitters' records together (the log's group commit: one fsync and
// one signed checkpoint per batch) and answers each, once its records are
// durable, with their indexes, the signed checkpoint that includes them
// and their inclusion proofs (Added), or with the CLI's refusal (Refusal).
// The same handler serves the log's c2sp.org/tlog-tiles read API (so
// runners sync from it as from a publication), /metrics, /healthz and
// /readyz. Until Load has loaded the state, submissions and the read API
// are answered 503 with Retry-After, and /readyz says why.
type Service struct {
	log     *ledger.Log
	opts    Options
	auth    atomic.Pointer[verify.Authority]
	failed  atomic.Pointer[string] // why Load failed
	read    *publish.Server
	metrics *logmetrics.Metrics
	subs    *submissionMetrics
	limit   *limiter
	mux     *http.ServeMux
	witness *witnesser // nil without a policy
}

// New returns the service of l, an authority log open for writing with
// its checkpoint key (ledgerdir.Dir.OpenAuthorityKeyed), bounded by opts.
// The caller serves it (behind an httpbound.Server, whose request body
// limit must be opts.MaxBodyBytes), calls Load, and closes l after
// Close. Errors: an option out of range, naming its flag.
func New(l *ledger.Log, opts Options) (*Service, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Service{log: l, opts: opts, metrics: logmetrics.New(l.Origin()), subs: newSubmissionMetrics(l.Origin()),
		limit: newLimiter(opts.Rate, opts.Burst, opts.MaxClients)}
	s.metrics.Register(s.subs.collectors()...)
	var served func(*ledger.Log) ([]byte, formats.Checkpoint, error)
	if opts.Policy != nil {
		if err := opts.Policy.CheckLog(l.Key()); err != nil {
			return nil, fmt.Errorf("--policy: %w", err)
		}
		s.witness = newWitnesser(l, opts.Policy, opts.WitnessTimeout, opts.Warn)
		s.metrics.Register(s.witness.size, s.witness.collections)
		served = s.witness.checkpoint
	}
	s.read = publish.NewServer(func() (*ledger.Log, error) { return l, nil }, publish.ServeOptions{Keep: true, Checkpoint: served,
		Metrics: s.metrics, MaxAnswerBytes: opts.MaxAnswerBytes, WriteTimeout: httpbound.DefaultWriteTimeout,
		RetryAfter: httpbound.DefaultRetryAfter, Refused: func() { s.metrics.Refused(logmetrics.ReasonMaxAnswer) }})
	s.mux = http.NewServeMux()
	s.mux.HandleFunc(AddPath, s.submit)
	s.mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { text(w, http.StatusOK, "ok") })
	s.mux.HandleFunc("/readyz", s.readyz)
	s.mux.Handle("/metrics", s.metrics.Handler())
	s.mux.HandleFunc("/", s.readAPI)
	return s, nil
}

// Options returns the service's options with their defaults.
func (s *Service) Options() Options { return s.opts }

// Load verifies the log and loads its authority state
// (verify.LoadAuthority: the persisted state extended by what is new, or
// a full replay when it cannot be used), then takes submissions. It
// returns the state (Authority.ReplayNote says whether it was replayed)
// or LoadAuthority's error, which /readyz then reports.
func (s *Service) Load() (*verify.Authority, error) {
	a, err := verify.LoadAuthority(s.log, nil)
	if err != nil {
		why := err.Error()
		s.failed.Store(&why)
		return nil, err
	}
	a.OnCommit = func(n int) { s.subs.commits.Observe(float64(n)) }
	s.metrics.Checkpoint(a.Checkpoint.Size, time.Now())
	s.auth.Store(a)
	if s.witness != nil {
		s.witness.start()
	}
	return a, nil
}

// ServeHTTP answers a submission, the read API, /metrics, /healthz or
// /readyz.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Refused counts a request the server's bounds refused (for
// serving.HTTP.Refused).
func (s *Service) Refused(reason httpbound.Reason) { s.metrics.Refused(reason) }

// Close stops gathering cosignatures and releases the read API; the
// caller closes the log after it.
func (s *Service) Close() error {
	if s.witness != nil {
		s.witness.stop()
	}
	return s.read.Close()
}

// readyz says whether the service takes submissions: 200 once the state
// is loaded, else 503 with why.
func (s *Service) readyz(w http.ResponseWriter, _ *http.Request) {
	switch a := s.auth.Load(); {
	case a != nil:
		text(w, http.StatusOK, fmt.Sprintf("ready: %s, %d entries", s.log.Origin(), s.log.Size()))
	case s.failed.Load() != nil:
		text(w, http.StatusServiceUnavailable, "not ready: the authority log does not verify: "+*s.failed.Load())
	default:
		w.Header().Set("Retry-After", "1")
		text(w, http.StatusServiceUnavailable, "not ready: loading the authority state")
	}
}

// readAPI serves the tlog-tiles read API once the state is loaded (the
// log then verified).
func (s *Service) readAPI(w http.ResponseWriter, r *http.Request) {
	if s.auth.Load() == nil {
		w.Header().Set("Retry-After", "1")
		text(w, http.StatusServiceUnavailable, "not ready: loading the authority state")
		return
	}
	s.read.ServeHTTP(w, r)
}

// text answers status with one line of text.
func text(w http.ResponseWriter, status int, line string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	fmt.Fprintln(w, line)
}
