package formats_test

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/writ-ledger/writ/ledger/formats"
)

// proofOf returns a consistency proof from size m to size n of a tree of
// distinct leaves.
func proofOf(t testing.TB, m, n int64) formats.ConsistencyProof {
	var hashes []tlog.Hash
	for i := int64(0); i < n; i++ {
		h, err := tlog.StoredHashes(i, []byte{byte(i), byte(i >> 8)}, tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
			out := make([]tlog.Hash, len(idx))
			for j, x := range idx {
				out[j] = hashes[x]
			}
			return out, nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, h...)
	}
	r := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for j, x := range idx {
			out[j] = hashes[x]
		}
		return out, nil
	})
	oldRoot, err := tlog.TreeHash(m, r)
	if err != nil {
		t.Fatal(err)
	}
	newRoot, err := tlog.TreeHash(n, r)
	if err != nil {
		t.Fatal(err)
	}
	path, err := tlog.ProveTree(n, m, r)
	if err != nil {
		t.Fatal(err)
	}
	return formats.ConsistencyProof{OldSize: m, NewSize: n, OldRoot: oldRoot, NewRoot: newRoot, Path: path}
}

// TestConsistencyProofFile: the file `writ ledger consistency --json`
// writes reads back as the same proof, and each malformed file is refused
// under ErrProof, naming the field.
func TestConsistencyProofFile(t *testing.T) {
	p := proofOf(t, 3, 7)
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), `{"new_root":"`) || !strings.Contains(string(b), `"old_size":3,"proof":["`) {
		t.Fatalf("file: %s", b)
	}
	var q formats.ConsistencyProof
	if err := json.Unmarshal(b, &q); err != nil || q.OldSize != 3 || q.NewSize != 7 || q.NewRoot != p.NewRoot || len(q.Path) != len(p.Path) {
		t.Fatalf("read back: %+v, %v", q, err)
	}
	good := string(b)
	other := proofOf(t, 2, 7)
	for name, c := range map[string]struct{ in, want string }{
		"not JSON":        {"{", "not a consistency proof file"},
		"unknown field":   {strings.Replace(good, `"proof"`, `"extra":1,"proof"`, 1), "unknown field"},
		"two objects":     {good + good, "more after the object"},
		"no old_root":     {`{"new_root":"` + strings.Repeat("0", 64) + `","new_size":1,"old_size":1,"proof":[]}`, "has new_root, new_size"},
		"sizes reversed":  {strings.Replace(strings.Replace(good, `"new_size":7`, `"new_size":2`, 1), `"old_size":3`, `"old_size":3`, 1), "want 0 <= old_size <= new_size"},
		"uppercase hash":  {strings.Replace(good, `"new_root":"`+hexOf(p.NewRoot), `"new_root":"`+strings.ToUpper(hexOf(p.NewRoot)), 1), "new_root"},
		"short hash":      {strings.Replace(good, `"proof":["`, `"proof":["ab","`, 1), "proof[0]"},
		"another's path":  {strings.Replace(good, `"old_size":3`, `"old_size":2`, 1), "consistency from size 2 to 7"},
		"too many hashes": {`{"new_root":"` + hexOf(other.NewRoot) + `","new_size":7,"old_root":"` + hexOf(other.OldRoot) + `","old_size":2,"proof":[` + strings.Repeat(`"`+strings.Repeat("0", 64)+`",`, 126) + `"` + strings.Repeat("0", 64) + `"]}`, "at most 126"},
	} {
		_, err := formats.ParseConsistencyProofFile([]byte(c.in))
		if !errors.Is(err, formats.ErrProof) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrProof and %q", name, err, c.want)
		}
	}
}

func hexOf(h tlog.Hash) string { return hex.EncodeToString(h[:]) }

// FuzzConsistencyProofFile: any input is read or refused under ErrProof,
// never a panic; what is read verifies and writes back to a file that
// reads as the same proof.
func FuzzConsistencyProofFile(f *testing.F) {
	b, _ := json.Marshal(proofOf(f, 3, 7))
	f.Add(b)
	f.Add([]byte(`{"new_root":"","new_size":0,"old_root":"","old_size":0,"proof":[]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, in []byte) {
		p, err := formats.ParseConsistencyProofFile(in)
		if err != nil {
			if !errors.Is(err, formats.ErrProof) {
				t.Fatalf("error without ErrProof: %v", err)
			}
			return
		}
		if err := p.Verify(); err != nil {
			t.Fatalf("read a proof that does not verify: %v", err)
		}
		out, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var q formats.ConsistencyProof
		if err := json.Unmarshal(out, &q); err != nil || q.OldRoot != p.OldRoot || q.NewSize != p.NewSize || len(q.Path) != len(p.Path) {
			t.Fatalf("round trip: %+v, %v", q, err)
		}
	})
}

// TestInclusionProofJSON: an inclusion proof's JSON names its hashes in
// hex, its path [] when empty (a tree of one entry).
func TestInclusionProofJSON(t *testing.T) {
	p := formats.InclusionProof{Index: 0, TreeSize: 1, LeafHash: tlog.Hash{0xab}, RootHash: tlog.Hash{0xab}}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	h := "ab" + strings.Repeat("0", 62)
	if want := `{"index":0,"tree_size":1,"leaf_hash":"` + h + `","root_hash":"` + h + `","proof":[]}`; string(b) != want {
		t.Fatalf("got %s\nwant %s", b, want)
	}
	p.Path = []tlog.Hash{{1}}
	if b, _ := json.Marshal(&p); !strings.Contains(string(b), `"proof":["01`+strings.Repeat("0", 62)+`"]`) {
		t.Fatalf("path: %s", b)
	}
}
