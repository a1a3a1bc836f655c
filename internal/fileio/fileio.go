// Package fileio is how writ's command line reads its inputs and writes
// its outputs: a whole input (a file, or stdin for "-") read under a
// bound, and an output written as a new file, atomically, never over an
// existing one (a key, an input), or to a device or pipe, or to stdout
// for "-" unless stdout is a terminal (binary output is never written to
// a terminal, as age refuses to).
//
// Every error is an *exitcode.Error, bad usage or bad input (exit 2),
// whose message names the flag and says what to do.
package fileio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/writ-ledger/writ/internal/dirhint"
	"github.com/writ-ledger/writ/internal/exitcode"
	"golang.org/x/term"
)

// MaxInput bounds any file writ reads whole (records, briefs, passphrase
// files), in bytes; records are limited to 65,535 bytes anyway.
const MaxInput = 1 << 20

// ReadInput reads the whole file at path, or stdin for "-". It returns
// bad input (exit 2) for an unreadable file or a directory
// (dirhint.Error). The boolean reports whether the input was larger than
// limit bytes, in which case the returned bytes are its first limit+1.
func ReadInput(stdin io.Reader, path string, limit int64) ([]byte, bool, error) {
	var r io.Reader
	if path == "-" {
		r = stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, false, exitcode.Input(err)
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.IsDir() {
			// dirhint.Explain names the flag or argument it was given as.
			return nil, false, dirhint.Error("", path)
		}
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, false, exitcode.Input(fmt.Errorf("reading %s: %w", path, err))
	}
	return data, int64(len(data)) > limit, nil
}

// ReadWhole is ReadInput that treats an input over limit bytes as bad
// input.
func ReadWhole(stdin io.Reader, path string, limit int64) ([]byte, error) {
	data, over, err := ReadInput(stdin, path, limit)
	if err == nil && over {
		err = exitcode.Input(fmt.Errorf("%s: larger than %d bytes", path, limit))
	}
	return data, err
}

// IsTerminal reports whether w is an *os.File open on a terminal.
func IsTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// WriteOutput writes binary output to the new file at path (WriteNew),
// or to stdout for "-" unless stdout is a terminal. path "" is bad
// usage: --out is required.
func WriteOutput(stdout io.Writer, path string, data []byte) error {
	return StreamOutput(stdout, path, writeAll(data))
}

// StreamOutput is WriteOutput of the bytes write writes, which are never
// held whole: to the new file at path (StreamNew), or to stdout for "-"
// unless stdout is a terminal. An error of write's leaves no file at path;
// written to stdout (or a device or pipe), what write wrote before it
// failed is out, and the error is a *PartialOutputError saying how much.
// Errors: bad usage or input as WriteOutput's (a failed write to a file,
// device or pipe is bad input), else write's own (and stdout's), as is.
func StreamOutput(stdout io.Writer, path string, write func(io.Writer) error) error {
	if path == "" {
		return exitcode.Usagef("--out is required (a file, or - for stdout)")
	}
	if path == "-" {
		if IsTerminal(stdout) {
			return exitcode.Usagef("refusing to write binary output to a terminal; use --out FILE or redirect stdout")
		}
		return counted("standard output", stdout, write)
	}
	return StreamNew(path, write)
}

// PartialOutputError is the error of a write that failed after it had
// written N bytes to To (standard output, or a device or pipe), which
// nothing can take back: they are an incomplete output, to be discarded.
// It unwraps to the write's error (which keeps its exit code).
type PartialOutputError struct {
	To  string
	N   int64
	Err error
}

// Error returns Err's message.
func (e *PartialOutputError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *PartialOutputError) Unwrap() error { return e.Err }

// Hint is the next act for the bytes already out.
func (e *PartialOutputError) Hint() string {
	return fmt.Sprintf("the %d bytes written to %s before the error are an incomplete output: discard them", e.N, e.To)
}

// countWriter counts the bytes its writer took.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// counted runs write on w, named to: an error after a byte went out is
// a *PartialOutputError.
func counted(to string, w io.Writer, write func(io.Writer) error) error {
	c := &countWriter{w: w}
	if err := write(c); err != nil {
		if c.n > 0 {
			return &PartialOutputError{To: to, N: c.n, Err: err}
		}
		return err
	}
	return nil
}

// writeAll is a write function that writes data.
func writeAll(data []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}
}

