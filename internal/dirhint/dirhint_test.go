package dirhint

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"github.com/writ-ledger/writ/internal/exitcode"
)

func TestExplain(t *testing.T) {
	eisdir := func(path string) error { return &fs.PathError{Op: "read", Path: path, Err: syscall.EISDIR} }
	for _, tc := range []struct {
		name string
		args []string
		err  error
		want string // "" : the error as it was
	}{
		{"a flag's value", []string{"writ", "verify", "--key", "d", "--", "x"}, exitcode.Input(eisdir("d")), "--key d is a directory; a file is expected here"},
		{"flag=value", []string{"writ", "verify", "--key=d", "--", "x"}, exitcode.Input(eisdir("d")), "--key d is a directory; a file is expected here"},
		{"an argument after a switch", []string{"writ", "--json", "verify", "--key", "k", "--", "d"}, exitcode.Input(eisdir("d")), "the argument d is a directory; a file is expected here"},
		{"the file flag wins", []string{"writ", "audit", "--ledger", "d", "--state", "d"}, exitcode.Input(eisdir("d")), "--state d is a directory; a file is expected here"},
		{"a path inside --dir", []string{"writ", "ledger", "checkpoint", "--dir", "L"}, exitcode.Input(fmt.Errorf("checkpoint key: %w", eisdir("L/checkpoint.key"))), ""},
		{"no EISDIR", []string{"writ", "verify", "--key", "d"}, exitcode.Input(errors.New("other")), ""},
	} {
		got := Explain(tc.args, tc.err)
		if tc.want == "" {
			if got != tc.err {
				t.Errorf("%s: %v, want the error unchanged (%v)", tc.name, got, tc.err)
			}
			continue
		}
		var ee *exitcode.Error
		if !errors.As(got, &ee) || ee.Code != exitcode.Usage || got.Error() != tc.want {
			t.Errorf("%s: %v, want exit 2 %q", tc.name, got, tc.want)
		}
	}
}
