package formats

import (
	"encoding/hex"
	"fmt"
	"time"
)

// VerifiedReceipt is what a receipt that verified for an entry proves
// (CheckReceipt): writ ledger verify-receipt's JSON result.
type VerifiedReceipt struct {
	Valid          bool        `json:"valid" doc:"true"`
	Index          int64       `json:"index" doc:"the entry, as the receipt says (not signed)"`
	TreeSize       int64       `json:"tree_size" doc:"the tree size, as the receipt says (not signed)"`
	PositionSigned bool        `json:"position_signed" doc:"false: RFC 9942 signs the root only"`
	RootHash       string      `json:"root_hash" doc:"the signed root hash, hex"`
	Witnessing     *Witnessing `json:"witnessing,omitempty" doc:"with --policy: the quorum that cosigned the receipt's checkpoint"`
}

// UnwitnessedReceiptError is CheckReceipt's error for a receipt whose
// tree the policy's quorum did not cosign: it carries no checkpoint
// (Carried false; the error wraps ErrReceipt and ErrQuorum), or the one it
// carries does not meet the policy (Err, Policy.Check's error: a
// *QuorumError, ErrPolicyLog, ...).
type UnwitnessedReceiptError struct {
	Carried bool  // whether the receipt carries a checkpoint
	Err     error // with Carried, why the policy refuses it
}

func (e *UnwitnessedReceiptError) Error() string {
	if !e.Carried {
		return fmt.Sprintf("%v: %v: it carries no checkpoint, so no witness cosigned its tree", ErrReceipt, ErrQuorum)
	}
	return "the receipt's checkpoint: " + e.Err.Error()
}

// Unwrap returns ErrReceipt and ErrQuorum, or the policy's error.
func (e *UnwitnessedReceiptError) Unwrap() []error {
	if !e.Carried {
		return []error{ErrReceipt, ErrQuorum}
	}
	return []error{e.Err}
}

// CheckReceipt is the witnessed-receipt check: p is the inclusion proof of
// a receipt that verified for its entry under the log key k
// (VerifyReceipt); the checkpoint the receipt carries must verify under k
// and be of p's tree (ReceiptCheckpoint, errors wrapping ErrReceipt), and
// with a policy (nil: none) it must be cosigned by the policy's quorum at
// now (else an *UnwitnessedReceiptError). It returns what the receipt
// proves, with the policy's Witnessing.
func CheckReceipt(receipt []byte, p *InclusionProof, k *LogKey, policy *Policy, now time.Time) (*VerifiedReceipt, error) {
	out := &VerifiedReceipt{Valid: true, Index: p.Index, TreeSize: p.TreeSize, RootHash: hex.EncodeToString(p.RootHash[:])}
	cp, err := ReceiptCheckpoint(receipt, p, k)
	if err != nil {
		return nil, err
	}
	if policy == nil {
		return out, nil
	}
	if cp == nil {
		return nil, &UnwitnessedReceiptError{}
	}
	w, err := policy.Check(cp, k, now)
	if err != nil {
		return nil, &UnwitnessedReceiptError{Carried: true, Err: err}
	}
	out.Witnessing = &w
	return out, nil
}
