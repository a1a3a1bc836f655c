package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/sign"
	"github.com/writ-ledger/writ/verify"
	"golang.org/x/mod/sumdb/tlog"
)

// snapshot is the authority state a runner decides against: the authority
// log verified in full under the trusted key, replayed into a delegation
// state, and checked to extend every checkpoint the runner trusted
// before. The log itself is closed once the snapshot is built, so that
// `writ ledger import` and appends can update it while a runner serves;
// the runner builds a new snapshot when the log's files change.
type snapshot struct {
	sig string // dirSignature of the authority directory when loaded
	// transient: a refusal for one admission, never stored as the
	// runner's snapshot (the log changed and could not be read)
	transient bool

	// rule and err, when err is not nil, say why nothing may be admitted
	// under this snapshot (rules.LedgerUnverified, rules.VKeyMismatch, rules.RootUntrusted,
	// rules.LedgerInconsistent) and carry the evidence.
	rule string
	err  error

	state      *delegation.State
	cp         formats.Checkpoint
	ledgerTime time.Time      // when cp was signed, or witnessed under a policy (zero if unknown)
	recheck    time.Time      // when a witness's future-dated cosignature starts to count: judge again then
	witnessed  bool           // ledgerTime is the witnesses' (verify.Trust.Policy), not the writer's
	key        sign.PublicKey // the authority log's checkpoint key, for receipts

	note  string // the authority's replay note (verify.Authority.ReplayNote), "" when its persisted state was used
	dir   string // the runner's ledger directory, to open the log for a receipt
	mu    sync.Mutex
	roots map[int64]tlog.Hash // receipt roots proven to be prefixes of cp
}

// maxRootCache bounds the receipt roots a snapshot remembers.
const maxRootCache = 4096

