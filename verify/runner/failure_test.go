package runner

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/ledger/tiles"
)

// TestClassifySync: each failure's kind, its message (prefixed "nothing
// synced: " but for a wrong key and a store not opened), its hints and
// its evidence lines (both signed checkpoints of a split view or a fork).
func TestClassifySync(t *testing.T) {
	inc := &ledger.InconsistencyError{Why: "fork", TrustedSigned: []byte("a\n"), FoundSigned: []byte("b\n")}
	for _, tc := range []struct {
		name  string
		err   error
		kind  FailureKind
		pre   bool
		hints []string
		evid  []string
	}{
		{"split view", &replica.SplitViewError{Source: "witness w", InconsistencyError: inc}, FailRefused, true,
			[]string{"treat the log as split: its key signed both; stop trusting it until its operators explain them"},
			[]string{"the published signed checkpoint:", "  a", "witness w's signed checkpoint:", "  b"}},
		{"inconsistent", fmt.Errorf("x: %w", inc), FailRefused, true, nil,
			[]string{"the replica's signed checkpoint:", "  a", "the published signed checkpoint:", "  b"}},
		{"record", &delegation.RecordError{Rule: "r", Err: errors.New("no")}, FailRecordRefused, true, nil, nil},
		{"signature", formats.ErrCheckpointSignature, FailRefused, true, nil, nil},
		{"tampered", ledger.ErrTampered, FailRefused, true, nil, nil},
		{"policy log", formats.ErrPolicyLog, FailBadInput, true, []string{"give the policy of this log: its `log` line is the log's verifier key"}, nil},
		{"quorum", formats.ErrQuorum, FailRefused, true, []string{
			"the writer collects its witnesses' cosignatures with `writ ledger checkpoint --refresh --policy`; sync again once they have cosigned",
			"if the writer asks other witnesses than this policy requires, the two policies must be made to agree"}, nil},
		{"fetch", fmt.Errorf("%w: stalled", tiles.ErrFetch), FailBadInput, true, []string{"check --from; a source that stalls or sends more than a file can hold is cut off"}, nil},
		{"wrong key", ledger.ErrWrongKey, FailBadInput, false, nil, nil},
		{"locked", ledger.ErrLocked, FailNotOpened, false, nil, nil},
	} {
		f := ClassifySync(tc.err)
		msg := tc.err.Error()
		if tc.pre {
			msg = "nothing synced: " + msg
		}
		if f.Kind != tc.kind || f.Err.Error() != msg || !errors.Is(f.Err, tc.err) || !slices.Equal(f.Hints, tc.hints) || !slices.Equal(f.Evidence, tc.evid) {
			t.Errorf("%s: got %d %q %q %q", tc.name, f.Kind, f.Err, f.Hints, f.Evidence)
		}
	}
}
