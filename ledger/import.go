package ledger

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/dgraph-io/badger/v4"
	"golang.org/x/mod/sumdb/tlog"
)

// ImportedLog reports what Import did to one log.
type ImportedLog struct {
	Name       string
	Origin     string
	Before     int64 // entries the local log held
	After      int64 // entries it holds now
	Checkpoint Checkpoint
}

// Import copies the logs of the export file at path into the ledger
// directory dir (created if missing), as replicas: each section's
// checkpoint must verify under trusted[name] (or, if absent, the key the
// local log already has, or else the section's own key), its entries must
// hash to that checkpoint, and the local log, if any, must be a prefix of
// the section: the same origin and verifier key, a size no larger, and the
// same root at its size. Anything else is refused before a byte is
// written (ErrExport, ErrCheckpointSignature, or an *InconsistencyError
// with both checkpoints). The file is read twice: once to verify, once to
// copy; the copy is committed in batches, and the section's signed
// checkpoint is stored with the last one (until then, an interrupted
// import leaves a log that Verify reports as unfinished; importing again
// completes it).
func Import(dir, path string, trusted map[string]string) ([]ImportedLog, error) {
	plan, err := planImport(dir, path, trusted)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	x, err := NewExportReader(f)
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
			return out, err
		}
		l, err := openOrCreateReplica(filepath.Join(dir, sectionDir(sec.Name)), sec)
		if err != nil {
			return out, err
		}
		err = l.copyFrom(x, sec, p.before)
		l.Close()
		if err != nil {
			return out, err
		}
		out = append(out, ImportedLog{Name: sec.Name, Origin: sec.Origin, Before: p.before, After: sec.Size, Checkpoint: p.cp})
	}
	return out, nil
}

type importPlan struct {
	before int64
	cp     Checkpoint
}

func sectionDir(name string) string {
	if name == "decisions" {
		return DecisionsDir
	}
	return AuthorityDir
}

// planImport is the verifying pass: nothing is written.
func planImport(dir, path string, trusted map[string]string) ([]importPlan, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	x, err := NewExportReader(f)
	if err != nil {
		return nil, err
	}
	var plan []importPlan
	seen := map[string]bool{}
	for {
		sec, err := x.Next()
		if err == io.EOF {
			return plan, nil
		}
		if err != nil {
			return nil, err
		}
		if seen[sec.Name] {
			return nil, fmt.Errorf("%w: two %s sections", ErrExport, sec.Name)
		}
		seen[sec.Name] = true
		vkey := trusted[sec.Name]
		var local *Log
		var localCP Checkpoint
		if _, err := os.Stat(filepath.Join(dir, sectionDir(sec.Name))); err == nil {
			if local, err = Open(filepath.Join(dir, sectionDir(sec.Name)), nil); err != nil {
				return nil, err
			}
			defer local.Close()
			if vkey == "" {
				vkey = local.vkey
			}
			if localCP, err = local.Verify(vkey, nil); err != nil {
				return nil, fmt.Errorf("the local %s log: %w", sec.Name, err)
			}
			if sec.VKey != local.vkey {
				return nil, fmt.Errorf("%w: the export's %s log is signed by %s, the local one by %s", ErrExport, sec.Name, sec.VKey, local.vkey)
			}
		}
		var tree TreeBuilder
		var prefix *tlog.Hash
		cp, err := x.VerifySection(sec, vkey, func(i int64, e []byte) error {
			tree.Add(tlog.RecordHash(e))
			if local != nil && i+1 == localCP.Size {
				r := tree.Root()
				prefix = &r
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if local != nil {
			switch {
			case cp.Size < localCP.Size:
				return nil, &InconsistencyError{Trusted: localCP, Found: cp, Why: "the export is older than the local " + sec.Name + " log"}
			case localCP.Size > 0 && (prefix == nil || *prefix != localCP.Hash) || cp.Origin != localCP.Origin:
				return nil, &InconsistencyError{Trusted: localCP, Found: cp, Why: "the export's " + sec.Name + " log forked from the local one"}
			}
		}
		plan = append(plan, importPlan{before: localCP.Size, cp: cp})
	}
}

// openOrCreateReplica opens the log at dir, or creates an empty replica
// of the section's log (its origin and verifier key, no signing key).
func openOrCreateReplica(dir string, sec *ExportedLog) (*Log, error) {
	if _, err := os.Stat(dir); err == nil {
		return Open(dir, nil)
	}
	db, err := openBadger(dir)
	if err != nil {
		return nil, err
	}
	err = db.Update(func(txn *badger.Txn) error {
		for k, v := range map[string][]byte{string(keyOrigin): []byte(sec.Origin), string(keyVKey): []byte(sec.VKey), string(keySize): make([]byte, 8)} {
			if err := txn.Set([]byte(k), v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	db.Close()
	return Open(dir, nil)
}

// copyFrom appends the section's entries after the first skip, in
// batches, storing the section's checkpoint with the last batch.
func (l *Log) copyFrom(x *ExportReader, sec *ExportedLog, skip int64) error {
	for i := int64(0); i < skip; i++ {
		if _, err := x.Entry(); err != nil {
			return err
		}
	}
	n := skip
	for n < sec.Size || n == skip {
		txn := l.db.NewTransaction(true)
		r := txnHashReader(txn)
		bytes := 0
		for n < sec.Size && bytes < MaxBatchBytes/2 {
			e, err := x.Entry()
			if err != nil {
				txn.Discard()
				return err
			}
			hashes, err := tlog.StoredHashes(n, e, r)
			if err != nil {
				txn.Discard()
				return err
			}
			base := tlog.StoredHashIndex(0, n)
			for j, h := range hashes {
				if err := txn.Set(indexKey(prefixHash, base+int64(j)), h[:]); err != nil {
					txn.Discard()
					return batchErr(err)
				}
			}
			if err := txn.Set(indexKey(prefixEntry, n), e); err != nil {
				txn.Discard()
				return batchErr(err)
			}
			bytes += len(e)
			n++
		}
		sz := make([]byte, 8)
		binary.BigEndian.PutUint64(sz, uint64(n))
		if err := txn.Set(keySize, sz); err != nil {
			txn.Discard()
			return err
		}
		if n == sec.Size {
			if err := txn.Set(keyCheckpoint, []byte(sec.Checkpoint)); err != nil {
				txn.Discard()
				return err
			}
		}
		if err := txn.Commit(); err != nil {
			return batchErr(err)
		}
		l.size.Store(n)
		if n == sec.Size {
			return nil
		}
	}
	return nil
}
