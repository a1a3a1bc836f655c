// Package dirhint names the flag or argument a directory was given as
// where writ reads a file, and says what belongs there instead: the
// bad input (exit 2) of a command line that gave a directory for a key,
// an export, a state file or a policy.
package dirhint

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
)

// hints says, for the flags that take a file and are most often given
// a directory, what belongs there instead.
var hints = map[string]string{
	"key":    "a key is the file writ key generate --out PREFIX wrote: PREFIX.key (private, to sign) or PREFIX.pub (public, to verify)",
	"to":     "the delegate's public key is the file PREFIX.pub that writ key generate --out PREFIX wrote",
	"pub":    "a root key is the public key file PREFIX.pub that writ key generate --out PREFIX wrote",
	"export": "an export is the file writ ledger export --out FILE wrote; a ledger directory is audited with --ledger DIR",
	"state":  "the auditor's state is a file (created by the first good audit), such as audit-state.json",
	"policy": "a witness policy is a text file of log, witness, group and quorum lines (C2SP tlog-policy)",
}

// Explain turns an error that came from reading a directory as a file
// (EISDIR, anywhere in err) into the bad input of Error, naming the flag
// or argument the directory was given as, with what belongs there. args
// is a command line as cliflags.Interspersed leaves it: flags and their
// values, then "--", then the arguments. A directory the user did not
// name (a file inside --dir), and every other error, is returned as it
// is. The caller decides which errors to explain: a verdict of no keeps
// its own code.
func Explain(args []string, err error) error {
	var pe *fs.PathError
	if err == nil || !errors.Is(err, syscall.EISDIR) || !errors.As(err, &pe) {
		return err
	}
	flags, positional := args, []string(nil)
	if i := slices.Index(args, "--"); i >= 0 {
		flags, positional = args[:i], args[i+1:]
	}
	if slices.Contains(positional, pe.Path) {
		e := Error("", pe.Path)
		var de *dirError
		if errors.As(e, &de) {
			de.what = "the argument " + pe.Path
		}
		return e
	}
	flag := ""
	for i, a := range flags {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		// Before "--" a word that is not a flag is the value of the flag
		// before it: Interspersed moved every argument after "--".
		name, value, ok := strings.Cut(a, "=")
		if !ok && i+1 < len(flags) && !strings.HasPrefix(flags[i+1], "-") {
			value = flags[i+1]
		} else if !ok {
			continue // a switch
		}
		if value == pe.Path {
			// The same directory may be given to a flag that takes one
			// (--ledger d --state d): the flag that takes a file wins.
			if _, known := hints[flag]; flag == "" || !known {
				flag = strings.TrimLeft(name, "-")
			}
		}
	}
	if flag == "" {
		return err
	}
	return Error(flag, pe.Path)
}

// Error is the bad input (an *exitcode.Error, exit 2) of a directory
// given where a file is read: as --flag, or (flag "") as an argument or
// where the command line does not say. It wraps a *fs.PathError with
// EISDIR, so Explain can name the flag when the path is a flag's value.
// Its hints say what belongs there, and that path is a ledger directory
// when it is one.
func Error(flag, path string) error {
	what := path
	if flag != "" {
		what = "--" + flag + " " + path
	}
	var hs []string
	if h, ok := hints[flag]; ok {
		hs = append(hs, h)
	}
	if _, serr := os.Stat(filepath.Join(path, ledgerdir.AuthorityDir)); serr == nil {
		hs = append(hs, path+" is a ledger directory: a ledger is given with --dir (or --ledger)")
	}
	return &exitcode.Error{Code: exitcode.Usage, Err: &dirError{what: what, pe: &fs.PathError{Op: "read", Path: path, Err: syscall.EISDIR}}, Hints: hs}
}

// dirError says that what (a flag and its value, or a path) is a
// directory where a file is read; it unwraps to the EISDIR path error.
type dirError struct {
	what string
	pe   *fs.PathError
}

func (e *dirError) Error() string { return e.what + " is a directory; a file is expected here" }
func (e *dirError) Unwrap() error { return e.pe }
