package ledger

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/internal/hashcache"
	"github.com/writ-ledger/writ/ledger/keys"
	"github.com/writ-ledger/writ/sign"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// MaxEntrySize is the largest entry, in bytes: C2SP tlog-tiles entry
// bundles carry a 16-bit length.
const MaxEntrySize = 65535

// Errors returned by Log.
var (
	// ErrEntrySize: an entry is empty or larger than MaxEntrySize.
	ErrEntrySize = errors.New("entry size out of range")
	// ErrNoSigner: Append was called on a log opened without its
	// checkpoint key.
	ErrNoSigner = errors.New("log opened without its checkpoint key")
	// ErrNotFound: no entry at that index.
	ErrNotFound = errors.New("no such entry")
	// ErrNotALog: the directory is not a writ log, or is one in a state
	// this build cannot read.
	ErrNotALog = errors.New("not a writ log")
	// ErrWrongKey: the checkpoint key given does not match the log's
	// verifier key. It is keys.ErrWrongKey, which a token key other than
	// the one the ledger directory names also wraps.
	ErrWrongKey = keys.ErrWrongKey
	// ErrNoRunnerKey: a ledger directory holds a decision log without the
	// runner key that signs it, so no decision can be appended there.
	ErrNoRunnerKey = errors.New("no runner key for this decision log")
	// ErrLocked: another process has the log open (Badger's directory
	// lock); retry when it is done.
	ErrLocked = errors.New("log is in use by another process")
	// ErrBatchTooLarge: the batch does not fit in one Badger transaction;
	// nothing was stored. Append fewer entries at a time.
	ErrBatchTooLarge = errors.New("batch too large for one durable transaction")
)

// Badger key layout. Indexes are big-endian so that key order is index
// order.
var (
	keySize       = []byte("m/size")
	keyOrigin     = []byte("m/origin")
	keyVKey       = []byte("m/vkey")
	keyCheckpoint = []byte("m/checkpoint")
)

const (
	prefixEntry = 'e'
	prefixHash  = 'h'
)

func indexKey(prefix byte, i int64) []byte { return indexKeyInto(make([]byte, 9), prefix, i) }

// indexKeyInto writes the key of index i under prefix into k (9 bytes).
func indexKeyInto(k []byte, prefix byte, i int64) []byte {
	k[0] = prefix
	binary.BigEndian.PutUint64(k[1:], uint64(i))
	return k
}

// Log is one append-only Merkle log in one Badger directory. Its methods
// are safe for concurrent use within a process; Badger's directory lock
// keeps other processes out while it is open.
type Log struct {
	db     Store
	size   atomic.Int64 // entries durably committed
	origin string
	vkey   string
	lkey   *formats.LogKey  // vkey, parsed once when the log is opened
	signer note.Signer      // nil: read and verify only
	key    *sign.PrivateKey // the checkpoint key behind signer, for receipts
	// history: the log keeps the signed checkpoint of every batch
	// (history.go), which gives each entry the time it was accepted.
	history bool
	// readOnly: opened with OpenReadOnly; nothing is written (a reader
	// that extends the state index keeps what it built in memory).
	readOnly bool

	committer           // group commit (commit.go)
	sequencer Sequencer // nil: this store alone (sequencer.go)
	onEngine  string    // RequireSequencer's where

	proofHashes hashcache.Cache // upper tree hashes proofs read

	// head is the signed checkpoint this process last wrote or verified,
	// byte for byte, and what it says: checkHead verifies a stored
	// checkpoint only when its bytes differ. Used by the committer only.
	head       []byte
	headParsed formats.Checkpoint
	headTime   time.Time // the signed time of head (zero before it is read)

	// Now is the clock that timestamps checkpoints, and so the time a
	// batch is accepted at (never before the latest checkpoint's); nil
	// means time.Now.
	Now func() time.Time
}

// Create makes a new, empty log in dir (which must not exist), with the
// given origin, whose checkpoints key signs, and whose clock is now
// (time.Now when nil; see Log.Now). It writes a signed checkpoint of size
// 0.
func Create(dir, origin string, key *sign.PrivateKey, now func() time.Time) (*Log, error) {
	return create(dir, origin, key, now, false)
}

