package repair

import (
	"cmp"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// ErrNoVKey: Repair cannot tell which verifier key a log it is to
// restore must verify under (its store lost its stored key, and the
// directory holds no public key for it); give it (RepairOptions.VKeys).
var ErrNoVKey = errors.New("no verifier key for the log")

// logPlan is what Repair finds of one log before it changes anything.
type logPlan struct {
	name, store string
	vkey        *formats.LogKey // the key it must verify under: given, or else stored (nil: none known)
	stored      string          // the key its store holds, as text ("" when none can be read)
	storedKey   *formats.LogKey // stored, parsed once (nil: none, or it does not parse)
	badStored   string          // why stored does not parse ("" if it does)
	pub         sign.PublicKey  // the public key the directory keeps for it (zero if none)
	whole       bool            // it opens read-only and verifies
	size, cp    int64           // its size and its checkpoint's, once verified
	files       storeFiles
	floors      []replica.Floor
	cand        string   // where its rebuilt store is made, beside it
	skipped     []string // files the rebuilt store leaves out
}

// planRepair checks every log of dir, changing nothing: whether it opens
// read-only and verifies, under which key it must verify, and (for a
// damaged log) what its files show. ledger.ErrLocked when another process holds
// any of them.
func planRepair(dir string, names []string, given map[string]*formats.LogKey) ([]*logPlan, error) {
	var plans []*logPlan
	var auth, dec *logPlan
	var decided recorded
	for _, name := range names {
		p := &logPlan{name: name, store: filepath.Join(dir, name)}
		var fn ledger.EntryFunc
		if name == ledgerdir.DecisionsDir {
			dec, fn = p, decided.entry
		} else {
			auth = p
		}
		if err := p.check(given[name], fn); err != nil {
			return nil, err
		}
		plans = append(plans, p)
	}
	for _, p := range plans {
		if p.whole {
			continue
		}
		p.findKey(dir, auth, dec)
		keys := p.floorKeys()
		var origins []string
		for _, k := range keys {
			if o := k.Name(); !slices.Contains(origins, o) {
				origins = append(origins, o)
				p.files.readLogs(p.store, o)
			}
		}
		if fl, ok := p.files.floor(keys...); ok {
			p.floors = append(p.floors, fl)
		}
	}
	if auth != nil && !auth.whole && dec != nil && dec.whole && decided.ok {
		auth.floors = append(auth.floors, decided.fl)
	}
	return plans, nil
}

// check opens the log read-only and verifies it under given (nil: its
// stored key, parsed when the store opened), passing each entry to fn; a
// log that does not (a *ledger.StoreError, or tamper evidence) is read as
// storeFiles. Other errors (ledger.ErrLocked, a key that does not match)
// are returned.
func (p *logPlan) check(given *formats.LogKey, fn ledger.EntryFunc) error {
	p.vkey = given
	l, err := ledger.OpenReadOnly(p.store)
	if err == nil {
		p.stored, p.storedKey = l.VerifierKey(), l.Key()
		if p.vkey == nil {
			p.vkey = l.Key()
		}
		var cp formats.Checkpoint
		cp, err = l.Verify(p.vkey, fn)
		p.whole, p.size, p.cp = err == nil, l.Size(), cp.Size
		l.Close()
	}
	if err == nil || errors.Is(err, ledger.ErrLocked) || !errors.Is(err, ledger.ErrTampered) {
		return err
	}
	p.files = readStoreFiles(p.store)
	return nil
}

// findKey sets the key a damaged log must verify under: the one given,
// else the one its store holds (read from its tables, as `writ ledger
// verify` reads it from the store), else the one made from the public
// key the directory keeps for it (checkpoint.pub, runner.pub, also kept
// as p.pub) and the log's origin, when that is known; else none. A key
// found as text is parsed here, once: one that does not parse is none,
// and p.badStored says why (build then refuses, naming it).
func (p *logPlan) findKey(dir string, auth, dec *logPlan) {
	p.stored = cmp.Or(p.stored, p.files.vkey)
	pubName := ledgerdir.CheckpointKey
	if p.name == ledgerdir.DecisionsDir {
		pubName = ledgerdir.RunnerKey
	}
	pub, err := sign.LoadPublicKey(filepath.Join(dir, pubName+".pub"))
	if err == nil {
		p.pub = pub
	}
	if p.stored == "" && err == nil {
		origin := p.files.origin
		switch {
		case origin != "":
		case p.name == ledgerdir.AuthorityDir && dec != nil:
			origin, _, _ = strings.Cut(vkeyOrigin(dec.stored), ledgerdir.DecisionsSuffix)
		case p.name == ledgerdir.DecisionsDir && auth != nil && vkeyOrigin(auth.stored) != "":
			origin = vkeyOrigin(auth.stored) + ledgerdir.DecisionsSuffix + pub.ID()[:16]
		}
		if origin != "" {
			p.stored, _ = formats.VerifierKey(origin, pub)
		}
	}
	if p.storedKey == nil && p.stored != "" {
		if p.storedKey, err = formats.ParseLogKey(p.stored); err != nil {
			p.badStored = fmt.Sprintf("the verifier key its files hold does not parse: %v", err)
		}
	}
	if p.vkey == nil {
		p.vkey = p.storedKey
	}
}

// floorKeys returns the keys a checkpoint found in the files of a damaged
// log may verify under to floor it: its key, its stored key (when that
// parses), and, when neither is known, the directory's public key for it
// under the origin each checkpoint found names.
func (p *logPlan) floorKeys() []*formats.LogKey {
	var keys []*formats.LogKey
	add := func(k *formats.LogKey) {
		if k != nil && !slices.ContainsFunc(keys, func(o *formats.LogKey) bool { return o.String() == k.String() }) {
			keys = append(keys, k)
		}
	}
	add(p.vkey)
	add(p.storedKey)
	if p.vkey != nil || p.pub.IsZero() {
		return keys
	}
	for _, s := range p.files.signed {
		origin, _, _ := strings.Cut(string(s.note), "\n")
		if k, err := formats.NewLogKey(origin, p.pub); err == nil {
			add(k)
		}
	}
	return keys
}

// vkeyOrigin returns the origin (name) of a verifier key.
func vkeyOrigin(vkey string) string {
	name, _, _ := strings.Cut(vkey, "+")
	return name
}

// recorded keeps the largest authority checkpoint the entries of a
// decision log record (schemas.Decision's AuthoritySize and
// AuthorityRoot) as a replica.Floor for the authority log.
type recorded struct {
	fl replica.Floor
	ok bool
}

// entry is an ledger.EntryFunc.
func (r *recorded) entry(i int64, e []byte, _ time.Time) error {
	rec, err := schemas.Decode(schemas.KindDecision, e)
	if err != nil {
		return nil // not a decision: the records are checked elsewhere
	}
	d, ok := rec.(*schemas.Decision)
	if !ok || d.AuthoritySize <= r.fl.Size {
		return nil
	}
	h, err := hex.DecodeString(d.AuthorityRoot)
	if err != nil || len(h) != tlog.HashSize {
		return nil
	}
	r.fl = replica.Floor{Checkpoint: formats.Checkpoint{Size: d.AuthoritySize, Hash: tlog.Hash(h)},
		Where: fmt.Sprintf("entry %d of the decision log, a decision judged against it", i)}
	r.ok = true
	return nil
}

// verifyStore opens the log at store (read-only, or for writing, which
// recovers what a killed writer left), verifies it under k (nil: its own,
// which the caller checked otherwise), passing each entry to fn, and
// checks that it reaches and extends every floor; it returns its size and
// its checkpoint's.
func verifyStore(store string, k *formats.LogKey, readOnly bool, floors []replica.Floor, fn ledger.EntryFunc) (size, checkpoint int64, err error) {
	open := ledger.OpenReadOnly
	if !readOnly {
		open = func(dir string) (*ledger.Log, error) { return ledger.Open(dir, nil) }
	}
	l, err := open(store)
	if err != nil {
		return 0, 0, err
	}
	defer l.Close()
	cp, err := l.Verify(k, fn)
	if err != nil {
		return 0, 0, err
	}
	for _, fl := range floors {
		if err := fl.Check(l, cp); err != nil {
			return 0, 0, err
		}
	}
	return l.Size(), cp.Size, nil
}

// storeLocks holds the directory locks (Badger's flock, exclusive) of log
// stores, by path, so that no other process opens them.
type storeLocks map[string]*os.File

// lockStores takes the lock of every store, or of none: ledger.ErrLocked when
// another process holds one.
func lockStores(stores ...string) (storeLocks, error) {
	locks := storeLocks{}
	for _, s := range stores {
		d, err := os.Open(s)
		if err == nil {
			if err = syscall.Flock(int(d.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
				d.Close()
				if errors.Is(err, syscall.EWOULDBLOCK) {
					err = fmt.Errorf("%w: %s", ledger.ErrLocked, s)
				}
			}
		}
		if err != nil {
			locks.release()
			return nil, err
		}
		locks[s] = d
	}
	return locks, nil
}

// release lets go of the locks of stores (of every store when none is
// named).
func (s storeLocks) release(stores ...string) {
	for p, d := range s {
		if len(stores) == 0 || slices.Contains(stores, p) {
			d.Close() // closing the descriptor releases its flock
			delete(s, p)
		}
	}
}
