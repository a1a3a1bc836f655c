package publish

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/writ-ledger/writ/internal/humanize"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/witness"
)

// AnswerLine is one witness's answer to a collection, for people.
type AnswerLine struct {
	Cosigned bool   // the witness cosigned (else Text says why not)
	Text     string // one line, escaped (humanize.OneLine)
}

// Answers says what each witness answered, in policy order: "witness
// NAME cosigned size N in ELAPSED" (in milliseconds, with the size it
// held when it was resent from it), or "witness NAME: ERROR", with, for
// a witness that did not answer in time, the timeout (writ's
// --witness-timeout).
func (c Collected) Answers(timeout time.Duration) []AnswerLine {
	var out []AnswerLine
	for _, w := range c.Witnesses {
		if w.Err != nil {
			msg := humanize.OneLine(w.Err.Error())
			if errors.Is(w.Err, context.DeadlineExceeded) {
				msg += fmt.Sprintf(" (no answer within --witness-timeout %s)", timeout)
			}
			out = append(out, AnswerLine{Text: fmt.Sprintf("witness %s: %s", w.Name, msg)})
			continue
		}
		resent := ""
		if w.Resent {
			resent = fmt.Sprintf(", after resending from the size it held (%d)", w.Old)
		}
		out = append(out, AnswerLine{Cosigned: true, Text: fmt.Sprintf("witness %s cosigned size %d in %s%s", w.Name, c.Checkpoint.Size, w.Elapsed.Round(time.Millisecond), resent)})
	}
	return out
}

// Refusal says CollectCosignatures' error err (not nil) for people: a
// quorum not met names the checkpoint's size; a head that moved says
// another writer signed meanwhile. It wraps err.
func (c Collected) Refusal(err error) error {
	switch {
	case errors.Is(err, formats.ErrQuorum):
		return fmt.Errorf("the new checkpoint (size %d) is not witnessed: %w", c.Checkpoint.Size, err)
	case errors.Is(err, ledger.ErrHeadMoved):
		return fmt.Errorf("collecting cosignatures: %w (another writer signed a newer checkpoint meanwhile)", err)
	}
	return fmt.Errorf("collecting cosignatures: %w", err)
}

// Hints says what to do when a collection falls short, from what the
// witnesses answered (a retry helps only when they did not answer): one
// line for each witness that holds another history, answered under
// another key or does not witness this log, then the retry, `writ ledger
// checkpoint --refresh` with the policy file policy and the ledger
// directory dir, written as given.
func (c Collected) Hints(policy, dir string) []string {
	var out []string
	for _, w := range c.Witnesses {
		switch {
		case errors.Is(w.Err, witness.ErrInconsistent), errors.Is(w.Err, ErrWitnessAhead):
			out = append(out, "witness "+w.Name+" holds a different history of this log (a fork, or a ledger restored from an older backup): do not retry; compare with `writ witness checkpoint --url "+w.URL+" --origin "+c.Checkpoint.Origin+"` and investigate")
		case errors.Is(w.Err, ErrBadCosignature):
			out = append(out, "witness "+w.Name+" answered, but not under the key the policy gives it: check its witness line against the witness's verifier key")
		case errors.Is(w.Err, witness.ErrUnknownLog), errors.Is(w.Err, witness.ErrForbidden):
			out = append(out, "witness "+w.Name+" does not witness this log under this key: its operator adds the log's verifier key (`writ witness serve --log`)")
		}
	}
	return append(out, "run `writ ledger checkpoint --refresh --policy "+policy+" --dir "+dir+"` once the witnesses answer; runners with this policy keep the last witnessed checkpoint until then")
}
