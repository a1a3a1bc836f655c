package failure_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/failure"
	"github.com/writ-ledger/writ/internal/fileio"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/repair"
	"github.com/writ-ledger/writ/ledger/witness"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
	"github.com/writ-ledger/writ/transfer"
)

// TestClassify: each class of error an unmarked command returns gets its
// exit code, wrapped or not.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{delegation.ErrRefused, exitcode.No},
		{fmt.Errorf("append: %w", ledger.ErrTampered), exitcode.No},
		{transfer.ErrDigestMismatch, exitcode.No},
		{sign.ErrBadSignature, exitcode.No},
		{formats.ErrQuorum, exitcode.No},
		{fmt.Errorf("decode: %w", schemas.ErrMalformed), exitcode.Usage},
		{sign.ErrWrongPassphrase, exitcode.Usage},
		{&fs.PathError{Op: "open", Path: "x", Err: fs.ErrNotExist}, exitcode.Usage},
		{sign.ErrTokenPIN, exitcode.Usage},
		{ledger.ErrWrongKey, exitcode.Usage},
		{errors.New(`Required flag "dir" not set`), exitcode.Usage},
		{errors.New("No help topic for 'nosuch'"), exitcode.Usage},
		{errors.New("disk on fire"), exitcode.Internal},
	} {
		if got := failure.Classify(tc.err); got != tc.want {
			t.Errorf("Classify(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// TestTrustRefusal: the flag and rule of each refused assertion.
func TestTrustRefusal(t *testing.T) {
	for _, tc := range []struct {
		name       string
		err        error
		flag, rule string
		ok         bool
	}{
		{"root", &ledger.TrustError{Rule: rules.RootUntrusted, What: "first root"}, "--trust-root", rules.RootUntrusted, true},
		{"decisions", fmt.Errorf("open: %w", &ledger.TrustError{Rule: rules.VKeyMismatch, Log: "decisions"}), "--decisions-vkey", rules.VKeyMismatch, true},
		{"authority", &ledger.TrustError{Rule: rules.VKeyMismatch, Log: "authority"}, "--vkey", rules.VKeyMismatch, true},
		{"quorum", fmt.Errorf("checkpoint: %w", formats.ErrQuorum), "--policy", rules.LedgerUnwitnessed, true},
		{"marked", &exitcode.Error{Code: exitcode.No, Err: errors.New("x"), Flag: "--fleet f", Rule: rules.VKeyMismatch}, "--fleet f", rules.VKeyMismatch, true},
		{"marked without flag", exitcode.Input(errors.New("x")), "", "", false},
		{"other", errors.New("x"), "", "", false},
	} {
		flag, rule, ok := failure.TrustRefusal(tc.err)
		if flag != tc.flag || rule != tc.rule || ok != tc.ok {
			t.Errorf("%s: TrustRefusal = %q, %q, %v; want %q, %q, %v", tc.name, flag, rule, ok, tc.flag, tc.rule, tc.ok)
		}
	}
}

// TestRule: the rule id each refusal carries, "" for none.
func TestRule(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&ledger.StoreError{Dir: "d", Problem: "p"}, rules.StoreDamaged},
		{&ledger.StoreError{Dir: "d", Problem: "p", Lost: true}, rules.StoreUnrecovered},
		{fmt.Errorf("x: %w", &delegation.Denial{Rule: "signer-unauthorized"}), "signer-unauthorized"},
		{&delegation.RecordError{Rule: "root-version", Err: errors.New("v")}, "root-version"},
		{formats.ErrQuorum, rules.LedgerUnwitnessed},
		{errors.New("x"), ""},
	} {
		if got := failure.Rule(tc.err); got != tc.want {
			t.Errorf("Rule(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// TestReport: the exact lines on stderr, text and --json, and the exit
// code, for each kind of failure.
func TestReport(t *testing.T) {
	store := &ledger.StoreError{Dir: "d", Problem: "bad"}
	root, _ := rules.Lookup(rules.RootUntrusted)
	inc := &ledger.InconsistencyError{Why: "fork"}
	for _, tc := range []struct {
		name       string
		err        error
		code       int
		text, json string
	}{
		{"nil", nil, exitcode.OK, "", ""},
		{"internal", errors.New("boom\nx"), exitcode.Internal,
			"writ: error: internal error: boom x\n",
			`{"error":"internal error: boom\nx","exit":3,"rule":"","hints":[]}` + "\n"},
		{"marked", exitcode.Input(errors.New("bad <x>"), "h1", "h2"), exitcode.Usage,
			"writ: error: bad <x>\nwrit: hint: h1\nwrit: hint: h2\n",
			`{"error":"bad \u003cx\u003e","exit":2,"rule":"","hints":["h1","h2"]}` + "\n"},
		{"evidence lines", &exitcode.Error{Code: exitcode.No, Err: errors.New("nothing synced: fork"), Hints: []string{"h"}, Evidence: []string{"the published signed checkpoint:", "  o"}}, exitcode.No,
			"writ: error: nothing synced: fork\nwrit: hint: h\nwrit: evidence: the published signed checkpoint:\nwrit: evidence:   o\n",
			`{"error":"nothing synced: fork","exit":1,"rule":"","hints":["h"],"evidence_lines":["the published signed checkpoint:","  o"]}` + "\n"},
		{"silent", &exitcode.Error{Code: exitcode.No, Err: errors.New("refused"), Silent: true}, exitcode.No, "", ""},
		{"locked", fmt.Errorf("open: %w", ledger.ErrLocked), exitcode.Busy,
			"writ: error: open: log is in use by another process\nwrit: hint: " + failure.LockedHint + "\n",
			`{"error":"open: log is in use by another process","exit":4,"rule":"","hints":["` + failure.LockedHint + `"]}` + "\n"},
		{"witness locked", witness.ErrLocked, exitcode.Busy,
			"writ: error: witness: state directory is in use by another process\n",
			`{"error":"witness: state directory is in use by another process","exit":4,"rule":"","hints":[]}` + "\n"},
		// A refused trust assertion no command marked: a verdict of no,
		// its message as an internal error's (as it always was).
		{"trust", &ledger.TrustError{Rule: rules.RootUntrusted, What: "first root differs", Expected: "a", Found: "b"}, exitcode.No,
			"writ: error: --trust-root: internal error: " + (&ledger.TrustError{Rule: rules.RootUntrusted, What: "first root differs", Expected: "a", Found: "b"}).Error() + "\nwrit: hint: " + root.ReportAct + "\n", ""},
		{"store", fmt.Errorf("open: %w", store), exitcode.No,
			"writ: error: open: store-damaged: d: bad\nwrit: hint: " + repair.NextAct(store) + "\n",
			`{"error":"open: store-damaged: d: bad","exit":1,"rule":"store-damaged","hints":["` + strings.ReplaceAll(repair.NextAct(store), `"`, `\"`) + `"]}` + "\n"},
		{"inconsistent", inc, exitcode.Internal,
			"writ: error: internal error: " + inc.Error() + "\nwrit: hint: keep the evidence: with --json the error carries both checkpoints (as signed notes where writ had them) and the proof, to check elsewhere\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var text, js bytes.Buffer
			if got := failure.Report(&text, tc.err, false); got != tc.code {
				t.Errorf("Report = %d, want %d", got, tc.code)
			}
			if got := failure.Report(&js, tc.err, true); got != tc.code {
				t.Errorf("Report --json = %d, want %d", got, tc.code)
			}
			if text.String() != tc.text {
				t.Errorf("text:\n%q\nwant\n%q", text.String(), tc.text)
			}
			if tc.json != "" && js.String() != tc.json {
				t.Errorf("json:\n%s\nwant\n%s", js.String(), tc.json)
			}
		})
	}
}

// TestDescribeEvidence: an inconsistent log's failure carries its
// evidence; the rule of a refused trust assertion is its rule.
func TestDescribeEvidence(t *testing.T) {
	f := failure.Describe(fmt.Errorf("sync: %w", &ledger.InconsistencyError{Why: "fork"}))
	if f.Evidence == nil || f.Evidence.Why != "fork" {
		t.Errorf("Evidence = %+v, want Why fork", f.Evidence)
	}
	f = failure.Describe(&ledger.TrustError{Rule: rules.RootUntrusted, What: "w"})
	if f.Rule != rules.RootUntrusted || f.Exit != exitcode.No || !strings.HasPrefix(f.Error, "--trust-root: ") {
		t.Errorf("Describe = %+v", f)
	}
}

// TestTokenHint: one next act per kind of token failure, none for other
// errors.
func TestTokenHint(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string // a part of the hint, "" for none
	}{
		{sign.ErrTokenURI, "pkcs11:token=LABEL;object=LABEL"},
		{fmt.Errorf("load: %w", sign.ErrTokenModule), "module-path="},
		{sign.ErrTokenNotFound, "token= is the token's label"},
		{sign.ErrTokenPIN, "user PIN alone"},
		{sign.ErrTokenObject, "object= is the key's label"},
		{errors.Join(sign.ErrToken, sign.ErrExists), "choose another object= label"},
		{sign.ErrExists, ""},
		{errors.New("x"), ""},
	} {
		got := failure.TokenHint(tc.err)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("TokenHint(%v) = %q, want one with %q", tc.err, got, tc.want)
		}
	}
}

// TestDescribePartialOutput: an output cut short after bytes went out
// keeps its error's exit code and says to discard them, before the
// error's own hints.
func TestDescribePartialOutput(t *testing.T) {
	err := &fileio.PartialOutputError{To: "standard output", N: 4096, Err: exitcode.Refused(errors.New("entry 2: entry missing"), "run repair")}
	f := failure.Describe(err)
	want := []string{"the 4096 bytes written to standard output before the error are an incomplete output: discard them", "run repair"}
	if f.Exit != exitcode.No || f.Error != "entry 2: entry missing" || !slices.Equal(f.Hints, want) {
		t.Fatalf("Describe = %+v, want exit 1 with hints %q", f, want)
	}
}
