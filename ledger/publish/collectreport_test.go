package publish_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/publish"
	"github.com/writ-ledger/writ/ledger/witness"
)

// TestCollectedReport: each witness's answer line, the refusal's
// message, and the hints, in order, the retry last.
func TestCollectedReport(t *testing.T) {
	res := publish.Collected{Checkpoint: formats.Checkpoint{Origin: "o.example", Size: 7}, Witnesses: []publish.WitnessResult{
		{Name: "a", Elapsed: 1234567 * time.Nanosecond},
		{Name: "b", Resent: true, Old: 3, Elapsed: 2 * time.Millisecond},
		{Name: "c", Err: fmt.Errorf("post: %w", context.DeadlineExceeded)},
		{Name: "d", URL: "https://d.example/", Err: witness.ErrInconsistent},
		{Name: "e", Err: publish.ErrBadCosignature},
		{Name: "f", Err: witness.ErrUnknownLog},
		{Name: "g", Err: errors.New("x\ny")},
	}}
	answers := res.Answers(5 * time.Second)
	want := []publish.AnswerLine{
		{true, "witness a cosigned size 7 in 1ms"},
		{true, "witness b cosigned size 7 in 2ms, after resending from the size it held (3)"},
		{false, "witness c: post: context deadline exceeded (no answer within --witness-timeout 5s)"},
		{false, "witness d: " + witness.ErrInconsistent.Error()},
		{false, "witness e: " + publish.ErrBadCosignature.Error()},
		{false, "witness f: " + witness.ErrUnknownLog.Error()},
		{false, "witness g: x y"},
	}
	if !reflect.DeepEqual(answers, want) {
		t.Errorf("answers:\n%+v\nwant\n%+v", answers, want)
	}
	hints := res.Hints("p.txt", "/l")
	wantHints := []string{
		"witness d holds a different history of this log (a fork, or a ledger restored from an older backup): do not retry; compare with `writ witness checkpoint --url https://d.example/ --origin o.example` and investigate",
		"witness e answered, but not under the key the policy gives it: check its witness line against the witness's verifier key",
		"witness f does not witness this log under this key: its operator adds the log's verifier key (`writ witness serve --log`)",
		"run `writ ledger checkpoint --refresh --policy p.txt --dir /l` once the witnesses answer; runners with this policy keep the last witnessed checkpoint until then",
	}
	if !reflect.DeepEqual(hints, wantHints) {
		t.Errorf("hints:\n%q", hints)
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{formats.ErrQuorum, "the new checkpoint (size 7) is not witnessed: " + formats.ErrQuorum.Error()},
		{ledger.ErrHeadMoved, "collecting cosignatures: " + ledger.ErrHeadMoved.Error() + " (another writer signed a newer checkpoint meanwhile)"},
		{errors.New("other"), "collecting cosignatures: other"},
	} {
		if got := res.Refusal(tc.err); got.Error() != tc.want || !errors.Is(got, tc.err) {
			t.Errorf("Refusal(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
