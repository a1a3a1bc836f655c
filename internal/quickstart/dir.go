package quickstart

import (
	"os"

	"github.com/writ-ledger/writ/internal/exitcode"
)

// PrepareDir returns the directory the story works in (Options.Dir): dir
// made (mode 0700, with its parents) when it does not exist, or a new
// temporary directory when dir is "". Its errors are *exitcode.Error,
// exit 2: bad usage naming --dir for a directory that is not empty, bad
// input when the directory cannot be made.
func PrepareDir(dir string) (string, error) {
	var err error
	if dir == "" {
		dir, err = os.MkdirTemp("", "writ-quickstart-")
	} else if entries, rerr := os.ReadDir(dir); rerr == nil && len(entries) > 0 {
		return "", exitcode.Usagef("--dir %s: directory is not empty", dir)
	} else {
		err = os.MkdirAll(dir, 0o700)
	}
	if err != nil {
		return "", exitcode.Input(err)
	}
	return dir, nil
}
