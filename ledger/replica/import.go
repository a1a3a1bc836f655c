package replica

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/sign"
	"golang.org/x/mod/sumdb/tlog"
)

// ImportedLog reports what Import did to one log.
type ImportedLog struct {
	Name       string
	Origin     string
	Before     int64 // entries the local log held (its signed checkpoint)
	After      int64 // entries it holds now
	Recovered  int64 // unsigned entries of an interrupted import dropped first
	Checkpoint formats.Checkpoint
}

// Import copies the logs of the export file at path (a regular file: it is
// read twice) into the ledger directory dir (created if missing), as
// replicas. Each section's checkpoint must verify under trusted[name] (or,
// if absent, the key the local log already has, or else the section's own
// key), the section must name that same key, its entries must hash to that
// checkpoint, a decisions section's origin must extend the authority
// section's (or local log's) origin, and the local log, if any, must be a
// prefix of the section: the same origin and verifier key, a size no
// larger, and the same root at its size, and, for a log with a checkpoint
// history, the same accepted time for every entry it holds. check (if
// not nil) gives, per section, the checks every entry must pass in order,
// from entry 0, with the time it was accepted: for the authority log, the
// same signature and authority checks an append runs, so that a replica
// never holds what its writer would have refused. Anything else is
// refused before a byte is written (ErrExport, ErrHistory,
// ErrCheckpointSignature, the check's error, or an *InconsistencyError
// with both checkpoints).
//
// The local logs stay open (Badger's directory lock) from the verifying
// pass to the end of the copy, so nothing else appends in between. The
// copy is committed in batches and must reproduce the verified root
// exactly; otherwise (the file changed between the passes, a read failed)
// the copied entries are removed again and the log is left as it was. A
// log left with unsigned entries past its checkpoint by an interrupted
// import is first cut back to its signed checkpoint (reported as
// Recovered), so importing again completes it.
func Import(dir, path string, trusted map[string]*formats.LogKey, check Check) ([]ImportedLog, error) {
	return ImportWith(dir, path, ImportOptions{Trusted: trusted, Check: check})
}

// ImportOptions are Import's parameters, with one more check.
type ImportOptions struct {
	// Trusted maps a section name to the verifier key its checkpoints
	// must verify under, parsed where the caller took it in. A section
	// without one (or nil) verifies under the local log's key, else the
	// section's own (held to TrustedKeys, if given), parsed from the export.
	Trusted map[string]*formats.LogKey
	Check   Check // the checks every entry passes (nil: none)
	// Checkpoint, when set, judges each section's checkpoint as exported,
	// with its witness cosignatures, after its log signature verified
	// under its key k and before its entries are read: an error refuses the
	// import, as is. A runner checks its witness policy's quorum here.
	Checkpoint func(name string, cosigned []byte, k *formats.LogKey) error
	// Progress, when set, is told the bytes of the export file read, of
	// twice its size (the verifying pass, then the copying pass).
	Progress ledger.Progress
	// Floors gives, per section name, checkpoints the section must reach
	// and extend (the same root at their size), or the import is refused
	// before a byte is written with an *InconsistencyError saying what
	// size it needs: what a damaged store being restored showed (Repair).
	Floors map[string][]Floor
	// TrustedKeys gives, per section name without a key in Trusted (and
	// without a local log), the public key the section's verifier key
	// must hold, under the section's origin: a *TrustError
	// (rules.VKeyMismatch) otherwise.
	TrustedKeys map[string]sign.PublicKey
}

