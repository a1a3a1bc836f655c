package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"filippo.io/age"
	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/sign"
	"golang.org/x/term"
)

// maxInput bounds any file writ reads whole (records, briefs, passphrase
// files), in bytes; records are limited to 65,535 bytes anyway.
const maxInput = 1 << 20

// readInput reads a whole input file, or stdin for "-". It returns bad
// input (exit 2) for an unreadable or oversized file. The boolean reports
// whether the input was larger than limit, in which case the returned
// bytes are its first limit+1 bytes.
func readInput(c *cli.Context, path string, limit int64) ([]byte, bool, error) {
	var r io.Reader
	if path == "-" {
		r = c.App.Reader
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, false, inputErr(err)
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.IsDir() {
			// explainDirectory names the flag or argument it was given as.
			return nil, false, directoryErr("", path)
		}
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, false, inputErr(fmt.Errorf("reading %s: %w", path, err))
	}
	return data, int64(len(data)) > limit, nil
}

// readWhole is readInput that treats an oversized input as bad input.
func readWhole(c *cli.Context, path string, limit int64) ([]byte, error) {
	data, over, err := readInput(c, path, limit)
	if err == nil && over {
		err = inputErr(fmt.Errorf("%s: larger than %d bytes", path, limit))
	}
	return data, err
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// writeOutput writes binary output to a file, or to stdout for "-" unless
// stdout is a terminal.
func writeOutput(c *cli.Context, path string, data []byte) error {
	if path == "" {
		return usageErr("--out is required (a file, or - for stdout)")
	}
	if path == "-" {
		if isTerminal(c.App.Writer) {
			return usageErr("refusing to write binary output to a terminal; use --out FILE or redirect stdout")
		}
		_, err := c.App.Writer.Write(data)
		return err
	}
	return writeNew(path, data)
}

// checkOutput refuses, before any costly work, an output writeOutput
// would refuse at the end: no path, a terminal for "-", or an existing
// file that is not a device or pipe. writeOutput still checks again.
func checkOutput(c *cli.Context, flag, path string) error {
	switch {
	case path == "":
		return usageErr("--%s is required (a file, or - for stdout)", flag)
	case path == "-":
		if isTerminal(c.App.Writer) {
			return usageErr("refusing to write binary output to a terminal; use --out FILE or redirect stdout")
		}
		return nil
	}
	// As writeNew: a device or pipe, also behind a symlink (/dev/fd/N of
	// a shell's process substitution), is written to; anything else that
	// exists is refused.
	if fi, err := os.Stat(path); err == nil && fi.Mode()&(os.ModeCharDevice|os.ModeNamedPipe) != 0 {
		return nil
	}
	if _, err := os.Lstat(path); err == nil {
		return existsErr(flag, path)
	}
	return nil
}

// existsErr refuses to overwrite path, given as --flag, naming a
// directory as one.
func existsErr(flag, path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return usageErr("--%s %s is a directory; writ writes a new file there: give a file path (inside it, or elsewhere)", flag, path)
	}
	return usageErr("%s exists; writ does not overwrite files (remove it or choose another --%s)", path, flag)
}

