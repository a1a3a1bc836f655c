package transfer

import (
	"fmt"
	"os"
)

// SizeError is the evidence that a file's size is not the size a signer
// recorded for it (a pin's or a provisioned file's "size"): the file, the
// size expected and the size found here, in bytes. Content of another size
// is other content, so it wraps ErrDigestMismatch.
type SizeError struct {
	Path     string
	Expected uint64
	Actual   int64
}

// Error names the file and both sizes.
func (e *SizeError) Error() string {
	return fmt.Sprintf("%s is %d bytes here; the signed record says %d", e.Path, e.Actual, e.Expected)
}

// Unwrap returns ErrDigestMismatch.
func (e *SizeError) Unwrap() error { return ErrDigestMismatch }

// CheckSize compares the size of the regular file at path with size, the
// byte count a signed record gives for it, before anything is hashed: a
// file of another size cannot match the record, and a runner need not
// read gigabytes to learn so. It returns a *SizeError on a difference,
// ErrNotRegular for anything but a regular file, and os errors wrapped
// with the path. A file that changes after the check is caught by its
// digest.
func CheckSize(path string, size uint64) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is a %s", ErrNotRegular, path, describeMode(fi.Mode()))
	}
	if fi.Size() < 0 || uint64(fi.Size()) != size {
		return &SizeError{Path: path, Expected: size, Actual: fi.Size()}
	}
	return nil
}
