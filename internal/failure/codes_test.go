package failure_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/failure"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/sign"
	"github.com/writ-ledger/writ/verify"
)

// TestCodes: each constructor gives the exit code and hints its doc
// states, and keeps the error it was given in the chain.
func TestCodes(t *testing.T) {
	given := exitcode.Usagef("--passphrase-file is required")
	for _, tc := range []struct {
		name  string
		err   error
		code  int
		hint  string // a substring of the first hint; "" for none
		cause error  // errors.Is target
	}{
		{"open tampered", failure.Open(fmt.Errorf("x: %w", ledger.ErrTampered)), exitcode.No, "", ledger.ErrTampered},
		{"open locked", failure.Open(ledger.ErrLocked), exitcode.Busy, "another writ process", ledger.ErrLocked},
		{"open other", failure.Open(ledger.ErrNotALog), exitcode.Usage, "", ledger.ErrNotALog},
		{"open log: no decision log", failure.OpenLog(ledgerdir.ErrNoDecisionLog, "d"), exitcode.Usage, "", nil},
		{"open log: its own code", failure.OpenLog(given, "d"), exitcode.Usage, "", nil},
		{"open log: token", failure.OpenLog(sign.ErrTokenPIN, "d"), exitcode.Usage, "PIN", sign.ErrTokenPIN},
		{"open log: does not verify", failure.OpenLog(&verify.LoadError{Err: ledger.ErrTampered}, "d"), exitcode.No, "", ledger.ErrTampered},
		{"open log: locked", failure.OpenLog(ledger.ErrLocked, "d"), exitcode.Busy, "another writ process", ledger.ErrLocked},
		{"key", failure.Key(errors.New("bad key")), exitcode.Usage, "", nil},
		{"record malformed", failure.Record(&delegation.RecordError{Rule: delegation.RuleMalformed, Err: errors.New("x")}), exitcode.Usage, "", nil},
		{"record refused", failure.Record(&delegation.RecordError{Rule: delegation.RuleUnknownKey, Err: errors.New("x")}), exitcode.No, "", nil},
		{"record other", failure.Record(errors.New("x")), exitcode.No, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			xe := exitcode.Of(tc.err)
			if xe == nil || xe.Code != tc.code {
				t.Fatalf("%v: exit error %+v, want code %d", tc.err, xe, tc.code)
			}
			if tc.hint != "" && (len(xe.Hints) == 0 || !strings.Contains(xe.Hints[0], tc.hint)) {
				t.Errorf("hints %q, want one containing %q", xe.Hints, tc.hint)
			}
			if tc.cause != nil && !errors.Is(tc.err, tc.cause) {
				t.Errorf("%v does not wrap %v", tc.err, tc.cause)
			}
		})
	}
	if got := failure.OpenLog(given, "d"); got != given {
		t.Errorf("OpenLog replaced an error that carries its code: %v", got)
	}
}

// TestAppended: a failed collection after an append says which entries
// stay appended and not to append them again; an error without an exit
// code is returned as it is.
func TestAppended(t *testing.T) {
	for _, tc := range []struct {
		first, last int64
		want        string
	}{
		{4, 4, "appended as entry 4, but no quorum"},
		{4, 6, "appended as entries 4 to 6, but no quorum"},
	} {
		err := failure.Appended(exitcode.Refused(errors.New("no quorum")), tc.first, tc.last)
		xe := exitcode.Of(err)
		if err.Error() != tc.want || xe.Code != exitcode.No || len(xe.Hints) != 1 || !strings.Contains(xe.Hints[0], "do not append the records again") {
			t.Errorf("Appended(%d, %d) = %q %+v, want %q and the hint", tc.first, tc.last, err, xe, tc.want)
		}
	}
	plain := errors.New("plain")
	if got := failure.Appended(plain, 1, 2); got != plain {
		t.Errorf("Appended(plain) = %v, want it as it is", got)
	}
}
