package witness

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/tiles"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// logState is what the witness holds for one log: the last checkpoint it
// cosigned. mu orders the check of a request's old size against size and
// the durable update of the state (c2sp.org/tlog-witness: "checking the
// old size ... and persisting the new checkpoint must be performed
// atomically").
type logState struct {
	origin    string
	verifiers note.Verifiers // the log's trusted keys
	file      string         // Dir/logs/<OriginHash(origin)>

	mu     sync.Mutex
	size   int64     // 0 when never cosigned
	hash   tlog.Hash // root hash at size (meaningless when signed is nil)
	signed []byte    // the stored checkpoint as GET serves it; nil if never cosigned
}

// OriginHash returns the lowercase hex SHA-256 of a log's origin: the
// path element of the monitoring URL (c2sp.org/tlog-witness, "Monitor
// Retrieval Mechanism") and the name of the log's state file.
func OriginHash(origin string) string {
	h := sha256.Sum256([]byte(origin))
	return hex.EncodeToString(h[:])
}

// lockDir takes an exclusive, non-blocking flock on dir (created 0700 if
// missing) and returns the open directory that holds it; closing it
// releases the lock. Errors wrap ErrLocked when another process holds it.
func lockDir(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		d.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s", ErrLocked, dir)
		}
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	return d, nil
}

// scanLogsDir checks the names in the state directory: each is the
// 64-hex origin hash of a log (its state file) or such a name with
// ".tmp" (a write a crash interrupted before its rename: removed, it was
// never acknowledged). Anything else is an error wrapping
// ErrCorruptState: the witness does not share its directory.
func scanLogsDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		base, tmp := strings.CutSuffix(name, ".tmp")
		if !isOriginHash(base) {
			return fmt.Errorf("%w: %s: not a file the witness writes (a state file is named by the 64-hex SHA-256 of its origin)", ErrCorruptState, filepath.Join(dir, name))
		}
		if tmp {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return fmt.Errorf("removing an interrupted write: %w", err)
			}
		}
	}
	return nil
}

func isOriginHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !('0' <= s[i] && s[i] <= '9' || 'a' <= s[i] && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// load reads l's state file, if any, and checks it strictly: a
// checkpoint of l's origin (ParseCheckpoint), whose log signatures
// verify under l's configured keys (note.Open), carrying exactly one
// other signature line, this witness's cosignature, which verifies with
// a non-zero time, all in the exact form store writes. Errors wrap
// ErrCorruptState and name the file, or ErrConfig when the file carries
// one cosignature by another witness (another key or name: the state of
// another witness, not a damaged one).
func (w *Witness) load(l *logState) error {
	b, err := tiles.ReadFile(l.file, MaxCheckpointSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	corrupt := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s (log %q): %s", ErrCorruptState, l.file, l.origin, fmt.Sprintf(format, args...))
	}
	if err != nil {
		return corrupt("%v", err)
	}
	c, err := ParseCheckpoint(b)
	if err != nil {
		return corrupt("%v", err)
	}
	if c.Origin != l.origin {
		return corrupt("it holds a checkpoint of origin %q", c.Origin)
	}
	n, err := note.Open(b, l.verifiers)
	var unverified *note.UnverifiedNoteError
	var invalid *note.InvalidSignatureError
	if errors.As(err, &unverified) || errors.As(err, &invalid) {
		return corrupt("its log signatures do not verify under the configured keys of the log (%v); if the log changed its key, keep the old key configured until the witness cosigns a checkpoint signed with the new one", err)
	} else if err != nil {
		return corrupt("not a signed note (%v)", err)
	}
	if len(n.UnverifiedSigs) == 1 && (n.UnverifiedSigs[0].Name != w.name || n.UnverifiedSigs[0].Hash != w.cosig.KeyID()) {
		return fmt.Errorf("%w: %s holds the state of witness %s (key id %08x), not of this witness (%s): give that witness's key and name, or another --dir",
			ErrConfig, l.file, n.UnverifiedSigs[0].Name, n.UnverifiedSigs[0].Hash, w.vkey)
	}
	if len(n.UnverifiedSigs) != 1 {
		return corrupt("it does not carry exactly one cosignature by this witness (%s) beside the log's signatures", w.vkey)
	}
	t, err := w.cosig.Time(b)
	if err != nil || t.Unix() <= 0 {
		return corrupt("the witness's cosignature does not verify under %s (a different witness key or name?)", w.vkey)
	}
	if !bytes.Equal(b, render(n.Text, n.Sigs, n.UnverifiedSigs[0])) {
		return corrupt("not in the form the witness writes")
	}
	l.size, l.hash, l.signed = c.Size, c.Hash, b
	return nil
}

// render returns the stored form of a cosigned checkpoint: the note
// text, a blank line, the log signatures the witness verified (in the
// order received), then the witness's cosignature line.
func render(text string, logSigs []note.Signature, cosig note.Signature) []byte {
	var b bytes.Buffer
	b.WriteString(text)
	b.WriteByte('\n')
	for _, s := range logSigs {
		b.WriteString(formats.SigLinePrefix + s.Name + " " + s.Base64 + "\n")
	}
	b.WriteString(formats.SigLinePrefix + cosig.Name + " " + cosig.Base64 + "\n")
	return b.Bytes()
}

// store makes data l's state durably: it writes and fsyncs
// "<file>.tmp" (created 0600, never through a symlink), renames it over
// the state file, and fsyncs the directory, so a crash leaves either the
// old state or the new one.
func store(l *logState, data []byte) error {
	tmp := l.file + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, l.file); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(l.file))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
