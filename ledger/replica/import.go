package replica

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/progress"
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
// pass to the end of the copy, so nothing else appends in between. A log
// the directory does not hold yet is written beside its place
// (".NAME.new"), its entries bulk-loaded, and renamed into place once it
// is stored, or removed: a kill leaves no log or the whole of it. The
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
	Progress progress.Func
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
	// Resume, when set, is called in the verifying pass with the local
	// log of a section (open for writing) when it holds entries, once its
	// key was judged and before Check: true says the caller's check state
	// now covers the local log's signed checkpoint, built from what the
	// log persisted (verify.LoadAuthority), so the local log is not
	// verified entry by entry and Check's callback is passed only the
	// entries the export adds; false, every entry from 0, after the local
	// log's full verification. An error refuses the import as a local log
	// that does not verify does.
	Resume func(name string, l *ledger.Log) (bool, error)
	// Stored, when set, is called with a section's log once its entries
	// and signed checkpoint are stored: the caller extends the log's
	// persisted state by what its Check saw (stateview.Index.Write). An
	// error is Import's, the entries staying stored (the next reader
	// extends the state itself).
	Stored func(name string, l *ledger.Log) error
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
	x, err := NewExportReader(&progress.Reader{R: f, Progress: opts.Progress, Offset: fi.Size(), Total: 2 * fi.Size()})
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	var out []ImportedLog
	for _, p := range plan {
		sec := p.sec
		l, created, err := copySection(dir, x, p, locals)
		copied := err == nil
		if copied {
			out = append(out, ImportedLog{Name: sec.Name, Origin: sec.Origin, Before: p.before, After: sec.Size, Recovered: recovered[sec.Name], Checkpoint: p.cp})
			if opts.Stored != nil {
				if serr := opts.Stored(sec.Name, l); serr != nil {
					err = fmt.Errorf("the %s log's entries are stored; its state index: %w", sec.Name, serr)
				}
			}
		}
		if created != nil {
			// A new log, written beside its place: placed whole once its
			// entries and checkpoint are stored (a failed state index is
			// rebuilt by its next reader), else removed.
			var failed error
			if !copied {
				failed = err
			}
			if perr := created.place(l, failed); err == nil {
				err = perr
			}
		}
		if err != nil {
			return out, err
		}
	}
	opts.Progress.Report(2*fi.Size(), 2*fi.Size())
	return out, nil
}