// ImportWith is Import with opts.
func ImportWith(dir, path string, opts ImportOptions) ([]ImportedLog, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file (an export is read twice: once to verify, once to copy)", ErrExport, path)
	}
	locals := map[string]*ledger.Log{}
	defer func() {
		for _, l := range locals {
			l.Close()
		}
	}()
	recovered, busy, err := openLocals(dir, locals)
	if err != nil {
		return nil, err
	}
	plan, err := planImport(path, fi.Size(), locals, opts)
	if err != nil {
		return nil, err
	}
	for _, p := range plan {
		if p.sec.Name == "decisions" && busy != nil {
			return nil, fmt.Errorf("the local decisions log: %w (import an export made with --authority-only to sync only the authority log)", busy)
		}
	}
	if testHookBetweenPasses != nil {
		testHookBetweenPasses()
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi2, err := f.Stat(); err != nil || !os.SameFile(fi, fi2) {
		return nil, fmt.Errorf("%w: %s was replaced between the verifying and the copying pass; nothing imported", ErrExport, path)
	}
	x, err := NewExportReader(&ledger.ProgressReader{R: f, Progress: opts.Progress, Offset: fi.Size(), Total: 2 * fi.Size()})
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	var out []ImportedLog
	for _, p := range plan {
		sec, err := x.Next()
		if err != nil {
			return out, fmt.Errorf("%w: the copying pass: %w", ErrExport, err)
		}
		if sec.Name != p.sec.Name || sec.Checkpoint != p.sec.Checkpoint || sec.VKey != p.sec.VKey || sec.Origin != p.sec.Origin {
			return out, fmt.Errorf("%w: the export changed between the verifying and the copying pass (section %s); nothing more imported", ErrExport, sec.Name)
		}
		l := locals[sec.Name]
		if l == nil {
			if l, err = ledger.CreateReplica(filepath.Join(dir, sectionDir(sec.Name)), sec.Origin, sec.VKey, sec.History); err != nil {
				return out, err
			}
			locals[sec.Name] = l
		}
		if err := copyFrom(l, x, sec, p); err != nil {
			return out, err
		}
		out = append(out, ImportedLog{Name: sec.Name, Origin: sec.Origin, Before: p.before, After: sec.Size, Recovered: recovered[sec.Name], Checkpoint: p.cp})
	}
	opts.Progress.Report(2*fi.Size(), 2*fi.Size())
	return out, nil
}

// openLocals opens the local logs of dir into locals, for writing (the
// authority log waiting for its readers), each cut back to its signed
// checkpoint first (recovered: the entries dropped, by name); the empty
// shell an interrupted first import left is removed. A decision log
// another process holds is not opened: busy says so, an error only if the
// export has a decisions section.
func openLocals(dir string, locals map[string]*ledger.Log) (recovered map[string]int64, busy error, err error) {
	recovered = map[string]int64{}
	for _, name := range []string{"authority", "decisions"} {
		p := filepath.Join(dir, sectionDir(name))
		if _, err := os.Stat(p); err != nil {
			continue
		}
		open := ledger.Open
		if name == "authority" {
			open = func(dir string, key *sign.PrivateKey) (*ledger.Log, error) {
				return ledgerdir.OpenWaiting(dir, key, ledgerdir.WriterLockWait)
			}
		}
		l, err := open(p, nil)
		if errors.Is(err, ledger.ErrLocked) && name == "decisions" {
			// A runner's admission server holds its decision log: that is
			// an error only if the export has a decisions section.
			busy = err
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("the local %s log: %w", name, err)
		}
		locals[name] = l
		if recovered[name], err = l.DropUnsigned(); err != nil {
			return nil, nil, fmt.Errorf("the local %s log: %w", name, err)
		}
		if _, err := l.Checkpoint(); err != nil && l.Size() == 0 {
			// The empty shell of an interrupted first import: nothing
			// signed, nothing stored. Start again from nothing.
			l.Close()
			delete(locals, name)
			if err := os.RemoveAll(p); err != nil {
				return nil, nil, err
			}
		}
	}
	return recovered, busy, nil
}

// testHookBetweenPasses, when set by a test, runs after the verifying
// pass and before the copying pass.
var testHookBetweenPasses func()

type importPlan struct {
	sec    ExportedLog
	key    *formats.LogKey // sec.VKey, parsed: the key the section verified under
	before int64
	cp     formats.Checkpoint
}

func sectionDir(name string) string {
	if name == "decisions" {
		return ledgerdir.DecisionsDir
	}
	return ledgerdir.AuthorityDir
}

