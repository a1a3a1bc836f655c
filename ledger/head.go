package ledger

import (
	"errors"
	"fmt"

	"github.com/writ-ledger/writ/ledger/formats"
	"golang.org/x/mod/sumdb/tlog"
)

// SignedHead returns the log's latest signed checkpoint, verified with the
// log's verifier key: the only tree state writ vouches for. Errors: an
// *IntegrityError when it is missing, or the checkpoint errors of
// OpenCheckpoint.
func (l *Log) SignedHead() (formats.Checkpoint, error) {
	var cp formats.Checkpoint
	err := l.db.View(func(txn Txn) error {
		var err error
		cp, err = l.signedHead(txn)
		return err
	})
	return cp, err
}

// TrustedHead is SignedHead verified under k, a key the caller trusts
// from outside the log (nil for the log's own): a checkpoint that a key
// other than the log's did not sign is a *TrustError (rules.VKeyMismatch)
// listing the keys that did.
func (l *Log) TrustedHead(k *formats.LogKey) (formats.Checkpoint, error) {
	if k == nil {
		k = l.lkey
	}
	signed, err := l.Checkpoint()
	if err != nil {
		return formats.Checkpoint{}, err
	}
	return l.openGiven(signed, k)
}

func (l *Log) signedHead(txn Txn) (formats.Checkpoint, error) {
	signed, err := txn.Get(keyCheckpoint)
	if err != nil {
		return formats.Checkpoint{}, &IntegrityError{Index: -1, What: "signed checkpoint missing", Detail: err.Error()}
	}
	cp, err := formats.OpenCheckpoint(signed, l.lkey)
	if err != nil {
		return formats.Checkpoint{}, err
	}
	return cp, nil
}

// VerifiedEntry returns entry i only after proving it is in the tree the
// latest signed checkpoint commits to (RFC 9162 §2.1.3 inclusion, from
// stored hashes, checked against the signed root): bytes changed on disk,
// with or without their stored hashes, are an *IntegrityError naming i,
// never a result. It costs one signature verification and O(log n) hash
// reads.
func (l *Log) VerifiedEntry(i int64) ([]byte, error) {
	var out []byte
	err := l.db.View(func(txn Txn) error {
		cp, err := l.signedHead(txn)
		if err != nil {
			return err
		}
		if i < 0 || i >= cp.Size {
			return &IntegrityError{Index: i, What: "entry beyond the signed checkpoint", Expected: fmt.Sprintf("index below %d", cp.Size), Found: fmt.Sprint(i)}
		}
		out, err = txn.Get(indexKey(prefixEntry, i))
		if errors.Is(err, ErrNoKey) {
			return &IntegrityError{Index: i, What: "entry missing"}
		} else if err != nil {
			return err
		}
		r := txnHashReader(txn)
		proof, err := tlog.ProveRecord(cp.Size, i, r)
		if err != nil {
			return &IntegrityError{Index: i, What: "stored tree hashes", Detail: err.Error()}
		}
		if err := tlog.CheckRecord(proof, cp.Size, cp.Hash, i, tlog.RecordHash(out)); err != nil {
			return &IntegrityError{Index: i, What: "entry not in the signed tree",
				Detail: fmt.Sprintf("its bytes do not hash into the root of the signed checkpoint (size %d): %v", cp.Size, err)}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
