package fileio

import (
	"os"
	"path/filepath"
)

// Replace writes data to path atomically, replacing what is there: a
// temporary file in the same directory (prefix names it, such as
// ".writ-state-"), written, synced and renamed over path. A reader sees
// the old file or the new one, never a part. It is for a program's own
// state files (the auditor's, a monitor's); outputs a user names go
// through WriteNew, which never replaces. Errors are the file system's,
// as is; on any error the temporary file is removed.
func Replace(path, prefix string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), prefix+"*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
