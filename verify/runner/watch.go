package runner

import (
	"context"
	"time"

	"github.com/writ-ledger/writ/ledger/replica"
)

// WatchHooks are what Watch tells its caller; every hook may be nil.
type WatchHooks struct {
	// Synced receives a sync's result when it brought a signed checkpoint
	// other than the last one received (the first sync's always); an
	// error from it ends Watch with that error.
	Synced func(replica.Synced) error
	// Failed receives a failed sync's error and the wait before the next
	// try.
	Failed func(err error, next time.Duration)
	// After runs after every sync, failed or not: the witnesses' views
	// of the log are in the Replica's Views then.
	After func()
}

// Watch syncs the replica now and then every period every (> 0) until
// ctx is done, when it returns nil. After a failure it waits twice as
// long as the last time, up to 16 periods or a minute, whichever is
// longer; a sync that succeeds brings the wait back to every. Watch is
// not safe for concurrent use with the Replica's other methods.
func (r *Replica) Watch(ctx context.Context, every time.Duration, h WatchHooks) error {
	var last []byte
	for wait := every; ; {
		res, err := r.Sync(ctx)
		if h.After != nil {
			h.After()
		}
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			wait = min(2*wait, max(16*every, time.Minute))
			if h.Failed != nil {
				h.Failed(err, wait)
			}
		default:
			wait = every
			if string(res.Signed) != string(last) {
				if h.Synced != nil {
					if err := h.Synced(res); err != nil {
						return err
					}
				}
				last = res.Signed
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}
