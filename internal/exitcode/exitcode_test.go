package exitcode_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/writ-ledger/writ/internal/exitcode"
)

// TestOf: the nearest *Error in the chain is returned itself; nothing
// else carries a code.
func TestOf(t *testing.T) {
	usage := exitcode.Input(errors.New("bad"), "hint")
	for _, tc := range []struct {
		name string
		err  error
		code int // -1: Of returns nil
		flag string
	}{
		{"nil", nil, -1, ""},
		{"plain", errors.New("x"), -1, ""},
		{"error", usage, exitcode.Usage, ""},
		{"wrapped error", fmt.Errorf("ctx: %w", usage), exitcode.Usage, ""},
		{"refused", exitcode.Refused(errors.New("no")), exitcode.No, ""},
		{"nearest wins", &exitcode.Error{Code: exitcode.Busy, Flag: "--x", Err: usage}, exitcode.Busy, "--x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := exitcode.Of(tc.err)
			if tc.code < 0 {
				if got != nil {
					t.Fatalf("Of = %+v, want nil", got)
				}
				return
			}
			if got == nil || got.Code != tc.code || got.Flag != tc.flag {
				t.Fatalf("Of = %+v, want code %d flag %q", got, tc.code, tc.flag)
			}
		})
	}
	if got := exitcode.Of(usage); got != usage {
		t.Errorf("Of(*Error) = %p, want the same *Error %p", got, usage)
	}
}
