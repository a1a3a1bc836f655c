package transfer

import (
	"debug/buildinfo"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/writ-ledger/writ/schemas"
)

// ErrNotRegular: the path names a directory, FIFO, device or socket, not a
// regular file. writ hashes only regular files: opening a FIFO would block
// and a device may never end.
var ErrNotRegular = errors.New("not a regular file")

// Inspection is what a runner or a release engineer reads from one file,
// through one open file descriptor: its digest, its size in bytes, and its
// Go build metadata (Build nil when it is not a Go binary or carries no
// build information; Platform "" when the binary does not record one).
type Inspection struct {
	Digest   string
	Size     int64
	Build    *schemas.Build
	Platform string
}

// Inspect hashes the regular file at path with alg (a key of Algorithms)
// and reads its Go build metadata (debug/buildinfo) from the same open
// file, so that both describe the same bytes even if the path is renamed
// over meanwhile. It refuses anything but a regular file (ErrNotRegular)
// without opening it, and returns os errors (fs.ErrNotExist, permission)
// wrapped with the path.
func Inspect(path, alg string) (*Inspection, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d, n, err := DigestReader(f, alg)
	if err != nil {
		return nil, fmt.Errorf("hashing %s: %w", path, err)
	}
	in := &Inspection{Digest: d, Size: n}
	info, err := buildinfo.Read(io.NewSectionReader(f, 0, n))
	if err == nil {
		in.Build, in.Platform = fromBuildInfo(info)
	}
	// Otherwise not a Go executable, or no build information: debug/buildinfo
	// reports both alike, and both mean "no build metadata".
	return in, nil
}

// openRegular opens path for reading only if it is a regular file: it
// checks before opening, opens without blocking (O_NONBLOCK: a FIFO
// swapped in after the check would otherwise block the open forever), and
// checks again on the open descriptor, which must be the same file.
// O_NONBLOCK does not change reads of a regular file.
func openRegular(path string) (*os.File, error) {
	before, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !before.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is a %s", ErrNotRegular, path, describeMode(before.Mode()))
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	after, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !os.SameFile(before, after) || !after.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%w: %s was replaced while it was being opened", ErrNotRegular, path)
	}
	return f, nil
}

func describeMode(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&os.ModeNamedPipe != 0:
		return "named pipe"
	case m&os.ModeDevice != 0:
		return "device"
	case m&os.ModeSocket != 0:
		return "socket"
	}
	return "special file (" + m.Type().String() + ")"
}
