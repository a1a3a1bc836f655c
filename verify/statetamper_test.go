package verify_test

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/dgraph-io/badger/v4"
	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/internal/testkit/statequery"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/stateview"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/audit"
)

// The persisted state index's keys (ledger/state.go), as an attacker
// with the disk edits them.
var keyBinding = []byte("m/state")

func keyMark(i int64) []byte { return binary.BigEndian.AppendUint64([]byte("s/m"), uint64(i)) }

func keyContent(c [32]byte) []byte { return append([]byte("s/d"), c[:]...) }

// tamperLedger is a real ledger directory (verify.NewLedger) with
// delegations, instructions, a revocation of a key and a quarantine,
// appended in three calls (each loading the authority afresh).
type tamperLedger struct {
	d       ledgerdir.Dir
	unlock  ledgerdir.Unlock
	applied []*delegation.Applied // every entry, by index
	u       statequery.Universe
}

func newTamperLedger(t *testing.T) *tamperLedger {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	rootKey, op, op2 := testkit.Key(t, 1), testkit.Key(t, 10), testkit.Key(t, 11)
	root := testkit.Root(1, rootKey)
	root.IssuedAt, root.Expires = now.Add(-time.Hour).Unix(), now.Add(365*24*time.Hour).Unix()
	tl := &tamperLedger{d: ledgerdir.Dir(filepath.Join(t.TempDir(), "ledger")),
		unlock: ledgerdir.Unlock{Identities: func() ([]age.Identity, error) { return []age.Identity{id}, nil }}}
	_, err = verify.NewLedger(tl.d, "example.com/tamper", testkit.Seal(t, root, rootKey), now, func() (ledgerdir.NewKey, error) {
		return ledgerdir.NewKey{Recipients: []age.Recipient{id.Recipient()}, Rand: rand.Reader}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	issued := now.Add(-time.Minute).Unix()
	deleg := func(k *sign.PrivateKey, acts ...string) []byte {
		d := testkit.Delegation(k, acts, "demo", "runner-*")
		d.IssuedAt, d.NotBefore, d.NotAfter = issued, now.Add(-time.Hour).Unix(), now.Add(24*time.Hour).Unix()
		return testkit.Seal(t, d, rootKey)
	}
	instr := func(k *sign.PrivateKey, n int) []byte {
		in := testkit.Instruction(fmt.Sprintf("%032x", n))
		in.IssuedAt, in.NotBefore, in.Expires = issued, issued, issued+3600
		return testkit.Seal(t, in, k)
	}
	revoke := &schemas.Revocation{V: 1, Target: op2.Public().ID(), Reason: "left", IssuedAt: issued}
	quar := &schemas.Quarantine{V: 1, Machine: "runner-1", IssuedAt: issued}
	tl.applied = []*delegation.Applied{nil} // the root, entry 0
	for _, batch := range [][][]byte{
		{deleg(op, "instruct", "quarantine"), deleg(op2, "instruct"), instr(op, 1), instr(op2, 2)},
		{testkit.Seal(t, revoke, rootKey), testkit.Seal(t, quar, rootKey)},
		{instr(op, 3), instr(op, 4)},
	} {
		a, applied, err := verify.AppendRecords(tl.d, batch, tl.unlock)
		if err != nil {
			t.Fatal(err)
		}
		a.Log.Close()
		tl.applied = append(tl.applied, applied...)
	}
	tl.u = statequery.Universe{Keys: []sign.PublicKey{rootKey.Public(), op.Public(), op2.Public(), testkit.Key(t, 99).Public()},
		Platforms: []string{"linux/amd64"}, Machines: []string{"runner-1", "runner-2"}, At: []time.Time{now, now.Add(2 * time.Hour)}}
	for _, a := range tl.applied[1:] {
		tl.u.Targets = append(tl.u.Targets, a.Digest)
	}
	return tl
}

// edit edits the authority store directly (the log closed).
func (tl *tamperLedger) edit(t *testing.T, edit func(*badger.Txn) error) {
	t.Helper()
	if err := testkit.EditStore(tl.d.AuthorityStore(), edit); err != nil {
		t.Fatal(err)
	}
}

// load opens the authority log for writing, loads it, checks its state
// against a full replay, and returns why it was replayed ("" for not).
func (tl *tamperLedger) load(t *testing.T) string {
	t.Helper()
	a, err := verify.OpenAuthority(tl.d, verify.Trust{}, &tl.unlock)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Log.Close()
	ref, marks := fullReplay(t, a.Log)
	sameAnswers(t, "loaded", a.State, ref, tl.u)
	if err := verify.CheckStateIndex(a.Log, ref, marks.Marks); err != nil {
		t.Fatalf("after the load: %v", err)
	}
	b, ok, err := stateview.NewIndex(a.Log).Binding()
	root, rerr := a.Log.TreeHash(a.Log.Size())
	if err != nil || rerr != nil || !ok || b.Size != a.Log.Size() || b.Root != root {
		t.Fatalf("after the load the binding is %+v (%v, %v, %v), want the log's size %d and root %x", b, ok, err, rerr, a.Log.Size(), root)
	}
	return a.Replayed
}

// TestStateTamperBinding: a binding deleted, malformed, past the log or
// with a wrong root is never used: the next load replays the whole log
// (Authority.Replayed says why), answers as a full replay does, and
// writes the binding again, so that the load after it extends the state.
func TestStateTamperBinding(t *testing.T) {
	tl := newTamperLedger(t)
	if why := tl.load(t); why != "" {
		t.Fatalf("an untouched ledger was replayed: %s", why)
	}
	for _, tc := range []struct {
		name, why string
		edit      func(*badger.Txn) error
	}{
		{"deleted", "no state index", func(txn *badger.Txn) error { return txn.Delete(keyBinding) }},
		{"wrong root", "not a prefix of the signed tree", func(txn *badger.Txn) error { return flipBinding(txn, 8+5) }},
		{"shorter size", "not a prefix of the signed tree", func(txn *badger.Txn) error { return flipBinding(txn, 7) }},
		{"wrong marks digest", "not those its binding was written with", func(txn *badger.Txn) error { return flipBinding(txn, 40+3) }},
		{"past the log", "the binding covers", func(txn *badger.Txn) error {
			return txn.Set(keyBinding, append(binary.BigEndian.AppendUint64(nil, 1000), make([]byte, 64)...))
		}},
		{"malformed", "the binding is 5 bytes", func(txn *badger.Txn) error { return txn.Set(keyBinding, []byte("short")) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl.edit(t, tc.edit)
			if why := tl.load(t); !strings.Contains(why, tc.why) {
				t.Fatalf("Replayed %q, want it to say %q", why, tc.why)
			}
			if why := tl.load(t); why != "" {
				t.Fatalf("the binding was not written again: the next load replayed: %s", why)
			}
		})
	}
}

// flipBinding flips the low bit of byte i of the stored binding (its
// 8-byte size, then its root).
func flipBinding(txn *badger.Txn, i int) error {
	item, err := txn.Get(keyBinding)
	if err != nil {
		return err
	}
	v, err := item.ValueCopy(nil)
	if err != nil {
		return err
	}
	v[i] ^= 1
	return txn.Set(keyBinding, v)
}

// TestStateTamperDivergence: an index edited below a binding that still
// verifies is what `writ ledger verify` finds: CheckStateIndex after a
// full replay names the entry in a *verify.StateDivergenceError, the
// audit fails with ErrStateDiverged, and after verify.RebuildState the
// audit passes and the load extends a state that answers as the full
// replay. A mark deleted, added or changed is also what the extending
// load sees (the binding's marks digest): it replays, saying so; a
// content key deleted or moved it cannot see.
func TestStateTamperDivergence(t *testing.T) {
	const marks = "not those its binding was written with"
	for _, tc := range []struct {
		name string
		edit func(tl *tamperLedger, txn *badger.Txn) error
		item func(tl *tamperLedger) string // the StateDivergenceError's Item
		load string                        // what the extending load's replay says; "" when it cannot see the edit
	}{
		{"revocation unmarked", func(tl *tamperLedger, txn *badger.Txn) error { return txn.Delete(keyMark(5)) }, entryItem(5), marks},
		{"instruction marked", func(tl *tamperLedger, txn *badger.Txn) error { return txn.Set(keyMark(3), []byte("revocation")) }, entryItem(3), marks},
		{"mark of another kind", func(tl *tamperLedger, txn *badger.Txn) error { return txn.Set(keyMark(6), []byte("delegation")) }, entryItem(6), marks},
		{"content key deleted", func(tl *tamperLedger, txn *badger.Txn) error { return txn.Delete(keyContent(tl.applied[4].Content)) }, entryItem(4), ""},
		{"content key moved", func(tl *tamperLedger, txn *badger.Txn) error {
			return txn.Set(keyContent(tl.applied[7].Content), binary.BigEndian.AppendUint64(nil, 8))
		}, func(tl *tamperLedger) string { return fmt.Sprintf("content key %x", tl.applied[7].Content) }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := newTamperLedger(t)
			tl.edit(t, func(txn *badger.Txn) error { return tc.edit(tl, txn) })
			if why := observeDiverged(t, tl); tc.load != "" && !strings.Contains(why, tc.load) {
				t.Fatalf("the extending load replayed %q, want it to say %q", why, tc.load)
			}
			checkDiverged(t, tl, tc.item(tl))
			if err := verify.RebuildState(tl.d, nil); err != nil {
				t.Fatalf("RebuildState: %v", err)
			}
			if rep, err := audit.Run(audit.Dir(string(tl.d)), audit.Options{}); err != nil || !rep.OK {
				t.Fatalf("audit after RebuildState: %v, %+v", err, rep.Failure)
			}
			if why := tl.load(t); why != "" {
				t.Fatalf("the load after RebuildState replayed: %s", why)
			}
		})
	}
}

// observeDiverged logs what a read-only load makes of the edited index:
// whether it noticed (and replayed), and the first answer in which its
// state differs from the full replay's; it returns why it replayed ("":
// it did not). Below a binding that verifies, the content keys rest on
// the local disk (ledger/state.go).
func observeDiverged(t *testing.T, tl *tamperLedger) string {
	l, err := ledger.OpenReadOnly(tl.d.AuthorityStore())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	a, err := verify.LoadAuthority(l, nil)
	if err != nil {
		t.Logf("incremental load: %v", err)
		return ""
	}
	ref, _ := fullReplay(t, l)
	t.Logf("incremental load: replayed %q; differs from the full replay at: %s", a.Replayed,
		statequery.Diff(statequery.Answers(a.State, tl.u), statequery.Answers(ref, tl.u)))
	return a.Replayed
}

func entryItem(i int64) func(*tamperLedger) string {
	return func(*tamperLedger) string { return fmt.Sprintf("entry %d", i) }
}

// checkDiverged checks that both the index check after a full replay and
// the audit name item.
func checkDiverged(t *testing.T, tl *tamperLedger, item string) {
	t.Helper()
	l, err := ledger.OpenReadOnly(tl.d.AuthorityStore())
	if err != nil {
		t.Fatal(err)
	}
	ref, marks := fullReplay(t, l)
	err = verify.CheckStateIndex(l, ref, marks.Marks)
	l.Close()
	var de *verify.StateDivergenceError
	if !errors.As(err, &de) || de.Item != item || !errors.Is(err, verify.ErrStateDiverged) || !errors.Is(err, ledger.ErrTampered) {
		t.Fatalf("CheckStateIndex: %v, want a *StateDivergenceError at %s", err, item)
	}
	rep, err := audit.Run(audit.Dir(string(tl.d)), audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK || rep.Failure == nil || rep.Failure.Log != "authority" || !errors.Is(rep.Failure.Cause, verify.ErrStateDiverged) ||
		!errors.As(rep.Failure.Cause, &de) || de.Item != item {
		t.Fatalf("audit: ok %v, failure %+v; want the authority log's state diverged at %s", rep.OK, rep.Failure, item)
	}
}

// TestStateTamperDuplicateAdmitted: what LIMITATIONS.md says the
// persisted state rests on. A content key deleted from the index (by
// someone who can write the directory) is not seen by the writer's load,
// which extends the index and judges duplicates by it: the copy of entry
// 3 is appended as entry 9. Every full replay then refuses entry 9 as a
// duplicate of entry 3, naming both (RebuildState here; ledger verify and
// the audit run the same replay), and the state is not rebuilt over it.
func TestStateTamperDuplicateAdmitted(t *testing.T) {
	tl := newTamperLedger(t)
	ro, err := ledger.OpenReadOnly(tl.d.AuthorityStore())
	if err != nil {
		t.Fatal(err)
	}
	again, err := ro.Entry(3) // an instruction by a key still delegated
	ro.Close()
	if err != nil {
		t.Fatal(err)
	}
	tl.edit(t, func(txn *badger.Txn) error { return txn.Delete(keyContent(tl.applied[3].Content)) })
	a, _, err := verify.AppendRecords(tl.d, [][]byte{again}, tl.unlock)
	if a != nil {
		a.Log.Close()
	}
	if err != nil {
		t.Fatalf("appending entry 3 again with its content key deleted: %v; the limitation documented is that it is appended", err)
	}
	err = verify.RebuildState(tl.d, nil)
	var re *delegation.RecordError
	if !errors.As(err, &re) || re.Rule != delegation.RuleDuplicate || re.Index != 9 || !strings.Contains(re.Error(), "already entry 3") {
		t.Fatalf("RebuildState after the copy was appended: %v, want entry 9 refused as a duplicate of entry 3", err)
	}
}