// CreateWithHistory is Create for a log that keeps its checkpoint
// history (history.go): the authority log, whose every entry must carry
// the time the log accepted it.
func CreateWithHistory(dir, origin string, key *sign.PrivateKey, now func() time.Time) (*Log, error) {
	return create(dir, origin, key, now, true)
}

func create(dir, origin string, key *sign.PrivateKey, now func() time.Time, history bool) (*Log, error) {
	if !formats.ValidOrigin(origin) {
		return nil, fmt.Errorf("origin %q: 1 to 128 printable ASCII characters, no space or '+'", origin)
	}
	if _, err := os.Lstat(dir); err == nil {
		return nil, fmt.Errorf("%s: already exists", dir)
	}
	s, vkey, err := formats.NewNoteSigner(origin, key)
	if err != nil {
		return nil, err
	}
	db, err := openBadger(dir, false)
	if err != nil {
		return nil, err
	}
	lkey, err := formats.ParseLogKey(vkey)
	if err != nil {
		db.Close()
		return nil, err
	}
	l := &Log{db: db, origin: origin, vkey: vkey, lkey: lkey, signer: s, key: key, history: history, Now: now}
	err = db.Update(func(txn Txn) error {
		cp, err := l.signCheckpoint(formats.Checkpoint{Origin: origin, Size: 0, Hash: emptyRoot}, l.clock()())
		if err != nil {
			return err
		}
		meta := map[string][]byte{
			string(keyOrigin): []byte(origin), string(keyVKey): []byte(vkey),
			string(keySize): make([]byte, 8), string(keyCheckpoint): cp,
		}
		if history {
			meta[string(keyHistoryFlag)] = []byte{1}
			meta[string(keyState)] = bindingBytes(StateBinding{Size: 0, Root: emptyRoot}) // an empty index covers the empty log
		}
		for k, v := range meta {
			if err := txn.Set([]byte(k), v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	return l, nil
}

// emptyRoot is the RFC 6962 hash of the empty tree: SHA-256 of "".
var emptyRoot, _ = tlog.TreeHash(0, nil)

// Open opens an existing log. With key nil the log can be read and
// verified but not appended to; otherwise key must be the log's checkpoint
// key (ErrWrongKey). A directory without a Badger store fails with
// ErrNotALog, before anything is written to it; a Badger store that is
// damaged on disk (see checkStore), or whose log metadata is missing, fails
// with a *StoreError (ErrStoreDamaged, ErrTampered), and one whose metadata
// is malformed with an *IntegrityError (ErrTampered); a refused open
// leaves the store as it was, except that an open for writing recovers
// what a killed writer leaves (empty log files removed, unlisted tables
// that hold nothing the store lacks set aside). ErrLocked: another
// process has it open.
func Open(dir string, key *sign.PrivateKey) (*Log, error) { return open(dir, key, false) }

// OpenReadOnly opens an existing log for reading and verifying without
// writing anything to its directory (Badger's read-only mode): any number
// of read-only opens may share the log, while no process has it open for
// writing (ErrLocked both ways). A runner reads its authority log this
// way, so that the files change only when the log does. Errors as Open.
func OpenReadOnly(dir string) (*Log, error) { return open(dir, nil, true) }

func open(dir string, key *sign.PrivateKey, readOnly bool) (*Log, error) {
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrNotALog, dir, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%w: %s is not a directory", ErrNotALog, dir)
	}
	if err := checkStore(dir, readOnly, true); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST")); err != nil {
		return nil, fmt.Errorf("%w: %s holds no Badger store", ErrNotALog, dir)
	}
	db, err := openChecked(dir, readOnly)
	if err != nil {
		return nil, err
	}
	l := &Log{db: db, readOnly: readOnly}
	err = db.View(func(txn Txn) error {
		get := func(k []byte) ([]byte, error) {
			v, err := txn.Get(k)
			if err != nil {
				if errors.Is(err, ErrNoKey) {
					return nil, &StoreError{Dir: dir, Problem: "the log's metadata (" + string(k) + ") is missing: the store lost the tables that held it", Cause: err}
				}
				return nil, err
			}
			return v, nil
		}
		origin, err := get(keyOrigin)
		if err != nil {
			return err
		}
		vkey, err := get(keyVKey)
		if err != nil {
			return err
		}
		size, err := get(keySize)
		if err != nil {
			return err
		}
		if len(size) != 8 || int64(binary.BigEndian.Uint64(size)) < 0 {
			return &IntegrityError{Index: -1, What: "log metadata m/size malformed", Detail: dir}
		}
		if !formats.ValidOrigin(string(origin)) {
			return &IntegrityError{Index: -1, What: "log metadata m/origin malformed", Detail: dir}
		}
		lkey, err := formats.ParseLogKey(string(vkey))
		if err != nil {
			return &IntegrityError{Index: -1, What: "log metadata m/vkey malformed", Detail: dir + ": " + err.Error()}
		}
		l.origin, l.vkey, l.lkey = string(origin), string(vkey), lkey
		l.size.Store(int64(binary.BigEndian.Uint64(size)))
		switch flag, err := txn.Get(keyHistoryFlag); {
		case errors.Is(err, ErrNoKey):
		case err != nil:
			return err
		default:
			if !bytes.Equal(flag, []byte{1}) {
				return &IntegrityError{Index: -1, What: "log metadata m/history malformed", Detail: dir}
			}
			l.history = true
		}
		return nil
	})
	if err == nil && key != nil {
		var s note.Signer
		var vkey string
		s, vkey, err = formats.NewNoteSigner(l.origin, key)
		if err == nil && vkey != l.vkey {
			err = fmt.Errorf("%w: key %s, log %s", ErrWrongKey, key.Public().ID(), dir)
		}
		l.signer, l.key = s, key
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return l, nil
}

// Close stops accepting appends, waits for the batch in flight, and closes
// the Badger store. The Log must not be used afterwards; closing it again
// does nothing.
func (l *Log) Close() error {
	if l.stop() {
		return nil
	}
	return l.db.Close()
}

// Origin returns the log's origin (its checkpoints' first line).
func (l *Log) Origin() string { return l.origin }

// VerifierKey returns the signed-note verifier key of the log's
// checkpoints, as stored in the log.
func (l *Log) VerifierKey() string { return l.vkey }

// Key returns the log's stored verifier key, parsed: VerifierKey's text.
// Like VerifierKey, it proves only that the log is self-consistent.
func (l *Log) Key() *formats.LogKey { return l.lkey }

// ReadOnly reports whether the log was opened read-only (OpenReadOnly):
// a state index write (UpdateState) and every append fail.
func (l *Log) ReadOnly() bool { return l.readOnly }

// Size returns the number of entries durably committed.
func (l *Log) Size() int64 { return l.size.Load() }

// Entry returns a copy of entry i (0-based), or an error wrapping
// ErrNotFound.
func (l *Log) Entry(i int64) ([]byte, error) {
	var out []byte
	err := l.db.View(func(txn Txn) error {
		var err error
		out, err = txn.Get(indexKey(prefixEntry, i))
		if errors.Is(err, ErrNoKey) {
			return fmt.Errorf("%w: index %d, log size %d", ErrNotFound, i, l.Size())
		}
		return err
	})
	return out, err
}

// Checkpoint returns the latest signed checkpoint, exactly as stored.
func (l *Log) Checkpoint() ([]byte, error) {
	var out []byte
	err := l.db.View(func(txn Txn) error {
		var err error
		if out, err = txn.Get(keyCheckpoint); err != nil {
			return &IntegrityError{Index: -1, What: "signed checkpoint missing", Detail: err.Error()}
		}
		return nil
	})
	return out, err
}

// signCheckpoint signs the checkpoint body with the log key, once as the
// signed note and once as a cosignature/v1 (formats.NewCosigner) timestamped
// at.
func (l *Log) signCheckpoint(c formats.Checkpoint, at time.Time) ([]byte, error) {
	if l.signer == nil {
		return nil, ErrNoSigner
	}
	return note.Sign(&note.Note{Text: c.Body()}, l.signer, formats.NewCosigner(l.origin, l.key, at))
}

// clock returns the log's clock: time.Now unless a test set Now.
func (l *Log) clock() func() time.Time {
	if l.Now != nil {
		return l.Now
	}
	return time.Now
}

// putEntry stores entry i and the tree hashes it completes (the stored
// hashes tlog numbers from StoredHashIndex(0, i), in order) in txn: the
// one write of an entry, whether appended, imported or synced.
func putEntry(txn interface{ Set(k, v []byte) error }, i int64, e []byte, hashes []tlog.Hash) error {
	base := tlog.StoredHashIndex(0, i)
	for k, h := range hashes {
		if err := txn.Set(indexKey(prefixHash, base+int64(k)), h[:]); err != nil {
			return batchErr(err)
		}
	}
	return batchErr(txn.Set(indexKey(prefixEntry, i), e))
}

// txnHashReader reads stored tree hashes inside a Badger transaction,
// which also sees the transaction's own pending writes.
func txnHashReader(txn Txn) tlog.HashReader {
	return tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			v, err := txn.Get(indexKey(prefixHash, x))
			if err != nil {
				return nil, fmt.Errorf("reading tree hash %d: %w", x, err)
			}
			if len(v) != tlog.HashSize {
				return nil, fmt.Errorf("tree hash %d is %d bytes", x, len(v))
			}
			copy(out[i][:], v)
		}
		return out, nil
	})
}

