package runner

import (
	"fmt"
	"time"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/progress"
	"github.com/writ-ledger/writ/ledger/publish"
	"github.com/writ-ledger/writ/verify"
)

// PublishOptions say how PublishVerified publishes a log.
type PublishOptions struct {
	// Authority says the log is an authority log: it is replayed
	// (verify.LoadAuthority), not only verified, as an append judges it.
	Authority bool
	// Policy, when set, is the witness policy (c2sp.org/tlog-policy) the
	// checkpoint published must meet: without its quorum of cosignatures
	// nothing is published (formats.ErrQuorum; formats.ErrPolicyLog for
	// a policy of another log).
	Policy *formats.Policy
	// Progress, when set, is told the tiles written.
	Progress progress.Func
	// Verified, when set, runs once the log verified, before anything is
	// written.
	Verified func()
	// Unwitnessed, when set and Policy is not, is told (before anything
	// is written) when the checkpoint about to be published carries
	// fewer signature lines (has) than the one already published at to
	// (had): a witnessed publication replaced by an unwitnessed one stops
	// every runner that syncs under a witness policy until cosignatures
	// are collected.
	Unwitnessed func(had, has int)
}

// Published is what PublishVerified did.
type Published struct {
	publish.Published
	// Witnessing is what the policy found on the checkpoint (nil without
	// PublishOptions.Policy).
	Witnessing *formats.Witnessing
}

// UnverifiedError is PublishVerified's refusal of a log that does not
// verify (or, an authority log, replay): nothing was published.
type UnverifiedError struct {
	Log string // "authority" or "decisions"
	Err error  // why it does not verify
}

// Error says which log does not verify, and why.
func (e *UnverifiedError) Error() string {
	return fmt.Sprintf("the %s log does not verify, nothing published: %v", e.Log, e.Err)
}

// Unwrap returns Err.
func (e *UnverifiedError) Unwrap() error { return e.Err }

// PublishVerified publishes the log l into the directory to
// (publish.PublishWith: c2sp.org/tlog-tiles, incremental), but never what
// a replica would refuse: l is first verified under its own verifier key
// and, an authority log, replayed, else it returns an *UnverifiedError.
// Then the errors are publish.PublishWith's and, under a policy, the
// policy check's. On an error Published is the zero value, Witnessing
// aside (what the policy found, when it was checked).
func PublishVerified(l *ledger.Log, to string, o PublishOptions) (Published, error) {
	var err error
	name := "decisions"
	if o.Authority {
		name = "authority"
		_, err = verify.LoadAuthority(l, l.Key())
	} else {
		_, err = l.Verify(l.Key(), nil)
	}
	if err != nil {
		return Published{}, &UnverifiedError{Log: name, Err: err}
	}
	var out Published
	opts := publish.PublishOptions{Progress: o.Progress}
	if o.Policy != nil {
		opts.Check = func(cosigned []byte) error {
			w, err := o.Policy.Check(cosigned, l.Key(), time.Now())
			out.Witnessing = &w
			return err
		}
	}
	o.warnUnwitnessed(l, to)
	if o.Verified != nil {
		o.Verified()
	}
	out.Published, err = publish.PublishWith(l, to, opts)
	if err != nil {
		return Published{Witnessing: out.Witnessing}, err
	}
	return out, nil
}

// PublishEvery publishes the runner's decision log into the directory
// to (PublishDecisions) now and every period every (at least a second)
// until the returned function is called, which publishes once more (the
// decisions of the last moments) and waits for it. A failure goes to
// failed, when not nil, and publishing goes on.
func (r *Runner) PublishEvery(to string, every time.Duration, failed func(error)) (stop func()) {
	publish := func() {
		if _, err := r.PublishDecisions(to); err != nil && failed != nil {
			failed(err)
		}
	}
	publish()
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(max(every, time.Second))
		defer t.Stop()
		for {
			select {
			case <-done:
				publish()
				return
			case <-t.C:
				publish()
			}
		}
	}()
	return func() { close(done); <-stopped }
}