// planImport is the verifying pass: nothing is written.
func planImport(path string, size int64, locals map[string]*ledger.Log, opts ImportOptions) ([]importPlan, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	x, err := NewExportReader(&ledger.ProgressReader{R: f, Progress: opts.Progress, Total: 2 * size})
	if err != nil {
		return nil, err
	}
	var plan []importPlan
	for {
		sec, err := x.Next()
		if err == io.EOF {
			return plan, checkOrigins(plan, locals)
		}
		if err != nil {
			return nil, err
		}
		for _, p := range plan {
			if p.sec.Name == sec.Name {
				return nil, fmt.Errorf("%w: two %s sections", ErrExport, sec.Name)
			}
		}
		p, err := planSection(x, sec, locals[sec.Name], opts.Trusted[sec.Name], opts)
		if err != nil {
			return nil, err
		}
		plan = append(plan, p)
	}
}

// planSection verifies one section against the local log, if any, and
// hands every entry of the section, from the first, to the check for its
// log (if any), which must accept them all.
func planSection(x *ExportReader, sec *ExportedLog, local *ledger.Log, given *formats.LogKey, opts ImportOptions) (importPlan, error) {
	check := opts.Check
	var localTimes acceptedTimes
	key, localCP, err := sectionKey(sec, local, given, opts, localTimes.record)
	if err != nil {
		return importPlan{}, err
	}
	var tree ledger.TreeBuilder
	var prefix *tlog.Hash
	floors := floorWatch{floors: opts.Floors[sec.Name]}
	var fn ledger.EntryFunc
	var wait func() error
	if check != nil {
		fn, wait = check(sec.Name)
	}
	otherTimes := "" // the first entry the export says was accepted at another time
	cp, err := x.VerifySection(sec, key, func(i int64, e []byte, accepted time.Time) error {
		tree.Add(tlog.RecordHash(e))
		if local != nil && i < localCP.Size && otherTimes == "" && !localTimes.at(i).Equal(accepted) {
			otherTimes = fmt.Sprintf("the export's %s log accepted entry %d at %s, the local one at %s: another history",
				sec.Name, i, accepted.UTC().Format(time.RFC3339), localTimes.at(i).UTC().Format(time.RFC3339))
		}
		if local != nil && i+1 == localCP.Size {
			r := tree.Root()
			prefix = &r
		}
		floors.see(i, &tree)
		if fn != nil {
			return fn(i, e, accepted)
		}
		return nil
	})
	if wait != nil {
		if werr := wait(); werr != nil {
			err = werr // the entry's own refusal, with its index
		}
	}
	if err != nil {
		return importPlan{}, err
	}
	if err := floors.check("the export's "+sec.Name+" log", cp); err != nil {
		return importPlan{}, err
	}
	if local != nil {
		// The evidence carries both signed checkpoints as they were read.
		localSigned, _ := local.CosignedCheckpoint()
		bad := func(why string) error {
			return &ledger.InconsistencyError{Trusted: localCP, Found: cp, TrustedSigned: localSigned, FoundSigned: []byte(sec.Checkpoint), Why: why}
		}
		switch {
		case cp.Size < localCP.Size:
			return importPlan{}, bad("the export is older than the local " + sec.Name + " log")
		case localCP.Size > 0 && (prefix == nil || *prefix != localCP.Hash) || cp.Origin != localCP.Origin:
			return importPlan{}, bad("the export's " + sec.Name + " log forked from the local one")
		case otherTimes != "":
			// The same entries, accepted at other times: replayed there,
			// they could be judged otherwise.
			return importPlan{}, bad(otherTimes)
		}
	}
	return importPlan{sec: *sec, key: key, before: localCP.Size, cp: cp}, nil
}

// checkOrigins binds the sections to their roles: an authority origin is
// not a decision log's, and a decision log's origin is the authority
// origin + "/decisions/" + 16 hex digits (the export's authority section,
// or else the local authority log).
func checkOrigins(plan []importPlan, locals map[string]*ledger.Log) error {
	authority := ""
	if l := locals["authority"]; l != nil {
		authority = l.Origin()
	}
	for _, p := range plan {
		if p.sec.Name == "authority" {
			if strings.Contains(p.sec.Origin, ledgerdir.DecisionsSuffix) {
				return fmt.Errorf("%w: the authority section's origin %q is a decision log's", ErrExport, p.sec.Origin)
			}
			authority = p.sec.Origin
		}
	}
	for _, p := range plan {
		if p.sec.Name != "decisions" {
			continue
		}
		rest, ok := strings.CutPrefix(p.sec.Origin, authority+ledgerdir.DecisionsSuffix)
		if authority == "" || !ok || len(rest) != 16 {
			return fmt.Errorf("%w: the decisions section's origin %q is not %s%s<16 hex> (the authority log's)", ErrExport, p.sec.Origin, authority, ledgerdir.DecisionsSuffix)
		}
	}
	return nil
}

