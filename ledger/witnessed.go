package ledger

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/writ-ledger/writ/ledger/formats"
)

// keyCosigned holds the latest signed checkpoint with the cosignatures
// witnesses gave it (c2sp.org/tlog-cosignature lines after the log's own
// two). m/checkpoint keeps the log's canonical checkpoint, which the
// history and every check read; this copy is what the log publishes and
// what a runner's witness policy reads. It counts only while its log
// part is m/checkpoint byte for byte.
var keyCosigned = []byte("m/cosigned")

// ErrHeadMoved: cosignatures for a checkpoint that is no longer the log's
// latest (another append or refresh signed a newer one meanwhile).
var ErrHeadMoved = errors.New("the log's latest checkpoint changed")

// cosignedIn returns the stored cosigned copy of head, the log's latest
// signed checkpoint, or head itself when there is none for it.
func cosignedIn(txn Txn, head []byte, k *formats.LogKey) []byte {
	full, err := txn.Get(keyCosigned)
	if err != nil {
		return head
	}
	base, err := formats.LogSigned(full, k)
	if err != nil || !bytes.Equal(base, head) {
		return head
	}
	return full
}

// CosignedCheckpoint returns the log's latest signed checkpoint with the
// witness cosignatures stored for it (AttachCosignatures, or copied by
// Sync and Import), or the bare checkpoint when none are: what Publish
// and Serve publish and what a witness policy (formats.Policy.Check) is
// judged on. It does not verify the cosignatures. Errors are Checkpoint's.
func (l *Log) CosignedCheckpoint() ([]byte, error) {
	var out []byte
	err := l.db.View(func(txn Txn) error {
		head, err := txn.Get(keyCheckpoint)
		if err != nil {
			return &IntegrityError{Index: -1, What: "signed checkpoint missing", Detail: err.Error()}
		}
		out = cosignedIn(txn, head, l.lkey)
		return nil
	})
	return out, err
}

// LastCosigned returns the stored cosigned checkpoint, whether or not it
// is still of the latest checkpoint (the size witnesses were last asked
// to cosign, which publish.CollectCosignatures offers them as the old
// size), or an error wrapping ErrNoKey when none was ever stored. It does
// not verify it.
func (l *Log) LastCosigned() ([]byte, error) {
	var out []byte
	err := l.db.View(func(txn Txn) error {
		var err error
		out, err = txn.Get(keyCosigned)
		return err
	})
	return out, err
}

// AttachCosignatures stores the cosignature lines (each "— <name>
// <base64>\n", as tlog-witness add-checkpoint answers) with head, which
// must still be the log's latest signed checkpoint, keeping those stored
// for it before, and returns the cosigned checkpoint. It does not verify
// them: readers check cosignatures against their own policy. Errors:
// ErrHeadMoved when head is no longer the latest, ErrNoSigner (a log
// opened without its key: only the writer attaches), or
// formats.ErrSignatureLines / ErrMalformedCheckpoint for lines that do
// not fit (MaxSignatureLines, MaxCheckpointSize).
func (l *Log) AttachCosignatures(head []byte, lines []string) ([]byte, error) {
	if l.signer == nil {
		return nil, ErrNoSigner
	}
	var out []byte
	err := l.db.Update(func(txn Txn) error {
		cur, err := txn.Get(keyCheckpoint)
		if err != nil {
			return &IntegrityError{Index: -1, What: "signed checkpoint missing", Detail: err.Error()}
		}
		if !bytes.Equal(cur, head) {
			return ErrHeadMoved
		}
		if out, err = formats.AddSignatures(cosignedIn(txn, head, l.lkey), lines); err != nil {
			return err
		}
		return txn.Set(keyCosigned, out)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// setCosigned stores full, a published checkpoint whose log part is
// head, the checkpoint being stored, as its cosigned copy; with no
// cosignature beyond the log's own it removes any older copy instead.
func setCosigned(txn Txn, head, full []byte) error {
	if bytes.Equal(full, head) {
		return ignoreNoKey(txn.Delete(keyCosigned))
	}
	if len(full) > formats.MaxCheckpointSize {
		return fmt.Errorf("%w: cosigned checkpoint of %d bytes", formats.ErrMalformedCheckpoint, len(full))
	}
	return batchErr(txn.Set(keyCosigned, full))
}

func ignoreNoKey(err error) error {
	if errors.Is(err, ErrNoKey) {
		return nil
	}
	return err
}
