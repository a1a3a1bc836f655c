// Package fileutil holds the file-system steps that package ledger and
// its sub-packages share.
package fileutil

import (
	"io"
	"os"
)

// Copy copies the regular file from to the new file to (created 0600,
// refused if it exists), synced before it returns.
func Copy(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
