package ledger_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/replica"
	"golang.org/x/mod/sumdb/tlog"
)

// FuzzParseCheckpoint: an accepted checkpoint body re-serializes to
// exactly the input; nothing panics.
func FuzzParseCheckpoint(f *testing.F) {
	f.Add("example.com/log\n3\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n")
	f.Add("example.com/log\n03\nAAAA\nx\n")
	f.Fuzz(func(t *testing.T, body string) {
		c, err := formats.ParseCheckpoint(body)
		if err != nil {
			return
		}
		if c.Body() != body {
			t.Fatalf("accepted a non-canonical body %q (canonical %q)", body, c.Body())
		}
	})
}

// FuzzOpenTimedCheckpoint: a signed checkpoint is accepted only under the
// key that signed it, its body re-serializes to the bytes signed, and
// nothing panics, whatever the bytes.
func FuzzOpenTimedCheckpoint(f *testing.F) {
	l, err := ledger.CreateWithHistory(filepath.Join(f.TempDir(), "log"), "example.com/fuzz", testkit.Key(f, 1), func() time.Time { return testkit.Epoch })
	if err != nil {
		f.Fatal(err)
	}
	l.Append([][]byte{[]byte("a")})
	signed, _ := l.Checkpoint()
	vkey := l.VerifierKey()
	l.Close()
	other, _ := formats.VerifierKey("example.com/fuzz", testkit.Key(f, 2).Public())
	f.Add(signed)
	f.Add(append([]byte(nil), signed[:len(signed)/2]...))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := formats.OpenTimedCheckpoint(data, testLogKey(t, other)); err == nil {
			t.Fatal("accepted under a key that signed nothing")
		}
		tc, err := formats.OpenTimedCheckpoint(data, testLogKey(t, vkey))
		if err != nil {
			return
		}
		if body, _, _ := bytes.Cut(data, []byte("\n\n")); tc.Body() != string(body)+"\n" {
			t.Fatalf("accepted body %q is not canonical", body)
		}
	})
}

// FuzzExportReader: reading and verifying any bytes as an export never
// panics and never accepts a section under the genuine key whose entries
// do not hash to its root. The seed (testdata/export.seed, written by
// TestWriteExportSeed with -update-seed) is a real export with a
// checkpoint history and a decisions section; the fuzzing itself opens no
// store. Fuzz it with -fuzzminimizetime 5s: the fuzzer's minimization of
// a new input the seed's size (1.8 KB) otherwise takes up to its default
// 60 s, during which the run reports no execs and fuzzes nothing.
func FuzzExportReader(f *testing.F) {
	seed, err := os.ReadFile(filepath.Join("testdata", "export.seed"))
	if err != nil {
		f.Fatal(err)
	}
	vkey := seedVKey(f)
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := replica.NewExportReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		for {
			sec, err := x.Next()
			if err != nil {
				return
			}
			var tree ledger.TreeBuilder
			var key *formats.LogKey // nil: the section's own
			if sec.Name == "authority" {
				key = testLogKey(t, vkey)
			}
			cp, err := x.VerifySection(sec, key, func(_ int64, e []byte, _ time.Time) error {
				tree.Add(tlog.RecordHash(e))
				return nil
			})
			if err != nil {
				return
			}
			if tree.Root() != cp.Hash {
				t.Fatalf("section %s verified with entries that do not hash to its root", sec.Name)
			}
		}
	})
}

