package verify

import (
	"errors"
	"fmt"
	"time"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
)

// UnwitnessedError is Receipt's refusal under a policy: the checkpoint
// the receipt would carry is not cosigned by the policy's quorum (no
// witness cosigned it: an error wrapping formats.ErrQuorum; or
// formats.Policy.Check's error: a *formats.QuorumError,
// formats.ErrPolicyLog, ...), or is not of the receipt's tree
// (formats.ReceiptCheckpoint's error). Nothing was written. Its message
// is Err's.
type UnwitnessedError struct{ Err error }

func (e *UnwitnessedError) Error() string { return e.Err.Error() }

// Unwrap returns why the receipt was refused.
func (e *UnwitnessedError) Unwrap() error { return e.Err }

// Receipt returns the RFC 9942 receipt of entry index (0-based) of the
// log l, opened with its checkpoint key (ledger.Log.Receipt: signed by
// it, carrying the latest checkpoint with the cosignatures gathered for
// it). With a policy (nil: none) the receipt is returned only when
// exactly the checkpoint it carries meets the policy at now
// (formats.CheckReceipt under l's key); else the error is an
// *UnwitnessedError. Other errors: ledger.Log.Receipt's (an index out of
// range wraps formats.ErrProof) and ledger.VerifyReceipt's.
func Receipt(l *ledger.Log, index int64, policy *formats.Policy, now time.Time) ([]byte, error) {
	r, err := l.Receipt(index)
	if err != nil || policy == nil {
		return r, err
	}
	entry, err := l.Entry(index)
	if err != nil {
		return nil, err
	}
	p, err := ledger.VerifyReceipt(r, entry, l.Key().PublicKey())
	if err != nil {
		return nil, err
	}
	_, err = formats.CheckReceipt(r, p, l.Key(), policy, now)
	var ue *formats.UnwitnessedReceiptError
	if errors.As(err, &ue) && !ue.Carried {
		err = fmt.Errorf("%w: no witness cosigned the latest checkpoint", formats.ErrQuorum)
	} else if ue != nil {
		err = ue.Err
	}
	if err != nil {
		return nil, &UnwitnessedError{Err: err}
	}
	return r, nil
}

// ReceiptProofError is CheckReceipt's error for a receipt that does not
// verify for the entry given under the key (ledger.VerifyReceipt's
// error, wrapping formats.ErrReceipt), explained by ExplainReceipt (a
// *ReceiptEntryError) when the key is a ledger directory's own. Its
// message is Err's.
type ReceiptProofError struct{ Err error }

func (e *ReceiptProofError) Error() string { return e.Err.Error() }

// Unwrap returns the receipt's error.
func (e *ReceiptProofError) Unwrap() error { return e.Err }

// CheckReceipt checks an RFC 9942 receipt for entry (its exact bytes)
// under the log key k given by the caller, or, with k nil, the key the
// authority log of the ledger directory dir stores (ledgerdir.Dir.LogKey):
// the entry is proven into the signed root (ledger.VerifyReceipt), and
// the checkpoint the receipt carries is of that tree and, with a policy
// (nil: none), cosigned by its quorum at now (formats.CheckReceipt).
// Under dir's own key a receipt by another key is not a refusal of a key
// the caller trusted (the *ledger.TrustError is unwrapped), and a
// receipt for other bytes than the log's entry at its index says so
// (ExplainReceipt). It returns what the receipt proves: writ ledger
// verify-receipt's result. Errors: dir's log not opened, as a
// *ledgerdir.OpenError; a *ReceiptProofError when the entry is not
// proven; else formats.CheckReceipt's (an
// *formats.UnwitnessedReceiptError, errors wrapping formats.ErrReceipt).
func CheckReceipt(receipt, entry []byte, k *formats.LogKey, dir ledgerdir.Dir, policy *formats.Policy, now time.Time) (*formats.VerifiedReceipt, error) {
	if k == nil {
		var err error
		if k, err = dir.LogKey(ledgerdir.AuthorityLog); err != nil {
			return nil, &ledgerdir.OpenError{Err: err}
		}
	} else {
		dir = "" // a key the caller gave: no explanation from a directory
	}
	p, err := ledger.VerifyReceipt(receipt, entry, k.PublicKey())
	var te *ledger.TrustError
	if errors.As(err, &te) && dir != "" {
		err = te.Err // the key is the ledger's own, not one the caller gave
	}
	if err != nil && dir != "" {
		err = ExplainReceipt(dir, receipt, entry, err)
	}
	if err != nil {
		return nil, &ReceiptProofError{Err: err}
	}
	return formats.CheckReceipt(receipt, p, k, policy, now)
}
