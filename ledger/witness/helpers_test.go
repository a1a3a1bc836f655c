package witness_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/witness"
	"github.com/writ-ledger/writ/sign"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

const witnessName = "witness.example/w1"

// testLog is a log kept in memory: its leaves' RFC 6962 hashes, signed
// checkpoints by a real Ed25519 key, and consistency proofs.
type testLog struct {
	origin string
	key    *sign.PrivateKey
	signer note.Signer
	vkey   string
	leaves [][]byte
	hashes []tlog.Hash // tlog's stored hashes of the leaves
}

func newTestLog(t testing.TB, origin string, seed byte) *testLog {
	t.Helper()
	k := testkit.Key(t, seed)
	s, vkey, err := formats.NewNoteSigner(origin, k)
	if err != nil {
		t.Fatal(err)
	}
	return &testLog{origin: origin, key: k, signer: s, vkey: vkey}
}

// grow appends n leaves, each naming the log, its branch tag and index.
func (l *testLog) grow(t testing.TB, tag string, n int) *testLog {
	t.Helper()
	for range n {
		i := int64(len(l.leaves))
		leaf := []byte(fmt.Sprintf("%s %s leaf %d", l.origin, tag, i))
		hs, err := tlog.StoredHashes(i, leaf, l.reader())
		if err != nil {
			t.Fatal(err)
		}
		l.leaves = append(l.leaves, leaf)
		l.hashes = append(l.hashes, hs...)
	}
	return l
}

// fork returns a copy of the log's first n leaves, under the same key.
func (l *testLog) fork(t testing.TB, n int) *testLog {
	t.Helper()
	f := &testLog{origin: l.origin, key: l.key, signer: l.signer, vkey: l.vkey}
	for i := range n {
		hs, err := tlog.StoredHashes(int64(i), l.leaves[i], f.reader())
		if err != nil {
			t.Fatal(err)
		}
		f.leaves = append(f.leaves, l.leaves[i])
		f.hashes = append(f.hashes, hs...)
	}
	return f
}

func (l *testLog) reader() tlog.HashReader {
	return tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			if x >= int64(len(l.hashes)) {
				return nil, fmt.Errorf("hash %d not stored", x)
			}
			out[i] = l.hashes[x]
		}
		return out, nil
	})
}

func (l *testLog) root(t testing.TB, size int64) tlog.Hash {
	t.Helper()
	if size == 0 {
		return tlog.Hash(sha256.Sum256(nil))
	}
	h, err := tlog.TreeHash(size, l.reader())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// text is the checkpoint text of the first size leaves, with extension
// lines.
func (l *testLog) text(t testing.TB, size int64, ext ...string) string {
	c := formats.Checkpoint{Origin: l.origin, Size: size, Hash: l.root(t, size)}
	s := c.Body()
	for _, e := range ext {
		s += e + "\n"
	}
	return s
}

// checkpoint signs the checkpoint of the first size leaves with the
// log's key (and the extra signers).
func (l *testLog) checkpoint(t testing.TB, size int64, ext ...string) []byte {
	t.Helper()
	return signText(t, l.text(t, size, ext...), l.signer)
}

func signText(t testing.TB, text string, signers ...note.Signer) []byte {
	t.Helper()
	b, err := note.Sign(&note.Note{Text: text}, signers...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (l *testLog) proof(t testing.TB, old, size int64) tlog.TreeProof {
	t.Helper()
	if old == 0 || old == size {
		return nil
	}
	p, err := tlog.ProveTree(size, old, l.reader())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// body is the add-checkpoint request body.
func body(t testing.TB, old int64, proof tlog.TreeProof, signed []byte) []byte {
	t.Helper()
	b, err := witness.MarshalRequest(old, proof, signed)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newWitness opens a witness over dir for logs, signing at testkit.Epoch.
func newWitness(t testing.TB, dir string, logs ...*testLog) *witness.Witness {
	t.Helper()
	w, err := witness.New(witnessConfig(t, dir, logs...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func witnessConfig(t testing.TB, dir string, logs ...*testLog) witness.Config {
	var vkeys []string
	for _, l := range logs {
		vkeys = append(vkeys, l.vkey)
	}
	return witness.Config{Name: witnessName, Key: testkit.Key(t, 200), Dir: dir, Logs: vkeys,
		Now: func() time.Time { return testkit.Epoch }}
}

// serve serves w on loopback for the test.
func serve(t testing.TB, w *witness.Witness) string {
	srv := httptest.NewServer(w.Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}

// post sends body to URL/add-checkpoint and returns status, content type
// and body.
func post(t testing.TB, url string, body []byte) (int, string, string) {
	t.Helper()
	return do(t, http.MethodPost, url+"/add-checkpoint", body)
}

func do(t testing.TB, method, url string, body []byte) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// cosigned checks that line is one cosignature/v1 line of the test
// witness over signed's text at testkit.Epoch, and returns signed with
// it appended.
func cosigned(t testing.TB, w *witness.Witness, signed []byte, line string) []byte {
	t.Helper()
	v, err := formats.NewCosignerVerifier(w.VerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(line, "\u2014 "+witnessName+" ") || strings.Count(line, "\n") != 1 || !strings.HasSuffix(line, "\n") {
		t.Fatalf("answer %q is not one signature line of %s", line, witnessName)
	}
	all := append(bytes.Clone(signed), line...)
	at, err := v.Time(all)
	if err != nil {
		t.Fatalf("the cosignature does not verify: %v", err)
	}
	if !at.Equal(testkit.Epoch) {
		t.Fatalf("cosignature time %s, want %s", at, testkit.Epoch)
	}
	return all
}
