package audit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/progress"
	"github.com/writ-ledger/writ/ledger/replica"
	"golang.org/x/mod/sumdb/tlog"
)

// ExportFile is the export file at path (writ ledger export) as an audit
// Source, fully offline: each section's entries are hashed as they
// stream past and checked against its signed checkpoint, and the prefix
// of each log at the size in the auditor's state file must have the
// trusted root. The sections must be one authority log, then at most one
// decision log, each with its own kind of origin; a decision log's
// authority checkpoints are checked against the authority log's final
// root only. Options.Progress counts the bytes of the file read, of its
// size (the sections' sizes are known only as they come).
func ExportFile(path string) Source { return exportSource(path) }

type exportSource string

type exportReader struct {
	f        *os.File
	x        *replica.ExportReader
	size     int64
	progress func(done, total int64)
	rep      *Report
	read     int  // sections read
	done     bool // the reader returned io.EOF
}

func (e exportSource) open(rep *Report) (reader, error) {
	f, err := os.Open(string(e))
	if err != nil {
		return nil, err
	}
	var size int64
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	report := rep.opts.Progress
	rep.opts.Progress = nil // counted in bytes, not entries
	x, err := replica.NewExportReader(&progress.Reader{R: f, Progress: report, Total: size})
	if err != nil {
		f.Close()
		return nil, err
	}
	return &exportReader{f: f, x: x, size: size, progress: report, rep: rep}, nil
}

// next reads the next section, which must be the authority log first,
// the decision log second, and nothing after: io.EOF at the end, else a
// *failed against "export".
func (e *exportReader) next() (*sectionLog, error) {
	sec, err := e.x.Next()
	if err == io.EOF {
		e.done = true
		return nil, err
	}
	if err != nil {
		return nil, &failed{"export", err}
	}
	e.read++
	want := "" // a third section
	switch e.read {
	case 1:
		want = "authority"
	case 2:
		want = "decisions"
	}
	if sec.Name != want || isDecisionOrigin(sec.Origin) != (sec.Name == "decisions") {
		return nil, &failed{"export", fmt.Errorf("%w: sections must be one authority log, then at most one decision log, each with its own kind of origin (found %s, origin %s)", replica.ErrExport, sec.Name, sec.Origin)}
	}
	return &sectionLog{x: e.x, sec: sec}, nil
}

func (e *exportReader) authority() (formats.Checkpoint, error) {
	sec, err := e.next()
	if err == io.EOF {
		return formats.Checkpoint{}, &failed{"export", errors.New("the export has no authority log")}
	}
	if err != nil {
		return formats.Checkpoint{}, err
	}
	return e.rep.verifiedAuthority(sec)
}

func (e *exportReader) decisions(formats.Checkpoint) (auditLog, error) {
	sec, err := e.next()
	switch {
	case err == io.EOF && (e.rep.opts.DecisionsVKey != nil || e.rep.state.Decisions != nil):
		return nil, &failed{"decisions", exportLacksDecisions(e.rep.opts, e.rep.state)}
	case err == io.EOF:
		return nil, nil
	case err != nil:
		return nil, err
	}
	return sec, nil
}

// root knows only the authority log's final root: the export streamed
// the log past.
func (e *exportReader) root(cp formats.Checkpoint, n int64) (tlog.Hash, bool, error) {
	return cp.Hash, n == cp.Size, nil
}

func (e *exportReader) finish(*Report) error {
	if !e.done {
		if _, err := e.next(); err != io.EOF {
			return err
		}
	}
	if e.progress != nil {
		e.progress(e.size, e.size)
	}
	return nil
}

func (e *exportReader) close() { e.f.Close() }

// sectionLog is one section of an export, read as it streams past.
type sectionLog struct {
	x   *replica.ExportReader
	sec *replica.ExportedLog
}

func (s *sectionLog) vkey() string   { return s.sec.VKey }
func (s *sectionLog) origin() string { return s.sec.Origin }
func (s *sectionLog) signed() []byte { return []byte(s.sec.Checkpoint) }

func (s *sectionLog) verify(k *formats.LogKey, trusted *CheckpointSummary, fn ledger.EntryFunc, wait func() error) (formats.Checkpoint, error) {
	prefix := &prefixCheck{trusted: trusted}
	cp, err := s.x.VerifySection(s.sec, k, prefix.wrap(fn))
	if werr := wait(); werr != nil {
		err = werr // an entry's own refusal or failure, with its index
	}
	if err == nil {
		err = prefix.check(cp)
	}
	return cp, err
}

func (s *sectionLog) witnessed(p *formats.Policy, k *formats.LogKey, _ formats.Checkpoint, now func() (time.Time, error)) (*formats.Witnessing, error) {
	t, _ := now()
	w, err := p.Check([]byte(s.sec.Checkpoint), k, t)
	return &w, err
}

// consistent: verify proved the prefix as the section streamed past.
func (s *sectionLog) consistent(*CheckpointSummary, formats.Checkpoint) error { return nil }

// stateIndex is nil: an export carries no state index.
func (*sectionLog) stateIndex() *ledger.Log { return nil }