// checkHead refuses to extend a log whose stored state is not exactly the
// one its latest signed checkpoint commits to (size and root hash): the
// log never signs over entries or hashes it did not sign before, so a
// truncated, rewritten or rehashed log stays detectable. It costs one
// signature verification and at most 1 + log2(size) hash reads.
func (l *Log) checkHead(txn Txn, r tlog.HashReader) error {
	signed, err := txn.Get(keyCheckpoint)
	if err != nil {
		return &IntegrityError{Index: -1, What: "signed checkpoint missing", Detail: "refusing to append"}
	}
	cp := l.headParsed
	if !bytes.Equal(signed, l.head) { // the same bytes verify the same way
		if cp, err = formats.OpenCheckpoint(signed, l.lkey); err != nil {
			return fmt.Errorf("refusing to append: %w", err)
		}
		t, err := formats.CheckpointTime(signed, l.lkey)
		if err != nil {
			return fmt.Errorf("refusing to append: the latest checkpoint: %w", err)
		}
		l.head, l.headParsed, l.headTime = signed, cp, t
	}
	v, err := txn.Get(keySize)
	if err != nil {
		return &IntegrityError{Index: -1, What: "log metadata m/size missing", Detail: "refusing to append"}
	}
	if len(v) != 8 {
		return &IntegrityError{Index: -1, What: "log metadata m/size malformed", Detail: "refusing to append"}
	}
	size := int64(binary.BigEndian.Uint64(v))
	if cp.Size != size || size != l.size.Load() {
		return &IntegrityError{Index: -1, What: "stored size", Expected: fmt.Sprint(cp.Size), Found: fmt.Sprint(size),
			Detail: "the stored log is not the one its latest signed checkpoint commits to; refusing to append"}
	}
	root, err := tlog.TreeHash(size, r)
	if err != nil {
		return &IntegrityError{Index: -1, What: "stored tree hashes", Detail: err.Error() + "; refusing to append"}
	}
	if root != cp.Hash {
		return &IntegrityError{Index: -1, What: "stored root hash", Expected: hexHash(cp.Hash), Found: hexHash(root),
			Detail: "the stored tree is not the one its latest signed checkpoint commits to; refusing to append"}
	}
	return nil
}

// TreeHash returns the RFC 6962 root hash of the first n entries, read from
// the stored tree hashes.
func (l *Log) TreeHash(n int64) (tlog.Hash, error) {
	var h tlog.Hash
	err := l.db.View(func(txn Txn) error {
		var err error
		h, err = tlog.TreeHash(n, txnHashReader(txn))
		return err
	})
	return h, err
}