// dirSignature identifies the state of the authority log's directory:
// the directory's own change times (Badger creates and removes files in
// it whenever a process opens it for writing and closes it, and on every
// flush) and its MANIFEST's. Reading the log read-only changes neither,
// so the signature moves only when the log may have. Two stats: cheap
// enough to take on every admission.
func dirSignature(dir string) string {
	var b strings.Builder
	for _, p := range []string{dir, filepath.Join(dir, "MANIFEST")} {
		fi, err := os.Stat(p)
		if err != nil {
			fmt.Fprintf(&b, "%s: %v;", p, err)
			continue
		}
		st, _ := fi.Sys().(*syscall.Stat_t)
		if st == nil {
			fmt.Fprintf(&b, "%d:%d;", fi.Size(), fi.ModTime().UnixNano())
			continue
		}
		fmt.Fprintf(&b, "%d:%d:%d:%d.%d:%d.%d;", st.Ino, st.Size, st.Nlink, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
	}
	return b.String()
}

// loadSnapshot opens, verifies and replays the authority log of the
// ledger at dir under trust, and checks that it extends each of trusted
// (nil entries skipped). It returns ledger.ErrLocked unwrapped when
// another process holds the log, so that the caller can keep its current
// snapshot; every other failure is a snapshot that refuses.
func loadSnapshot(dir string, trust verify.Trust, now func() (time.Time, error), trusted ...*formats.Checkpoint) (*snapshot, error) {
	s := &snapshot{sig: dirSignature(filepath.Join(dir, ledgerdir.AuthorityDir)), dir: dir, roots: map[int64]tlog.Hash{}}
	auth, err := ledger.OpenReadOnly(filepath.Join(dir, ledgerdir.AuthorityDir))
	if errors.Is(err, ledger.ErrLocked) {
		return nil, err
	}
	if err != nil {
		s.rule, s.err = rules.LedgerUnverified, err
		return s, nil
	}
	defer auth.Close()
	vkey := trust.VKey
	if vkey == nil {
		vkey = auth.Key()
	}
	a, err := verify.LoadAuthority(auth, vkey)
	var te *ledger.TrustError
	if errors.As(err, &te) {
		s.rule, s.err = te.Rule, err // --vkey names a key that did not sign the log
		return s, nil
	}
	if err != nil {
		s.rule, s.err = rules.LedgerUnverified, err
		return s, nil
	}
	s.note = a.ReplayNote()
	if err := trust.CheckRoot(a.State); err != nil {
		s.rule, s.err = rules.RootUntrusted, err
		return s, nil
	}
	for _, t := range trusted {
		if t == nil {
			continue
		}
		if _, err := auth.CheckConsistent(*t, a.Checkpoint); err != nil {
			s.rule, s.err = rules.LedgerInconsistent, err
			return s, nil
		}
	}
	w, err := trust.CheckWitnessed(auth, vkey, a.Checkpoint, now)
	if w != nil {
		s.recheck = w.Recheck
	}
	if err != nil {
		s.rule, s.err = rules.LedgerUnwitnessed, err
		return s, nil
	}
	s.state, s.cp = a.State, a.Checkpoint
	if w != nil && !w.Time.IsZero() {
		s.ledgerTime, s.witnessed = w.Time, true
	} else if signed, err := auth.Checkpoint(); err == nil {
		if t, err := formats.CheckpointTime(signed, vkey); err == nil {
			s.ledgerTime = t
		}
	}
	s.key = vkey.PublicKey()
	return s, nil
}

// recheckDue reports whether the snapshot's witness verdict depends on a
// cosignature dated in the future that now counts: the log is unchanged,
// but the verdict must be made again.
func (s *snapshot) recheckDue(clock func() (time.Time, error)) bool {
	if s.recheck.IsZero() {
		return false
	}
	now, err := clock()
	return err != nil || !now.Before(s.recheck)
}

// errReceiptNotCovered: a receipt's tree is larger than the authority
// checkpoint this runner verified, so it cannot be checked yet.
var errReceiptNotCovered = errors.New("receipt is beyond the checkpoint this runner verified")

// VerifyReceipt proves that entry is in the authority log this snapshot
// verified: the RFC 9942 receipt (ledger.VerifyReceipt) verifies under the
// authority log's key for these exact bytes, its tree size is at most the
// verified checkpoint's, and its root is that checkpoint's root or is
// proven a prefix of it by an RFC 9162 §2.1.4 consistency proof built from
// the log on disk (which the proof makes untrusted input). Errors wrap
// formats.ErrReceipt, errReceiptNotCovered, or say why the log could not be
// read.
func (s *snapshot) VerifyReceipt(receipt, entry []byte) error {
	if s.key.IsZero() {
		return fmt.Errorf("the authority log's key is unknown to this runner")
	}
	p, err := ledger.VerifyReceipt(receipt, entry, s.key)
	if err != nil {
		return err
	}
	switch {
	case p.TreeSize > s.cp.Size:
		return fmt.Errorf("%w: the receipt is for tree size %d, this runner verified size %d", errReceiptNotCovered, p.TreeSize, s.cp.Size)
	case p.TreeSize == s.cp.Size:
		if p.RootHash != s.cp.Hash {
			return fmt.Errorf("%w: the receipt's root at size %d is %s, the verified checkpoint's is %s", formats.ErrReceipt, p.TreeSize, p.RootHash, s.cp.Hash)
		}
		return nil
	}
	s.mu.Lock()
	known, ok := s.roots[p.TreeSize]
	s.mu.Unlock()
	if ok {
		if known != p.RootHash {
			return fmt.Errorf("%w: the receipt's root at size %d is %s, the verified log's is %s", formats.ErrReceipt, p.TreeSize, p.RootHash, known)
		}
		return nil
	}
	if err := s.provePrefix(p.TreeSize, p.RootHash); err != nil {
		return err
	}
	s.mu.Lock()
	if len(s.roots) >= maxRootCache {
		clear(s.roots)
	}
	s.roots[p.TreeSize] = p.RootHash
	s.mu.Unlock()
	return nil
}

// provePrefix checks that root is the root of the first size entries of
// the tree s.cp commits to, with a consistency proof from the log's stored
// hashes checked against both roots (ledger.Log.CheckConsistent).
func (s *snapshot) provePrefix(size int64, root tlog.Hash) error {
	var (
		auth *ledger.Log
		err  error
	)
	for wait := 10 * time.Millisecond; ; wait *= 2 {
		auth, err = ledger.OpenReadOnly(filepath.Join(s.dir, ledgerdir.AuthorityDir))
		if !errors.Is(err, ledger.ErrLocked) || wait > time.Second {
			break
		}
		time.Sleep(wait)
	}
	if err != nil {
		return fmt.Errorf("opening the authority log to check the receipt's tree: %w", err)
	}
	defer auth.Close()
	if _, err := auth.CheckConsistent(formats.Checkpoint{Origin: s.cp.Origin, Size: size, Hash: root}, s.cp); err != nil {
		return fmt.Errorf("%w: the receipt's tree (size %d) is not a prefix of the verified checkpoint: %w", formats.ErrReceipt, size, err)
	}
	return nil
}
