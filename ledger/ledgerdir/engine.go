package ledgerdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// EngineFile names the file in a ledger directory that says its
// authority log is on a distributed engine (package engine), and which:
// written by `ledger migrate`, removed by `ledger migrate --back`, and
// copied with the directory to each writer's host. While it is there,
// OpenAuthorityKeyed's log appends only through the engine
// (ledger.Log.RequireSequencer): a copy that appended alone would fork
// from the engine's log.
const EngineFile = "engine"

// maxEngineFile bounds what EngineFile may hold, in bytes.
const maxEngineFile = 4096

// Engine returns what d's EngineFile says ("" when there is none).
// Errors: one that cannot be read, or is over 4 KiB.
func (d Dir) Engine() (string, error) {
	b, err := os.ReadFile(filepath.Join(string(d), EngineFile))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", err
	} else if len(b) > maxEngineFile {
		return "", fmt.Errorf("%s: over %d bytes", filepath.Join(string(d), EngineFile), maxEngineFile)
	}
	return strings.TrimSpace(string(b)), nil
}

// SetEngine writes d's EngineFile saying which engine (its bucket and
// endpoint), durably; an empty which removes it.
func (d Dir) SetEngine(which string) error {
	p := filepath.Join(string(d), EngineFile)
	if which == "" {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	tmp := p + ".new"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(which + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	dir, err := os.Open(string(d))
	if err != nil {
		return err
	}
	defer dir.Close()
	return dir.Sync()
}
