package main

// File I/O: reading whole inputs (a file or stdin) under a bound, and
// writing outputs as new files, atomically, never over an existing one.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/urfave/cli/v2"
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
