package audit

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/writ-ledger/writ/internal/fileio"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"golang.org/x/mod/sumdb/tlog"
)

// auditState is the auditor's state file: the checkpoints it trusted at
// its last successful audit (JSON, written atomically with mode 0600).
type auditState struct {
	Authority *CheckpointSummary `json:"authority,omitempty"`
	Decisions *CheckpointSummary `json:"decisions,omitempty"`
	// The verifier keys the logs verified under: a later audit checks with
	// these, so a log re-signed under another key fails.
	AuthorityVKey string `json:"authority_vkey,omitempty"`
	DecisionsVKey string `json:"decisions_vkey,omitempty"`
}

// summary returns the trusted checkpoint of log ("authority" or
// "decisions"), or nil (also for a nil state).
func (s *auditState) summary(log string) *CheckpointSummary {
	switch {
	case s == nil:
		return nil
	case log == "authority":
		return s.Authority
	case log == "decisions":
		return s.Decisions
	}
	return nil
}

func (c *CheckpointSummary) checkpoint() formats.Checkpoint {
	cp := formats.Checkpoint{Origin: c.Origin, Size: c.Size}
	b, _ := hex.DecodeString(c.RootHash)
	copy(cp.Hash[:], b)
	return cp
}

// MaxStateFile bounds the auditor's state file (Options.StateFile),
// in bytes. The file writ writes holds two checkpoint summaries (an origin
// of at most 128 bytes, a size, 64 hex digits of root hash, and the signed
// checkpoint note, at most formats.MaxCheckpointSize = 16 KiB and in
// practice under 2 KiB) and two verifier keys. 64 KiB leaves room for
// that while a file that is not one writ wrote (a log, an export given by
// mistake) is refused before it is read whole.
const MaxStateFile = 64 << 10

// readState reads the auditor's state file at path; no path, or no file
// there yet, is the empty state. A file over MaxStateFile bytes is
// refused, naming the file and the limit.
func readState(path string) (*auditState, error) {
	st := &auditState{}
	if path == "" {
		return st, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxStateFile+1))
	if err != nil {
		return nil, fmt.Errorf("auditor state %s: %w", path, err)
	}
	if len(data) > MaxStateFile {
		return nil, fmt.Errorf("auditor state %s: larger than %d bytes, the limit for a state file: not a state an audit wrote", path, MaxStateFile)
	}
	if err := json.Unmarshal(data, st); err != nil {
		return nil, fmt.Errorf("auditor state %s: %w", path, err)
	}
	for _, c := range []struct {
		sum  *CheckpointSummary
		vkey string
	}{{st.Authority, st.AuthorityVKey}, {st.Decisions, st.DecisionsVKey}} {
		if c.sum == nil {
			continue
		}
		if b, err := hex.DecodeString(c.sum.RootHash); err != nil || len(b) != tlog.HashSize || c.sum.Size < 0 || !formats.ValidOrigin(c.sum.Origin) {
			return nil, fmt.Errorf("auditor state %s: a checkpoint is malformed", path)
		}
		// The signed note is evidence only (the root is what is trusted):
		// kept only if it verifies under the remembered key and is this
		// very checkpoint, so that evidence never shows an unchecked note.
		if c.sum.Signed != "" {
			k, err := formats.ParseLogKey(c.vkey)
			var cp formats.Checkpoint
			if err == nil {
				cp, err = formats.OpenCheckpoint([]byte(c.sum.Signed), k)
			}
			if err != nil || cp != c.sum.checkpoint() {
				c.sum.Signed = ""
			}
		}
	}
	return st, nil
}

// writeState writes the auditor's state atomically; a state readState
// would refuse (over MaxStateFile bytes) is never written.
func writeState(path string, st *auditState) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if len(data)+1 > MaxStateFile {
		return fmt.Errorf("auditor state %s: %d bytes, over the %d a later audit reads: not written", path, len(data)+1, MaxStateFile)
	}
	return fileio.Replace(path, ".writ-state-", append(data, '\n'))
}

// prefixCheck checks, while an export section streams past, that its
// prefix at the trusted size has the trusted root.
type prefixCheck struct {
	trusted *CheckpointSummary
	tree    ledger.TreeBuilder
	root    *tlog.Hash
}

func (p *prefixCheck) wrap(fn ledger.EntryFunc) ledger.EntryFunc {
	return func(i int64, e []byte, accepted time.Time) error {
		if p.trusted != nil && i < p.trusted.Size {
			p.tree.Add(tlog.RecordHash(e))
			if i+1 == p.trusted.Size {
				r := p.tree.Root()
				p.root = &r
			}
		}
		if fn != nil {
			return fn(i, e, accepted)
		}
		return nil
	}
}

func (p *prefixCheck) check(cp formats.Checkpoint) error {
	if p.trusted == nil {
		return nil
	}
	t := p.trusted.checkpoint()
	switch {
	case t.Origin != cp.Origin:
		return &ledger.InconsistencyError{Trusted: t, Found: cp, Why: "origin changed"}
	case cp.Size < t.Size:
		return &ledger.InconsistencyError{Trusted: t, Found: cp, Why: "the log shrank"}
	case t.Size > 0 && (p.root == nil || *p.root != t.Hash):
		return &ledger.InconsistencyError{Trusted: t, Found: cp, Why: "the log forked: its first entries do not hash to the trusted root"}
	}
	return nil
}