// writeDevice writes data to the character device or pipe at path
// (/dev/null, a shell's process substitution), opened without blocking,
// without becoming the controlling terminal, and judged on the opened
// descriptor: a pipe no process reads, a terminal, this command's own
// standard output (--out - says so, and keeps it apart from the summary
// line), or a path that became a regular file meanwhile are refused.
func writeDevice(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if errors.Is(err, syscall.ENXIO) {
		return usageErr("--out %s is a pipe that no process reads; start its reader first", path)
	}
	if err != nil {
		return inputErr(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return inputErr(err)
	}
	switch {
	case fi.Mode()&(os.ModeCharDevice|os.ModeNamedPipe) == 0:
		return usageErr("%s exists; writ does not overwrite files (remove it or choose another --out)", path)
	case term.IsTerminal(int(f.Fd())):
		return usageErr("refusing to write binary output to a terminal (%s); use --out FILE or redirect stdout", path)
	}
	if st, err := os.Stdout.Stat(); err == nil && os.SameFile(fi, st) {
		return usageErr("--out %s is this command's standard output: write --out - for that", path)
	}
	if _, err := f.Write(data); err != nil {
		return inputErr(err)
	}
	if err := f.Close(); err != nil {
		return inputErr(err)
	}
	return nil
}

// writeNew writes data to a new file at path, atomically and without ever
// replacing an existing file (a key, an input): it writes and syncs a
// temporary file in the same directory, then hard-links it into place,
// which fails if path exists.
func writeNew(path string, data []byte) error {
	if fi, err := os.Stat(path); err == nil && fi.Mode()&(os.ModeCharDevice|os.ModeNamedPipe) != 0 {
		return writeDevice(path, data)
	}
	if _, err := os.Lstat(path); err == nil {
		return existsErr("out", path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".writ-out-*")
	if err != nil {
		return inputErr(err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return inputErr(err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return inputErr(err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return inputErr(err)
	}
	if err := tmp.Close(); err != nil {
		return inputErr(err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return usageErr("%s exists; writ does not overwrite files (remove it or choose another --out)", path)
		}
		return inputErr(err)
	}
	return nil
}

// emit prints one result: v as one JSON object with --json, else the human
// lines.
func emit(c *cli.Context, v any, human ...string) error {
	if wantJSON(c) {
		if onEmit != nil {
			onEmit(cmdPath(c), v)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return err
		}
		_, err := c.App.Writer.Write(buf.Bytes())
		return err
	}
	for _, line := range human {
		if _, err := fmt.Fprintln(c.App.Writer, line); err != nil {
			return err
		}
	}
	return nil
}

// onEmit, when set (by the tests only), sees every JSON result with the
// command that printed it: the tests check each result's fields against
// the ones `writ COMMAND --help` documents.
var onEmit func(command string, v any)

// parseTime reads an RFC 3339 time or a Go duration from now (which may
// be negative, "-1h").
func parseTime(flag, s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(d), nil
	}
	return time.Time{}, usageErr("--%s %q: want an RFC 3339 time (2026-11-29T10:00:00Z) or a duration from now (720h later, -720h earlier)", flag, s)
}

var passphraseFileFlag = &cli.StringFlag{Name: "passphrase-file", Usage: "read the key passphrase from `FILE`, which wins over $WRIT_PASSPHRASE (else a terminal prompt)"}

var identityFlag = &cli.StringFlag{Name: "identity", Usage: "unlock key files with the age identities in `FILE` (for keys encrypted with --recipient) instead of a passphrase"}

var recipientFlag = &cli.StringSliceFlag{Name: "recipient", Usage: "encrypt new key files to this age X25519 `RECIPIENT` (age1...; repeat) instead of a passphrase"}

// unlockIdentities returns the age identities that unlock existing key
// files: those in --identity FILE, else the passphrase's.
func unlockIdentities(c *cli.Context, what string) ([]age.Identity, error) {
	if path := c.String("identity"); path != "" {
		if c.IsSet("passphrase-file") {
			return nil, usageErr("--identity and --passphrase-file: key files are unlocked with age identities or with a passphrase, not both; give one")
		}
		ids, err := sign.LoadIdentities(path)
		if err != nil {
			return nil, inputErr(err)
		}
		return ids, nil
	}
	pass, err := passphrase(c, what, false)
	if err != nil {
		return nil, err
	}
	id, err := sign.ScryptIdentity(pass)
	if err != nil {
		return nil, inputErr(err)
	}
	return []age.Identity{id}, nil
}

// newKeyRecipients returns the age recipients a new key file is encrypted
// to: the --recipient values, else the passphrase (asked twice on a
// terminal) with --work-factor.
func newKeyRecipients(c *cli.Context, what string) ([]age.Recipient, error) {
	if rs := c.StringSlice("recipient"); len(rs) > 0 {
		for _, f := range []string{"passphrase-file", "work-factor"} {
			if c.IsSet(f) {
				return nil, usageErr("--%s and --recipient: a key file is encrypted to age recipients or to a passphrase, not both; give one", f)
			}
		}
		out, err := sign.ParseRecipients(rs)
		if err != nil {
			return nil, inputErr(err)
		}
		return out, nil
	}
	pass, err := passphrase(c, what, true)
	if err != nil {
		return nil, err
	}
	r, err := sign.ScryptRecipient(pass, c.Int("work-factor"))
	if err != nil {
		return nil, inputErr(err)
	}
	return []age.Recipient{r}, nil
}

var workFactorFlag = &cli.IntFlag{Name: "work-factor", Value: 18, Usage: "scrypt work factor (log2 N, 10 to 20) for new passphrase-encrypted key files: 18 (256 MiB, about 1.4 s) for real keys; below 18 only for throwaway keys"}

// passphrase returns the key passphrase: --passphrase-file when given
// (what a command line says beats what its environment says), else
// $WRIT_PASSPHRASE, else a terminal prompt (twice when confirm).
func passphrase(c *cli.Context, what string, confirm bool) ([]byte, error) {
	if path := c.String("passphrase-file"); path != "" {
		data, err := readWhole(c, path, 4096)
		if err != nil {
			return nil, err
		}
		line, _, _ := strings.Cut(string(data), "\n")
		line = strings.TrimSuffix(line, "\r")
		if line == "" {
			return nil, inputErr(fmt.Errorf("%s: the passphrase file's first line is empty", path))
		}
		return []byte(line), nil
	}
	if v := os.Getenv("WRIT_PASSPHRASE"); v != "" {
		return []byte(v), nil
	}
	in, ok := c.App.Reader.(*os.File)
	if !ok || !term.IsTerminal(int(in.Fd())) {
		return nil, usageErr("no passphrase for %s: set WRIT_PASSPHRASE, pass --passphrase-file FILE, or run on a terminal", what)
	}
	ask := func(prompt string) ([]byte, error) {
		fmt.Fprintf(c.App.ErrWriter, "%s: ", prompt)
		p, err := term.ReadPassword(int(in.Fd()))
		fmt.Fprintln(c.App.ErrWriter)
		return p, err
	}
	p, err := ask("passphrase for " + what)
	if err != nil {
		return nil, inputErr(err)
	}
	if len(p) == 0 {
		return nil, usageErr("empty passphrase")
	}
	if confirm {
		again, err := ask("again")
		if err != nil {
			return nil, inputErr(err)
		}
		if !bytes.Equal(p, again) {
			return nil, usageErr("the passphrases do not match")
		}
	}
	return p, nil
}

// tokenPIN returns the sign.KeyOptions.PIN callback: the user PIN of the
// PKCS#11 token uri (printed without PIN) names, asked on the terminal
// without echo. With no terminal it is an error saying to give
// pin-source; a PIN is never read from a flag or the environment.
func tokenPIN(c *cli.Context) func(uri string) ([]byte, error) {
	return func(uri string) ([]byte, error) {
		in, ok := c.App.Reader.(*os.File)
		if !ok || !term.IsTerminal(int(in.Fd())) {
			return nil, errors.New("no terminal to ask for the PIN on: add pin-source=/path/to/file to the URI's query (a file readable only by you holding the PIN), e.g. 'pkcs11:token=T;object=O?pin-source=/etc/writ/pin'")
		}
		fmt.Fprintf(c.App.ErrWriter, "PIN for %s: ", uri)
		p, err := term.ReadPassword(int(in.Fd()))
		fmt.Fprintln(c.App.ErrWriter)
		if err != nil {
			return nil, err
		}
		if len(p) == 0 {
			return nil, errors.New("empty PIN")
		}
		return p, nil
	}
}

// wantJSON reports whether --json was given before or after the command
// name (CLI.md: it is accepted in either place).
func wantJSON(c *cli.Context) bool {
	for _, x := range c.Lineage() {
		if x.Bool("json") {
			return true
		}
	}
	return false
}

// vkeyValue returns the verifier key given with --NAME ("" if none), or
// bad usage if it is not a signed-note verifier key.
func vkeyValue(c *cli.Context, name string) (string, error) {
	v := c.String(name)
	if v == "" {
		return "", nil
	}
	if _, err := formats.NewVerifier(v); errors.Is(err, sign.ErrInvalidKey) {
		return "", usageErr("--%s: %v", name, err)
	} else if err != nil {
		return "", usageErr("--%s: not a signed-note verifier key (<origin>+<8 hex>+<base64>): %v", name, err)
	}
	return v, nil
}

// wantArgs checks that the command got exactly n positional arguments
// (n < 0: at least one), described by what. Flags written after the
// arguments were moved before them (interspersed), so a word here that
// looks like a flag came after "--" and is an argument.
func wantArgs(c *cli.Context, n int, what string) error {
	if (n >= 0 && c.NArg() == n) || (n < 0 && c.NArg() > 0) {
		return nil
	}
	return &exitError{code: exitUsage, err: fmt.Errorf("%s takes %s", cmdPath(c), what)}
}

// plural returns "1 entry" or "n entries" style text.
func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// cmdPath returns the command's full name, such as "ledger append".
func cmdPath(c *cli.Context) string {
	var names []string
	for _, x := range c.Lineage() {
		if x.Command != nil && x.Command.Name != "" && x.Command.Name != c.App.Name && (len(names) == 0 || names[0] != x.Command.Name) {
			names = append([]string{x.Command.Name}, names...)
		}
	}
	return strings.Join(names, " ")
}
