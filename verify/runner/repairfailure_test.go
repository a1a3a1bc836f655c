package runner

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/repair"
	"github.com/writ-ledger/writ/rules"
)

// TestClassifyRepair: each refusal's kind, message and hint, rebuilding
// and restoring.
func TestClassifyRepair(t *testing.T) {
	key := &ledger.TrustError{Rule: rules.VKeyMismatch, Log: "decisions", What: "key", Expected: "k+1", Found: "j+2", Err: ledger.ErrVKeyMismatch}
	root := &ledger.TrustError{Rule: rules.RootUntrusted, Log: "authority", What: "root", Err: errors.New("r")}
	other := errors.New("bad export")
	damaged := fmt.Errorf("%w: x", ledger.ErrStoreDamaged)
	for _, tc := range []struct {
		name      string
		err       error
		restoring bool
		kind      FailureKind
		msg       string
		hints     []string
	}{
		{"locked", ledger.ErrLocked, true, FailNotOpened, ledger.ErrLocked.Error(), nil},
		{"no key", repair.ErrNoVKey, false, FailBadInput, repair.ErrNoVKey.Error(), nil},
		{"key given, rebuilding", key, false, FailRefused, "nothing changed: " + key.Error(), nil},
		{"quorum, restoring", formats.ErrQuorum, true, FailRefused, "nothing changed: " + formats.ErrQuorum.Error(), nil},
		{"other, rebuilding", other, false, FailOther, other.Error(), nil},
		{"damaged, restoring", damaged, true, FailOther, damaged.Error(), nil},
		{"export of another key", key, true, FailRefused, "nothing changed: the export was not restored: " + key.Error(),
			[]string{"the export is not of the decisions log '/l l' holds (whose key is k+1): restore an export of that log, or, if its key really changed, pass the export's key with --decisions-vkey KEY"}},
		{"export of another root", root, true, FailRefused, "nothing changed: the export was not restored: " + root.Error(), nil},
		{"export refused", other, true, FailRefused, "nothing changed: the export was not restored: bad export", nil},
	} {
		f := ClassifyRepair(tc.err, "/l l", tc.restoring)
		if f.Kind != tc.kind || f.Err.Error() != tc.msg || !errors.Is(f.Err, tc.err) || !slices.Equal(f.Hints, tc.hints) {
			t.Errorf("%s: got %d %q %q", tc.name, f.Kind, f.Err, f.Hints)
		}
	}
}