// copySection copies the next section of x, which the verifying pass
// planned as p, into its local log, and returns that log: when locals has
// none, a new one written beside its place in dir (createBeside), its
// entries bulk-loaded, with what the caller places or removes it with
// (non-nil even when the copy failed).
func copySection(dir string, x *ExportReader, p importPlan, locals map[string]*ledger.Log) (*ledger.Log, *newLog, error) {
	sec, err := x.Next()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: the copying pass: %w", ErrExport, err)
	}
	if sec.Name != p.sec.Name || sec.Checkpoint != p.sec.Checkpoint || sec.VKey != p.sec.VKey || sec.Origin != p.sec.Origin {
		return nil, nil, fmt.Errorf("%w: the export changed between the verifying and the copying pass (section %s); nothing more imported", ErrExport, sec.Name)
	}
	if l := locals[sec.Name]; l != nil {
		return l, nil, copyFrom(l, x, sec, p, false)
	}
	l, created, err := createBeside(filepath.Join(dir, sectionDir(sec.Name)), sec.Origin, sec.VKey, sec.History)
	if err != nil {
		return nil, nil, err
	}
	return l, created, copyFrom(l, x, sec, p, true)
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
	items  [32]byte // the verifying pass's ExportReader.SectionDigest
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
	x, err := NewExportReader(&progress.Reader{R: f, Progress: opts.Progress, Total: 2 * size})
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
// hands every entry of the section the check for its log (if any) must
// accept to it: from the first, or, when opts.Resume resumed the check
// state from the local log, from the first the local log does not hold.
func planSection(x *ExportReader, sec *ExportedLog, local *ledger.Log, given *formats.LogKey, opts ImportOptions) (importPlan, error) {
	key, localCP, resumed, err := sectionKey(sec, local, given, opts)
	if err != nil {
		return importPlan{}, err
	}
	from := int64(0)
	if resumed {
		from = localCP.Size
	}
	pw := newPrefixWatch(sec, local, key, localCP)
	floors := floorWatch{floors: opts.Floors[sec.Name]}
	var fn ledger.EntryFunc
	var wait func() error
	if opts.Check != nil {
		fn, wait = opts.Check(sec.Name)
	}
	cp, err := x.VerifySection(sec, key, func(i int64, e []byte, accepted time.Time) error {
		if err := pw.see(i, e, accepted); err != nil {
			return err
		}
		floors.see(i, &pw.tree)
		if fn != nil && i >= from {
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
	if err := pw.check(cp); err != nil {
		return importPlan{}, err
	}
	return importPlan{sec: *sec, key: key, before: localCP.Size, cp: cp, items: x.SectionDigest()}, nil
}

// prefixWatch checks, as a section's entries are verified, that the
// local log (if any) is a prefix of it: the same root at the local
// size, and the same accepted time for every entry it holds (read from
// the local checkpoint history a batch at a time).
type prefixWatch struct {
	sec        *ExportedLog
	local      *ledger.Log
	localCP    formats.Checkpoint
	at         func(int64) (time.Time, error) // the local log's accepted times
	tree       ledger.TreeBuilder
	prefix     *tlog.Hash
	otherTimes string // the first entry the export says was accepted at another time
}

func newPrefixWatch(sec *ExportedLog, local *ledger.Log, key *formats.LogKey, localCP formats.Checkpoint) *prefixWatch {
	pw := &prefixWatch{sec: sec, local: local, localCP: localCP}
	pw.at = func(int64) (time.Time, error) { return time.Time{}, nil }
	if local != nil && local.HasHistory() {
		pw.at = acceptedTimes(local, key)
	}
	return pw
}

// see adds entry i, accepted at accepted, to the tree, and compares it
// with the local log's.
func (pw *prefixWatch) see(i int64, e []byte, accepted time.Time) error {
	pw.tree.Add(tlog.RecordHash(e))
	if pw.local == nil || i >= pw.localCP.Size {
		return nil
	}
	if pw.otherTimes == "" {
		t, err := pw.at(i)
		if err != nil {
			return fmt.Errorf("the local %s log: %w", pw.sec.Name, err)
		}
		if !t.Equal(accepted) {
			pw.otherTimes = fmt.Sprintf("the export's %s log accepted entry %d at %s, the local one at %s: another history",
				pw.sec.Name, i, accepted.UTC().Format(time.RFC3339), t.UTC().Format(time.RFC3339))
		}
	}
	if i+1 == pw.localCP.Size {
		r := pw.tree.Root()
		pw.prefix = &r
	}
	return nil
}

// check judges the section, verified at cp, against the local log: an
// *InconsistencyError with both checkpoints unless the local log is a
// prefix of it.
func (pw *prefixWatch) check(cp formats.Checkpoint) error {
	if pw.local == nil {
		return nil
	}
	name, localCP := pw.sec.Name, pw.localCP
	// The evidence carries both signed checkpoints as they were read.
	localSigned, _ := pw.local.CosignedCheckpoint()
	bad := func(why string) error {
		return &ledger.InconsistencyError{Trusted: localCP, Found: cp, TrustedSigned: localSigned, FoundSigned: []byte(pw.sec.Checkpoint), Why: why}
	}
	switch {
	case cp.Size < localCP.Size:
		return bad("the export is older than the local " + name + " log")
	case localCP.Size > 0 && (pw.prefix == nil || *pw.prefix != localCP.Hash) || cp.Origin != localCP.Origin:
		return bad("the export's " + name + " log forked from the local one")
	case pw.otherTimes != "":
		// The same entries, accepted at other times: replayed there,
		// they could be judged otherwise.
		return bad(pw.otherTimes)
	}
	return nil
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

// copyFrom appends the section's entries after the planned prefix with
// the shared replica writer, in batches, with the history checkpoints of
// batches that end past it; the section's checkpoint is stored, with the
// last batch, only if the tree built from the copied entries has the
// verified root. On any failure the copied entries are removed again.
func copyFrom(l *ledger.Log, x *ExportReader, sec *ExportedLog, p importPlan, bulk bool) (err error) {
	if l.Size() != p.before {
		return fmt.Errorf("%w: the local %s log changed during the import (%d entries, planned %d)", ErrExport, sec.Name, l.Size(), p.before)
	}
	newWriter := l.NewReplicaWriter
	if bulk {
		newWriter = l.NewBulkReplicaWriter
	}
	w, err := newWriter()
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
	if x.SectionDigest() != p.items {
		// The root check below covers the entries; this one also the
		// history checkpoints (the accepted times) the copy stores.
		return fmt.Errorf("%w: the %s section's bytes differ between the verifying and the copying pass (the export file changed); nothing of it kept", ErrExport, sec.Name)
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
