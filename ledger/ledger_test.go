package ledger_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"filippo.io/edwards25519"
	"github.com/dgraph-io/badger/v4"
	"github.com/transparency-dev/formats/log"
	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/sign"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

func entries(n int) [][]byte {
	var out [][]byte
	for i := range n {
		out = append(out, []byte(fmt.Sprintf("entry %d %s", i, bytes.Repeat([]byte{'x'}, i%7))))
	}
	return out
}

// newLog creates a log in a temp dir and appends n entries in batches of
// various sizes; it returns the log (closed) and its directory.
func newLog(t *testing.T, n int) (string, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "log")
	l, err := ledger.Create(dir, "example.com/test-log", testkit.Key(t, 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	all := entries(n)
	for i := 0; i < n; {
		j := min(n, i+1+i%5)
		first, err := l.Append(all[i:j])
		if err != nil {
			t.Fatal(err)
		}
		if first != int64(i) {
			t.Fatalf("Append returned first index %d, want %d", first, i)
		}
		i = j
	}
	vkey := l.VerifierKey()
	l.Close()
	return dir, vkey
}

// independentRoot computes the RFC 6962 root with transparency-dev/merkle.
func independentRoot(t *testing.T, leaves [][]byte) []byte {
	t.Helper()
	rf := &compact.RangeFactory{Hash: rfc6962.DefaultHasher.HashChildren}
	r := rf.NewEmptyRange(0)
	for _, e := range leaves {
		if err := r.Append(rfc6962.DefaultHasher.HashLeaf(e), nil); err != nil {
			t.Fatal(err)
		}
	}
	root, err := r.GetRootHash(nil)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestCheckpointIndependently: writ's checkpoints parse with
// transparency-dev/formats, verify with sumdb/note, and carry the root
// transparency-dev/merkle computes from the same entries.
func TestCheckpointIndependently(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 8, 33} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			dir, vkey := newLog(t, n)
			l, err := ledger.Open(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			signed, _ := l.Checkpoint()
			v, _ := note.NewVerifier(vkey)
			nt, err := note.Open(signed, note.VerifierList(v))
			if err != nil {
				t.Fatal(err)
			}
			var cp log.Checkpoint
			if rest, err := cp.Unmarshal([]byte(nt.Text)); err != nil || len(rest) != 0 {
				t.Fatalf("formats/log: %v, rest %q", err, rest)
			}
			if cp.Origin != "example.com/test-log" || cp.Size != uint64(n) {
				t.Fatalf("checkpoint %+v", cp)
			}
			if want := independentRoot(t, entries(n)); !bytes.Equal(cp.Hash, want) {
				t.Fatalf("root %x, transparency-dev/merkle says %x", cp.Hash, want)
			}
			if _, err := l.Verify(testLogKey(t, vkey), nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// badgerEdit changes a closed log directly in Badger, as an attacker with
// disk access would.
func badgerEdit(t *testing.T, dir string, f func(txn *badger.Txn) error) {
	t.Helper()
	db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(f); err != nil {
		t.Fatal(err)
	}
}

// hashKey is the key of stored tree hash i.
func hashKey(i int64) []byte {
	k := entryKey(i)
	k[0] = 'h'
	return k
}

func entryKey(i int64) []byte {
	k := make([]byte, 9)
	k[0] = 'e'
	binary.BigEndian.PutUint64(k[1:], uint64(i))
	return k
}

func get(t *testing.T, txn *badger.Txn, k []byte) []byte {
	it, err := txn.Get(k)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := it.ValueCopy(nil)
	return v
}

// TestVerifyFindsTampering: a changed, missing, reordered or extra entry
// is reported with its index.
func TestVerifyFindsTampering(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(t *testing.T) func(*badger.Txn) error
		index int64
		what  string
	}{
		{"one flipped bit", func(t *testing.T) func(*badger.Txn) error {
			return func(txn *badger.Txn) error {
				v := get(t, txn, entryKey(5))
				v[2] ^= 0x01
				return txn.Set(entryKey(5), v)
			}
		}, 5, "leaf hash"},
		{"removed entry", func(t *testing.T) func(*badger.Txn) error {
			return func(txn *badger.Txn) error { return txn.Delete(entryKey(4)) }
		}, 4, "entry missing"},
		{"removed last entry", func(t *testing.T) func(*badger.Txn) error {
			return func(txn *badger.Txn) error { return txn.Delete(entryKey(9)) }
		}, 9, "entry missing"},
		{"two entries swapped", func(t *testing.T) func(*badger.Txn) error {
			return func(txn *badger.Txn) error {
				a, b := get(t, txn, entryKey(2)), get(t, txn, entryKey(3))
				txn.Set(entryKey(2), b)
				return txn.Set(entryKey(3), a)
			}
		}, 2, "leaf hash"},
		{"removed tree hash", func(t *testing.T) func(*badger.Txn) error {
			// Entry 5 adds its leaf hash and the level-1 hash over 4 and 5.
			return func(txn *badger.Txn) error { return txn.Delete(hashKey(tlog.StoredHashIndex(1, 2))) }
		}, 5, "tree hash missing"},
		{"changed tree hash", func(t *testing.T) func(*badger.Txn) error {
			return func(txn *badger.Txn) error { return txn.Set(hashKey(tlog.StoredHashIndex(1, 2)), make([]byte, 32)) }
		}, 5, "tree hash at level 1"},
		{"removed leaf hash of the first entry", func(t *testing.T) func(*badger.Txn) error {
			return func(txn *badger.Txn) error { return txn.Delete(hashKey(0)) }
		}, 0, "tree hash missing"},
		{"entry added past the checkpoint", func(t *testing.T) func(*badger.Txn) error {
			return func(txn *badger.Txn) error { return txn.Set(entryKey(10), []byte("smuggled")) }
		}, 10, "entry beyond the checkpoint"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, vkey := newLog(t, 10)
			badgerEdit(t, dir, tc.edit(t))
			l, err := ledger.Open(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			_, err = l.Verify(testLogKey(t, vkey), nil)
			var ie *ledger.IntegrityError
			if !errors.As(err, &ie) || !errors.Is(err, ledger.ErrTampered) {
				t.Fatalf("Verify = %v, want an IntegrityError", err)
			}
			if ie.Index != tc.index || ie.What != tc.what {
				t.Fatalf("IntegrityError at %d %q, want %d %q (%v)", ie.Index, ie.What, tc.index, tc.what, err)
			}
		})
	}
}

func TestVerifyRefusesOtherKey(t *testing.T) {
	dir, _ := newLog(t, 3)
	l, err := ledger.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	other, _ := formats.VerifierKey("example.com/test-log", testkit.Key(t, 2).Public())
	if _, err := l.Verify(testLogKey(t, other), nil); !errors.Is(err, formats.ErrCheckpointSignature) {
		t.Fatalf("Verify under another key = %v", err)
	}
	if _, err := l.Append([][]byte{[]byte("x")}); !errors.Is(err, ledger.ErrNoSigner) {
		t.Fatalf("Append without key = %v", err)
	}
}

func TestOpenRefusesWrongKey(t *testing.T) {
	dir, _ := newLog(t, 1)
	if _, err := ledger.Open(dir, testkit.Key(t, 2)); !errors.Is(err, ledger.ErrWrongKey) {
		t.Fatalf("Open with another key = %v", err)
	}
}

func TestAppendRefusesEntrySizes(t *testing.T) {
	dir, _ := newLog(t, 1)
	l, err := ledger.Open(dir, testkit.Key(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, e := range [][]byte{{}, make([]byte, ledger.MaxEntrySize+1)} {
		if _, err := l.Append([][]byte{[]byte("ok"), e}); !errors.Is(err, ledger.ErrEntrySize) {
			t.Fatalf("Append of %d bytes = %v", len(e), err)
		}
	}
	if l.Size() != 1 {
		t.Fatalf("a refused batch changed the size to %d", l.Size())
	}
	if _, err := l.Append([][]byte{make([]byte, ledger.MaxEntrySize)}); err != nil {
		t.Fatal(err)
	}
}

func TestParseCheckpointStrict(t *testing.T) {
	good := "example.com/log\n3\n" + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" + "\n"
	if _, err := formats.ParseCheckpoint(good); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		"example.com/log\n03\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",
		"example.com/log\n-3\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",
		"example.com/log\n3\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\nextension\n",
		"example.com/log\n3\nAAAA\n",
		"example.com/log\n3\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
		"\n3\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",
	} {
		if _, err := formats.ParseCheckpoint(bad); !errors.Is(err, formats.ErrMalformedCheckpoint) {
			t.Errorf("ParseCheckpoint(%q) = %v", bad, err)
		}
	}
}

// TestAppendRefusesUnsignedState: a log truncated, or rewritten with its
// tree hashes recomputed, is never extended and re-signed by its own key.
func TestAppendRefusesUnsignedState(t *testing.T) {
	tests := []struct {
		name string
		edit func(t *testing.T) func(*badger.Txn) error
		what string
	}{
		{"truncated", func(t *testing.T) func(*badger.Txn) error {
			return func(txn *badger.Txn) error {
				size := make([]byte, 8)
				binary.BigEndian.PutUint64(size, 9)
				txn.Delete(entryKey(9))
				return txn.Set([]byte("m/size"), size)
			}
		}, "stored size"},
		{"interior hash rewritten", func(t *testing.T) func(*badger.Txn) error {
			return func(txn *badger.Txn) error {
				// The node over entries 8 and 9, part of the size-10 root.
				k := make([]byte, 9)
				k[0] = 'h'
				binary.BigEndian.PutUint64(k[1:], uint64(tlog.StoredHashIndex(1, 4)))
				return txn.Set(k, bytes.Repeat([]byte{7}, 32))
			}
		}, "stored root hash"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := newLog(t, 10)
			badgerEdit(t, dir, tc.edit(t))
			l, err := ledger.Open(dir, testkit.Key(t, 1))
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			_, err = l.Append([][]byte{[]byte("honest")})
			var ie *ledger.IntegrityError
			if !errors.As(err, &ie) || ie.What != tc.what {
				t.Fatalf("Append = %v, want an IntegrityError on %q", err, tc.what)
			}
		})
	}
}

func TestOpenRefusesNonLogs(t *testing.T) {
	empty := t.TempDir()
	if _, err := ledger.Open(empty, nil); !errors.Is(err, ledger.ErrNotALog) {
		t.Fatalf("Open of an empty directory = %v", err)
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Fatalf("Open wrote %d files into a directory that held no log", len(entries))
	}
	dir, _ := newLog(t, 2)
	badgerEdit(t, dir, func(txn *badger.Txn) error { return txn.Delete([]byte("m/vkey")) })
	if _, err := ledger.Open(dir, nil); !errors.Is(err, ledger.ErrTampered) {
		t.Fatalf("Open without m/vkey = %v", err)
	}
}

// TestVerifierKeyRefusesWeakKeys: a signed-note verifier key is refused,
// as a key, when its Ed25519 key is of small order (which verifies forged
// signatures) or has a torsion component; OpenCheckpoint refuses it before
// reading the note.
func TestVerifierKeyRefusesWeakKeys(t *testing.T) {
	identity := make([]byte, 32)
	identity[0] = 1
	good := testkit.Key(t, 1).Public().Raw()
	a, err := new(edwards25519.Point).SetBytes(good)
	if err != nil {
		t.Fatal(err)
	}
	t8, _ := new(edwards25519.Point).SetBytes(unhexT(t, "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"))
	torsion := new(edwards25519.Point).Add(a, t8).Bytes()
	dir, _ := newLog(t, 2)
	l, err := ledger.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for name, raw := range map[string][]byte{"small order": identity, "torsion component": torsion} {
		vkey := noteVKey("example.com/test-log", raw)
		if _, err := note.NewVerifier(vkey); err != nil {
			t.Fatalf("%s: the key is not even well-formed for sumdb/note: %v", name, err)
		}
		if _, err := formats.NewVerifier(vkey); !errors.Is(err, sign.ErrInvalidKey) {
			t.Errorf("%s: NewVerifier = %v, want sign.ErrInvalidKey", name, err)
		}
		// A weak key is refused where it is parsed, before any checkpoint
		// is opened under it.
		if k, err := formats.ParseLogKey(vkey); !errors.Is(err, sign.ErrInvalidKey) || k != nil {
			t.Errorf("%s: ParseLogKey = %v, %v, want nil and sign.ErrInvalidKey", name, k, err)
		}
	}
}

// noteVKey builds a signed-note Ed25519 verifier key for any 32 bytes,
// as c2sp.org/signed-note defines it, without checking the key.
func noteVKey(name string, raw []byte) string {
	h := sha256.Sum256(append([]byte(name+"\n\x01"), raw...))
	return fmt.Sprintf("%s+%x+%s", name, h[:4], base64.StdEncoding.EncodeToString(append([]byte{1}, raw...)))
}

func unhexT(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
