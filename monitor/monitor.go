package monitor

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/runner"
)

// ErrRewound: the log does not extend what an earlier run of this
// monitor saw (a rollback behind its position, or another tree at it).
// The error carries both, as evidence.
var ErrRewound = errors.New("the log does not extend what this monitor saw before")

// Event is one new record that touches what the monitor watches. Its
// JSON is writ monitor's result, one object a line.
type Event struct {
	Index   int64        `json:"index" doc:"the record's entry index in the authority log"`
	Kind    schemas.Kind `json:"kind" doc:"root, delegation, revocation, pin, downgrade, quarantine or issuer"`
	Digest  string       `json:"digest" doc:"the record's digest (sha256:<hex>)"`
	Signers []string     `json:"signers" doc:"the key ids that signed it"`
	What    string       `json:"what" doc:"what it says, in one line"`
	Touches []string     `json:"touches" doc:"what it touches of the watch: key, stream, artifact or machine and the pattern, root, or a record reported before"`
	Alert   bool         `json:"alert" doc:"whether its kind is one to alert on (--alert)"`
}

// Result is what one run did.
type Result struct {
	Origin   string `json:"origin" doc:"the log's origin"`
	From     int64  `json:"from" doc:"the entry the run started at (the position the state file kept)"`
	To       int64  `json:"to" doc:"the log's size now, which the state file keeps"`
	Events   int    `json:"events" doc:"records reported"`
	Alerts   int    `json:"alerts" doc:"of those, alerts"`
	Baseline bool   `json:"baseline" doc:"a first run that recorded its position and reported nothing"`
}

// Monitor follows one published authority log. Replica syncs it (its
// Dir is the monitor's cache, its VKey the trusted key, required on the
// first run), State names the state file, Watch what to report.
// Baseline, on a first run (no state file), records the position and the
// records that touch the watch without reporting them.
type Monitor struct {
	Replica  *runner.Replica
	State    string
	Watch    Watch
	Baseline bool
}

// Run syncs the log (every entry verified, runner.Replica.Sync), checks
// that it extends the state's position (ErrRewound otherwise, with both
// roots), calls report with each new record that touches the watch, in
// log order, and keeps the new position in the state file. Errors:
// Watch.Check's, the state file's (ErrState), the sync's (as
// runner.Replica.Sync returns them), ErrRewound, report's (the state is
// then not advanced), and the replica's read errors.
func (m *Monitor) Run(ctx context.Context, report func(Event) error) (*Result, error) {
	if err := m.Watch.Check(); err != nil {
		return nil, err
	}
	st, err := readState(m.State)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(m.Replica.Dir); err == nil && st.Origin == "" && m.Baseline {
		// A replica without a state: the state file was lost or removed.
		// A baseline now would silence what arrived since.
		return nil, fmt.Errorf("%w: %s is missing, but its replica %s exists, so this monitor ran before: restore the state file, or remove the replica to start over", ErrState, m.State, m.Replica.Dir)
	}
	if _, err := m.Replica.Sync(ctx); err != nil {
		return nil, err
	}
	a, err := verify.OpenAuthority(ledgerdir.Dir(m.Replica.Dir), verify.Trust{}, nil)
	if err != nil {
		return nil, err
	}
	l := a.Log
	defer l.Close()
	if err := st.extendedBy(l); err != nil {
		return nil, err
	}
	res := &Result{Origin: l.Origin(), From: st.Size, To: l.Size(), Baseline: m.Baseline && st.Size == 0 && st.Origin == ""}
	if err := m.walk(l, st, res, lookups{chained: a.State.ChainedKeys}, report); err != nil {
		return nil, err
	}
	root, err := l.TreeHash(res.To)
	if err != nil {
		return nil, err
	}
	st.Origin, st.Size, st.Root = l.Origin(), res.To, hex.EncodeToString(root[:])
	return res, st.write(m.State)
}

// extendedBy checks that l, just synced, extends the state's position:
// the same origin, at least its size, and the same root there.
func (st *State) extendedBy(l *ledger.Log) error {
	if st.Origin == "" {
		return nil
	}
	if st.Origin != l.Origin() {
		return fmt.Errorf("%w: the state is of log %s, this is %s", ErrRewound, st.Origin, l.Origin())
	}
	if l.Size() < st.Size {
		return fmt.Errorf("%w: it holds %d entries, fewer than the %d reported up to before (a rollback)", ErrRewound, l.Size(), st.Size)
	}
	if st.Size == 0 {
		return nil
	}
	root, err := l.TreeHash(st.Size)
	if err != nil {
		return err
	}
	if got := hex.EncodeToString(root[:]); got != st.Root {
		return fmt.Errorf("%w: its tree of %d entries has root %s, and this monitor saw root %s (a fork)", ErrRewound, st.Size, got, st.Root)
	}
	return nil
}

// walk reports the entries from st.Size to res.To that touch the watch.
func (m *Monitor) walk(l *ledger.Log, st *State, res *Result, lk lookups, report func(Event) error) error {
	lk.reported = func(d string) bool { return slices.Contains(st.Reported, d) }
	for i := st.Size; i < res.To; i++ {
		entry, err := l.Entry(i)
		if err != nil {
			return err
		}
		env, err := sign.ParseEnvelope(entry)
		if err != nil {
			return fmt.Errorf("entry %d: %w", i, err)
		}
		rec, err := schemas.Decode(env.Kind, env.Payload)
		if err != nil {
			return fmt.Errorf("entry %d: %w", i, err)
		}
		var signers []string
		for _, s := range env.Signatures {
			signers = append(signers, s.KeyID)
		}
		touches := m.Watch.touches(rec, signers, lk)
		if len(touches) == 0 {
			continue
		}
		ev := Event{Index: i, Kind: env.Kind, Digest: env.Digest(), Signers: signers, What: what(rec), Touches: touches, Alert: m.Watch.alerts(env.Kind)}
		st.Reported = append(st.Reported, ev.Digest)
		if res.Baseline {
			continue
		}
		if err := report(ev); err != nil {
			return err
		}
		res.Events++
		if ev.Alert {
			res.Alerts++
		}
	}
	return nil
}