// failWriter remembers the first error of the writer it wraps.
type failWriter struct {
	w   io.Writer
	err error
}

func (f *failWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err != nil && f.err == nil {
		f.err = err
	}
	return n, err
}

// writeTo runs write on w: an error of w's (the output's) is bad input,
// write's own is returned as is.
func writeTo(w io.Writer, write func(io.Writer) error) error {
	fw := &failWriter{w: w}
	err := write(fw)
	if err != nil && fw.err != nil && errors.Is(err, fw.err) {
		return exitcode.Input(err)
	}
	return err
}

// CheckOutput refuses, before any costly work, an output WriteOutput
// would refuse at the end: no path, a terminal for "-", or an existing
// file that is not a device or pipe; flag names the flag that gave path.
// WriteOutput still checks again.
func CheckOutput(stdout io.Writer, flag, path string) error {
	switch {
	case path == "":
		return exitcode.Usagef("--%s is required (a file, or - for stdout)", flag)
	case path == "-":
		if IsTerminal(stdout) {
			return exitcode.Usagef("refusing to write binary output to a terminal; use --out FILE or redirect stdout")
		}
		return nil
	}
	// As WriteNew: a device or pipe, also behind a symlink (/dev/fd/N of
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
		return exitcode.Usagef("--%s %s is a directory; writ writes a new file there: give a file path (inside it, or elsewhere)", flag, path)
	}
	return exitcode.Usagef("%s exists; writ does not overwrite files (remove it or choose another --%s)", path, flag)
}

// StreamDevice writes the bytes write writes to the character device or
// pipe at path (/dev/null, a shell's process substitution), opened
// without blocking, without becoming the controlling terminal, and judged
// on the opened descriptor: a pipe no process reads, a terminal, this
// process's own standard output (--out - says so, and keeps it apart from
// the summary line), or a path that became a regular file meanwhile are
// refused (errors as StreamOutput's).
func StreamDevice(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if errors.Is(err, syscall.ENXIO) {
		return exitcode.Usagef("--out %s is a pipe that no process reads; start its reader first", path)
	}
	if err != nil {
		return exitcode.Input(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return exitcode.Input(err)
	}
	switch {
	case fi.Mode()&(os.ModeCharDevice|os.ModeNamedPipe) == 0:
		return exitcode.Usagef("%s exists; writ does not overwrite files (remove it or choose another --out)", path)
	case term.IsTerminal(int(f.Fd())):
		return exitcode.Usagef("refusing to write binary output to a terminal (%s); use --out FILE or redirect stdout", path)
	}
	if st, err := os.Stdout.Stat(); err == nil && os.SameFile(fi, st) {
		return exitcode.Usagef("--out %s is this command's standard output: write --out - for that", path)
	}
	if err := counted(path, f, func(w io.Writer) error { return writeTo(w, write) }); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return exitcode.Input(err)
	}
	return nil
}

// WriteNew writes data to a new file at path (mode 0644), atomically
// and without ever replacing an existing file: it writes and syncs a
// temporary file in the same directory, then hard-links it into place,
// which fails if path exists. A device or pipe at path is written to
// with StreamDevice.
func WriteNew(path string, data []byte) error {
	return StreamNew(path, writeAll(data))
}

// StreamNew is WriteNew of the bytes write writes, which are never held
// whole: write writes to the temporary file, and only once it returned
// nil is the file synced and linked into place. On any error (write's,
// as is; the file's, as bad input) the temporary file is removed and
// nothing is left at path. A device or pipe at path is written to with
// StreamDevice.
func StreamNew(path string, write func(io.Writer) error) error {
	if fi, err := os.Stat(path); err == nil && fi.Mode()&(os.ModeCharDevice|os.ModeNamedPipe) != 0 {
		return StreamDevice(path, write)
	}
	if _, err := os.Lstat(path); err == nil {
		return existsErr("out", path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".writ-out-*")
	if err != nil {
		return exitcode.Input(err)
	}
	defer os.Remove(tmp.Name())
	if err := writeTo(tmp, write); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return exitcode.Input(err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return exitcode.Input(err)
	}
	if err := tmp.Close(); err != nil {
		return exitcode.Input(err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return exitcode.Usagef("%s exists; writ does not overwrite files (remove it or choose another --out)", path)
		}
		return exitcode.Input(err)
	}
	return nil
}
