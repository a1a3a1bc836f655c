package logservice

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/publish"
	"github.com/writ-ledger/writ/ledger/witness"
)

// witnessBackoff bounds the wait between two collections that failed
// (the first waits a second, each next twice as long).
const witnessBackoff = 30 * time.Second

// witnesser gathers the policy's witnesses' cosignatures
// (c2sp.org/tlog-witness, publish.CollectCosignatures) for the log's
// latest checkpoint after each commit, one collection at a time: the
// commits made during one are witnessed together by the next. The read
// API serves the last checkpoint the policy's quorum cosigned (served),
// never a newer one before its witnesses did.
type witnesser struct {
	log     *ledger.Log
	policy  *formats.Policy
	timeout time.Duration
	client  *witness.Client
	warn    func(format string, args ...any)
	poke    chan struct{}
	served  atomic.Pointer[witnessed]
	cancel  context.CancelFunc
	done    chan struct{}

	size        prometheus.Gauge
	collections *prometheus.CounterVec
}

// witnessed is a checkpoint with the quorum's cosignatures, as served.
type witnessed struct {
	signed []byte
	cp     formats.Checkpoint
}

func newWitnesser(l *ledger.Log, p *formats.Policy, timeout time.Duration, warn func(string, ...any)) *witnesser {
	labels := prometheus.Labels{"origin": l.Origin()}
	return &witnesser{log: l, policy: p, timeout: timeout, client: witness.NewClient(timeout), warn: warn,
		poke: make(chan struct{}, 1), done: make(chan struct{}),
		size: prometheus.NewGauge(prometheus.GaugeOpts{Name: "writ_log_witnessed_tree_size",
			Help: "Entries in the tree of the last checkpoint the witness policy's quorum cosigned (the one served).", ConstLabels: labels}),
		collections: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "writ_log_witness_collections_total",
			Help: "Collections of the witnesses' cosignatures, by outcome (cosigned: the quorum met; moved: a commit signed a newer checkpoint meanwhile; failed).", ConstLabels: labels}, []string{"outcome"}),
	}
}

// start runs the collections until stop.
func (w *witnesser) start() {
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	w.poke <- struct{}{} // the checkpoint the log holds now
	go w.run(ctx)
}

// committed says a commit signed a new checkpoint.
func (w *witnesser) committed() {
	select {
	case w.poke <- struct{}{}:
	default: // one is pending: it will collect for the latest
	}
}

// stop ends the collections and waits for the one in flight.
func (w *witnesser) stop() {
	if w.cancel != nil {
		w.cancel()
		<-w.done
	}
}

func (w *witnesser) run(ctx context.Context) {
	defer close(w.done)
	backoff := time.Second
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.poke:
		}
		for ctx.Err() == nil {
			res, err := publish.CollectCosignatures(ctx, w.log, w.policy, w.client, w.timeout, time.Now)
			switch {
			case errors.Is(err, ledger.ErrHeadMoved) && res.Signed != nil:
				// What the quorum cosigned is served, though a commit
				// moved the head meanwhile: under steady submissions
				// most collections end this way. Without the quorum it
				// is a failure, and waits as one.
				if _, err = w.policy.Check(res.Signed, w.log.Key(), time.Now()); err == nil {
					w.collections.WithLabelValues("moved").Inc()
					w.serve(res.Signed, res.Checkpoint)
					backoff = time.Second
					continue
				}
				fallthrough
			case err != nil:
				w.collections.WithLabelValues("failed").Inc()
				w.warn("the checkpoint of size %d was not witnessed (retry in %s): %v%s", res.Checkpoint.Size, backoff, res.Refusal(err), witnessErrors(res))
				select {
				case <-ctx.Done():
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, witnessBackoff)
				continue
			}
			w.collections.WithLabelValues("cosigned").Inc()
			w.serve(res.Signed, res.Checkpoint)
			backoff = time.Second
			if res.Checkpoint.Size >= w.log.Size() {
				break // up to date: wait for the next commit
			}
		}
	}
}

// serve makes signed (cp, cosigned by the quorum) the checkpoint served,
// unless a larger one is.
func (w *witnesser) serve(signed []byte, cp formats.Checkpoint) {
	if s := w.served.Load(); s != nil && s.cp.Size > cp.Size {
		return
	}
	w.served.Store(&witnessed{signed: signed, cp: cp})
	w.size.Set(float64(cp.Size))
}

// checkpoint is the read API's checkpoint (publish.ServeOptions.Checkpoint):
// the last one the quorum cosigned; before the first, the log's latest
// with whatever cosignatures it has (a runner's policy refuses it).
func (w *witnesser) checkpoint(l *ledger.Log) ([]byte, formats.Checkpoint, error) {
	if s := w.served.Load(); s != nil {
		return s.signed, s.cp, nil
	}
	signed, err := l.CosignedCheckpoint()
	if err != nil {
		return nil, formats.Checkpoint{}, err
	}
	cp, err := formats.OpenCheckpoint(signed, l.Key())
	return signed, cp, err
}

// witnessErrors lists why each witness that did not cosign failed.
func witnessErrors(res publish.Collected) string {
	var out string
	for _, r := range res.Witnesses {
		if r.Err != nil {
			out += "; " + r.Name + ": " + r.Err.Error()
		}
	}
	return out
}