// FuzzVerifyReceipt: whatever receipt and entry bytes it is given,
// VerifyReceipt never panics, and a receipt it accepts under the log's
// key proves exactly that entry: its leaf hash is the entry's, its audit
// path leads to the signed root, and the same receipt is refused for any
// other entry and under any other key. The seeds are real receipts of a
// five-entry log (entry 3, a path of three hashes; entry 0).
func FuzzVerifyReceipt(f *testing.F) {
	key := testkit.Key(f, 1)
	l, err := ledger.Create(filepath.Join(f.TempDir(), "log"), "example.com/fuzz", key, func() time.Time { return testkit.Epoch })
	if err != nil {
		f.Fatal(err)
	}
	if _, err := l.Append([][]byte{[]byte("e0"), []byte("e1"), []byte("e2"), []byte("e3"), []byte("e4")}); err != nil {
		f.Fatal(err)
	}
	for _, i := range []int64{3, 0} {
		r, err := l.Receipt(i)
		if err != nil {
			f.Fatal(err)
		}
		entry, _ := l.Entry(i)
		if _, err := ledger.VerifyReceipt(r, entry, key.Public()); err != nil {
			f.Fatalf("the seed receipt of entry %d: %v", i, err)
		}
		f.Add(r, entry)
		f.Add(r[:len(r)-1], entry)
	}
	l.Close()
	other := testkit.Key(f, 2).Public()
	f.Fuzz(func(t *testing.T, receipt, entry []byte) {
		p, err := ledger.VerifyReceipt(receipt, entry, key.Public())
		if err != nil {
			if p != nil {
				t.Fatalf("a refused receipt returned a proof: %v", err)
			}
			return
		}
		if p.LeafHash != tlog.RecordHash(entry) || p.Verify() != nil || p.Index < 0 || p.Index >= p.TreeSize || len(p.Path) > 64 {
			t.Fatalf("accepted a receipt whose proof does not prove the entry: %+v", p)
		}
		if _, err := ledger.VerifyReceipt(receipt, append(bytes.Clone(entry), 0), key.Public()); err == nil {
			t.Fatal("the receipt also verifies for another entry")
		}
		if _, err := ledger.VerifyReceipt(receipt, entry, other); err == nil {
			t.Fatal("the receipt also verifies under a key that signed nothing")
		}
	})
}

// seedVKey is the authority verifier key of testdata/export.seed: key
// 0x01.. under the origin example.com/fuzz.
func seedVKey(t testing.TB) string {
	k, err := formats.VerifierKey("example.com/fuzz", testkit.Key(t, 1).Public())
	if err != nil {
		t.Fatal(err)
	}
	return k
}

var updateSeed = flag.Bool("update-seed", false, "rewrite testdata/export.seed")

// TestWriteExportSeed checks testdata/export.seed is an export of the
// ledger it describes (and rewrites it with -update-seed).
func TestWriteExportSeed(t *testing.T) {
	dir := t.TempDir()
	clock := func() time.Time { return testkit.Epoch }
	auth, err := ledger.CreateWithHistory(filepath.Join(dir, "a"), "example.com/fuzz", testkit.Key(t, 1), clock)
	if err != nil {
		t.Fatal(err)
	}
	runner := testkit.Key(t, 2)
	dec, err := ledger.Create(filepath.Join(dir, "d"), "example.com/fuzz/decisions/"+runner.Public().ID()[:16], runner, clock)
	if err != nil {
		t.Fatal(err)
	}
	auth.Append([][]byte{[]byte("e0"), []byte("e1")})
	auth.Append([][]byte{[]byte("e2")})
	dec.Append([][]byte{[]byte("d0")})
	var b bytes.Buffer
	if err := replica.Export(&b, []string{"authority", "decisions"}, []*ledger.Log{auth, dec}); err != nil {
		t.Fatal(err)
	}
	auth.Close()
	dec.Close()
	path := filepath.Join("testdata", "export.seed")
	if *updateSeed {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	x, err := replica.NewExportReader(bytes.NewReader(mustRead(t, path)))
	if err != nil {
		t.Fatal(err)
	}
	sec, err := x.Next()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.VerifySection(sec, testLogKey(t, seedVKey(t)), nil); err != nil || sec.Size != 3 || !sec.History {
		t.Fatalf("the seed's authority section: %+v, %v", sec, err)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