// Check makes the checks of one log's entries for Import: given the
// section's name, an entry callback (nil: no checks for that log) and a
// function that waits for the checks in flight and returns the first
// refusal.
type Check func(name string) (ledger.EntryFunc, func() error)

// acceptedTimes remembers the time a log accepted each of its entries, as
// runs of consecutive entries with the same time (one per batch at most).
type acceptedTimes struct {
	ends  []int64 // index after each run's last entry
	times []time.Time
}

// record is an EntryFunc that notes entry i's accepted time.
func (a *acceptedTimes) record(i int64, _ []byte, t time.Time) error {
	if n := len(a.times); n > 0 && a.times[n-1].Equal(t) {
		a.ends[n-1] = i + 1
		return nil
	}
	a.ends, a.times = append(a.ends, i+1), append(a.times, t)
	return nil
}

// at returns the accepted time of entry i (zero if not recorded).
func (a *acceptedTimes) at(i int64) time.Time {
	k, _ := slices.BinarySearch(a.ends, i+1)
	if k < len(a.times) {
		return a.times[k]
	}
	return time.Time{}
}

// copyFrom appends the section's entries after the planned prefix with
// the shared replica writer, in batches, with the history checkpoints of
// batches that end past it; the section's checkpoint is stored, with the
// last batch, only if the tree built from the copied entries has the
// verified root. On any failure the copied entries are removed again.
func copyFrom(l *ledger.Log, x *ExportReader, sec *ExportedLog, p importPlan) (err error) {
	if l.Size() != p.before {
		return fmt.Errorf("%w: the local %s log changed during the import (%d entries, planned %d)", ErrExport, sec.Name, l.Size(), p.before)
	}
	w, err := l.NewReplicaWriter()
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			if rerr := w.Abort(); rerr != nil {
				err = fmt.Errorf("%w; removing the partial copy also failed: %w", err, rerr)
			}
		}
	}()
	c := &sectionCursor{x: x, sec: sec, key: p.key} // sec.VKey is p.sec.VKey (checked on reading it again)
	for i := int64(0); i < p.before; i++ {          // the prefix the replica holds, read past
		_, cov, fresh, err := c.entry()
		if err != nil {
			return fmt.Errorf("%w: the copying pass: %w", ErrExport, err)
		}
		if fresh != nil && cov.Size > p.before {
			if err := w.SetHistory(cov.Size, fresh); err != nil {
				return err
			}
		}
	}
	for w.Size() < sec.Size {
		e, cov, fresh, err := c.entry()
		if err != nil {
			return fmt.Errorf("%w: the copying pass: %w", ErrExport, err)
		}
		if fresh != nil {
			if err := w.SetHistory(cov.Size, fresh); err != nil {
				return err
			}
		}
		if err := w.Append(e); err != nil {
			return err
		}
	}
	return finishCopy(w, sec, p)
}

// finishCopy checks the copied tree against the verified checkpoint and
// stores the signed checkpoint.
func finishCopy(w *ledger.ReplicaWriter, sec *ExportedLog, p importPlan) error {
	if root := w.Root(); root != p.cp.Hash {
		return fmt.Errorf("%w: the copied %s entries hash to %s, not the verified root %s: the export file changed between the verifying and the copying pass; nothing of it kept",
			ErrExport, sec.Name, hexHash(root), hexHash(p.cp.Hash))
	}
	head, err := formats.LogSigned([]byte(sec.Checkpoint), p.key)
	if err != nil {
		return fmt.Errorf("%w: the %s checkpoint: %w", ErrExport, sec.Name, err)
	}
	return w.Finish(p.cp, head, []byte(sec.Checkpoint))
}
