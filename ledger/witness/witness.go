package witness

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync/atomic"
	"time"

	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/sign"
	"golang.org/x/mod/sumdb/note"
)

// Config configures a Witness.
type Config struct {
	// Name is the witness's key name (c2sp.org/tlog-cosignature: a
	// schema-less URL such as "witness.example/w1"), 1 to 128 printable
	// ASCII characters without space or '+' (formats.ValidOrigin). The
	// cosignature/v1 key id commits to it, so it must not change.
	Name string
	// Key is the witness's Ed25519 signing key.
	Key *sign.PrivateKey
	// Dir holds the witness's state; created 0700 if missing, and locked
	// (flock) while the witness is open.
	Dir string
	// Logs are the verifier keys of the logs the witness cosigns:
	// Ed25519 signed-note vkeys ("<origin>+<8 hex>+<base64 of 0x01 ||
	// key>", c2sp.org/signed-note). A log is known by its origin, which is
	// the key name; several keys of one origin are all trusted for it (a
	// key rotation).
	Logs []string
	// Now is the clock of cosignature timestamps; nil means time.Now.
	Now func() time.Time
}

// Witness is a C2SP tlog-witness (c2sp.org/tlog-witness): it cosigns
// checkpoints of the logs it is configured with, each consistent with the
// last one it cosigned for that log, with cosignature/v1 signatures
// (c2sp.org/tlog-cosignature, Ed25519). It is safe for concurrent use.
type Witness struct {
	name   string
	key    *sign.PrivateKey
	vkey   string
	cosig  *formats.CosigVerifier
	now    func() time.Time
	lock   *os.File             // the flock on Config.Dir
	logs   map[string]*logState // by origin
	hashes map[string]*logState // by OriginHash(origin)
	closed atomic.Bool
}

// New opens the witness of cfg: it checks the configuration, locks
// cfg.Dir, and loads each configured log's state file from
// cfg.Dir/logs/<OriginHash(origin)>, re-verified (see the package doc).
// State files of logs no longer configured are left as they are, unread.
// Errors wrap ErrConfig, ErrLocked or ErrCorruptState, or are the
// operating system's (the directory cannot be created or read).
func New(cfg Config) (*Witness, error) {
	if cfg.Key == nil || cfg.Dir == "" {
		return nil, fmt.Errorf("%w: a witness needs a key and a state directory", ErrConfig)
	}
	vkey, err := formats.CosignerKey(cfg.Name, cfg.Key.Public())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	cosig, err := formats.NewCosignerVerifier(vkey)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	w := &Witness{name: cfg.Name, key: cfg.Key, vkey: vkey, cosig: cosig, now: cfg.Now,
		logs: map[string]*logState{}, hashes: map[string]*logState{}}
	if w.now == nil {
		w.now = time.Now
	}
	if err := w.configureLogs(cfg.Logs, filepath.Join(cfg.Dir, "logs")); err != nil {
		return nil, err
	}
	if w.lock, err = lockDir(cfg.Dir); err != nil {
		return nil, err
	}
	if err := w.open(filepath.Join(cfg.Dir, "logs")); err != nil {
		w.lock.Close()
		return nil, err
	}
	return w, nil
}

// configureLogs groups the log keys by origin.
func (w *Witness) configureLogs(vkeys []string, dir string) error {
	if len(vkeys) == 0 {
		return fmt.Errorf("%w: no log to witness", ErrConfig)
	}
	byOrigin := map[string][]note.Verifier{}
	for _, k := range vkeys {
		v, err := formats.NewVerifier(k)
		if err != nil {
			return fmt.Errorf("%w: log key %q: %w", ErrConfig, k, err)
		}
		for _, o := range byOrigin[v.Name()] {
			if o.KeyHash() == v.KeyHash() {
				return fmt.Errorf("%w: two keys of log %q have the key id %08x", ErrConfig, v.Name(), v.KeyHash())
			}
		}
		byOrigin[v.Name()] = append(byOrigin[v.Name()], v)
	}
	for origin, vs := range byOrigin {
		l := &logState{origin: origin, verifiers: note.VerifierList(vs...), file: filepath.Join(dir, OriginHash(origin))}
		w.logs[origin], w.hashes[OriginHash(origin)] = l, l
	}
	return nil
}

// open loads the state under the lock.
func (w *Witness) open(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := scanLogsDir(dir); err != nil {
		return err
	}
	origins := make([]string, 0, len(w.logs))
	for o := range w.logs {
		origins = append(origins, o)
	}
	sort.Strings(origins) // the first corrupt file named is always the same one
	for _, o := range origins {
		if err := w.load(w.logs[o]); err != nil {
			return err
		}
	}
	return nil
}

// VerifierKey returns the witness's cosignature/v1 verifier key
// ("<name>+<8 hex key id>+<base64 of 0x04 || key>",
// formats.CosignerKey): what a log's witness policy holds.
func (w *Witness) VerifierKey() string { return w.vkey }

// Origins returns the origins of the configured logs, sorted.
func (w *Witness) Origins() []string {
	out := make([]string, 0, len(w.logs))
	for o := range w.logs {
		out = append(out, o)
	}
	sort.Strings(out)
	return out
}

// Checkpoint returns the last checkpoint the witness cosigned for origin
// as the monitoring URL serves it (the log signatures it verified and
// its own cosignature), and its size. It returns ErrUnknownLog for an
// origin not configured and ErrNotCosigned when it never cosigned one.
func (w *Witness) Checkpoint(origin string) ([]byte, int64, error) {
	l := w.logs[origin]
	if l == nil {
		return nil, 0, ErrUnknownLog
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.signed == nil {
		return nil, 0, ErrNotCosigned
	}
	return bytes.Clone(l.signed), l.size, nil
}

// Close stops the witness: requests that have not started their update
// get ErrClosed, the updates in flight finish, and the lock on Dir is
// released. It is safe to call more than once; the error is the
// directory's close error.
func (w *Witness) Close() error {
	if w.closed.Swap(true) {
		return nil
	}
	for _, l := range w.logs {
		l.mu.Lock()
		//lint:ignore SA2001 an empty critical section waits for the update in flight
		l.mu.Unlock()
	}
	return w.lock.Close()
}
