package verify

import (
	"fmt"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/rules"

	"github.com/writ-ledger/writ/schemas"
)

// History is what a runner remembers of its own past decisions: which
// instruction ids it admitted (replay) and who holds a work claim on each
// stream. The product's History is the runner's decision log (with what
// this process has queued but not yet committed); tests may pass their
// own. A nil History remembers nothing.
type History interface {
	// Admitted returns the decision index at which instruction id was
	// admitted (-1 while that decision is being recorded), and false if
	// it never was. Errors mean the memory cannot be read, and refuse the
	// dispatch under rules.Internal.
	Admitted(id string) (int64, bool, error)
	// Claim returns the latest work claim recorded on stream, or nil.
	// Errors as Admitted.
	Claim(stream string) (*HeldClaim, error)
}

// HeldClaim is a work claim as a runner recorded it: the claim, the key id
// (64 hex) of the verified signer whose instruction made it, and the
// decision index (-1 while being recorded). A claim is held by its
// session and its signer together: another key naming the same session
// does not hold it.
type HeldClaim struct {
	schemas.Claim
	Signer string
	Index  int64
}

// ReceiptVerifier proves that entry (the exact dispatch bytes) is in the
// authority log at or below a checkpoint the runner verified, from an RFC
// 9942 receipt. The runner's is its verified authority snapshot.
type ReceiptVerifier interface {
	VerifyReceipt(receipt, entry []byte) error
}

// checkHistory refuses a replayed instruction id and an instruction for a
// stream another session has claimed.
func (a *admission) checkHistory() {
	h, instr := a.cfg.History, a.instr
	if h == nil || instr == nil {
		return
	}
	if i, ok, err := h.Admitted(instr.ID); err != nil {
		a.fail(rules.Internal, "reading this runner's decision log for replay: %v", err)
		return
	} else if ok {
		a.fail(rules.Replay, "instruction %s was already admitted on this runner (%s)", instr.ID, decisionRef(i))
	} else {
		a.pass("no-replay")
	}
	c, err := h.Claim(instr.Stream)
	switch {
	case err != nil:
		a.fail(rules.Internal, "reading this runner's decision log for work claims: %v", err)
	case c == nil || c.Release || a.now.Unix() >= c.Until:
		a.pass("work-unclaimed")
	case !a.holderStands(c, instr.Stream):
		// The holder's key was revoked or lost its delegation: its claim
		// no longer holds the stream (else a compromised key could lock
		// streams for 30 days that its revocation cannot free).
		a.pass("work-claim-holder-lost-authority")
	case instr.Claim != nil && instr.Claim.Session == c.Session && a.authorized && a.v.Signer == c.Signer:
		a.pass("work-claim-held")
	default:
		from := "no session"
		if instr.Claim != nil {
			from = "session " + instr.Claim.Session
		}
		switch {
		case !a.authorized:
			from += ", without a verified, delegated signature"
		case a.v.Signer != c.Signer:
			from += ", signed by key " + a.v.Signer
		}
		a.fail(rules.WorkClaimed, "stream %s is claimed by session %s (key %s) until %s (%s); this instruction comes from %s",
			instr.Stream, c.Session, c.Signer, unixUTC(c.Until), decisionRef(c.Index), from)
	}
}

// holderStands reports whether the key that made claim c may still
// instruct on stream for this machine, now.
func (a *admission) holderStands(c *HeldClaim, stream string) bool {
	if a.st == nil {
		return true
	}
	k, ok := a.st.Key(c.Signer)
	if !ok {
		return false
	}
	_, err := a.st.Authorize(delegation.Request{Key: k, Action: schemas.ActionInstruct, Stream: stream, Machine: a.cfg.Machine, At: a.now})
	return err == nil
}

// decisionRef names decision i, or one still being committed (i < 0).
func decisionRef(i int64) string {
	if i < 0 {
		return "by a decision being recorded now"
	}
	return fmt.Sprintf("decision %d", i)
}

// checkReceipt checks the receipt that came with the dispatch, if any,
// and requires one when the runner is configured to: a receipt given is
// never ignored.
func (a *admission) checkReceipt(d Dispatch) {
	switch {
	case !d.hasReceipt() && !a.cfg.RequireReceipt:
		return
	case !d.hasReceipt():
		a.fail(rules.ReceiptMissing, "this runner requires a receipt (--require-receipt) and the dispatch came without one")
	case a.cfg.Receipts == nil:
		a.fail(rules.ReceiptInvalid, "no verified authority log to check the receipt against")
	default:
		if err := a.cfg.Receipts.VerifyReceipt(d.Receipt, d.Raw); err != nil {
			a.fail(rules.ReceiptInvalid, "the receipt does not prove these dispatch bytes (%s) are in the authority log this runner verified: %v", a.v.InstructionDigest, err)
		} else {
			a.pass("receipt")
		}
	}
}
