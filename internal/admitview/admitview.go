// Package admitview is an admission verdict as writ prints it: one
// printer for writ admit (the decision the runner made here) and writ
// admission request (the answer of an admission server), the lines
// people read and the object --json prints.
package admitview

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/writ-ledger/writ/admission"
	"github.com/writ-ledger/writ/internal/humanize"
	"github.com/writ-ledger/writ/internal/jsonobject"
)

// JSON is the verdict as one JSON object: when served is false (writ
// admit) the decision, its keys sorted as a map's; when it is true (writ
// admission request) the server's whole answer, its keys sorted at every
// level, as writ has always printed it.
func JSON(res *admission.Response, served bool) ([]byte, error) {
	if !served {
		return jsonobject.Sorted(res.Decision)
	}
	obj, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	return jsonobject.SortedAll(obj)
}

// Lines are the verdict as people read it, five lines: the verdict, the
// rule and its class, the reason (on one line, humanize.OneLine), the
// next act, then the mode, the instruction id and the signer ("none"
// when empty, humanize.OrNone) and the decision index (decisionText).
func Lines(res *admission.Response) []string {
	v := &res.Verdict
	return []string{
		"verdict: " + string(v.Verdict),
		fmt.Sprintf("rule: %s (%s)", v.Rule, v.Class),
		"reason: " + humanize.OneLine(v.Reason),
		"next act: " + v.NextAct,
		fmt.Sprintf("mode: %s  instruction: %s  signer: %s  decision: %s", v.Mode, humanize.OrNone(v.InstructionID), humanize.OrNone(v.Signer), decisionText(res.DecisionIndex)),
	}
}

// decisionText is a decision index as the text prints it: the index, or
// <nil> when the decision was not recorded (the error says why).
func decisionText(index *int64) string {
	if index == nil {
		return "<nil>"
	}
	return strconv.FormatInt(*index, 10)
}
