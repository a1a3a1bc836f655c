package ledger_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"filippo.io/torchwood"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// TestInteropTorchwood reads a log writ published, at two sizes, with a
// tlog-tiles client writ does not contain (filippo.io/torchwood), and
// checks that it verifies the checkpoint with the log's verifier key,
// reaches the same root, yields every entry byte for byte, and proves
// inclusion and consistency against writ's tiles.
func TestInteropTorchwood(t *testing.T) {
	for _, history := range []bool{false, true} {
		name := "plain"
		if history {
			name = "history"
		}
		t.Run(name, func(t *testing.T) { testInteropTorchwood(t, history) })
	}
}

func testInteropTorchwood(t *testing.T, history bool) {
	ctx := context.Background()
	w := &historyWriter{dir: filepath.Join(t.TempDir(), "writer"), now: time.Unix(1_700_000_000, 0)}
	create := ledger.Create
	if history {
		create = ledger.CreateWithHistory
	}
	l, err := create(w.dir, "example.com/interop", testkit.Key(t, 1), func() time.Time { return w.now })
	if err != nil {
		t.Fatal(err)
	}
	w.Log = l
	t.Cleanup(func() { w.Close() })

	pub := filepath.Join(t.TempDir(), "pub")
	var (
		mu     sync.Mutex
		served []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		mu.Lock()
		served = append(served, r.URL.Path)
		mu.Unlock()
		http.FileServer(http.Dir(pub)).ServeHTTP(rw, r)
	}))
	defer srv.Close()
	fetcher, err := torchwood.NewTileFetcher(srv.URL, torchwood.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	client, err := torchwood.NewClient(fetcher, torchwood.WithTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}

	// First publication: 300 entries in batches across the first tile
	// edge (256), so the entry bundle and level-1 tile are partial.
	for _, n := range []int{37, 219, 1, 43} {
		interopBatch(t, w, n)
	}
	w.publish(t, pub)
	old := interopCheckpoint(t, fetcher, w.Log)
	if old.N != 300 {
		t.Fatalf("first checkpoint size %d, want 300", old.N)
	}
	interopEntries(t, client, old.Tree, w.Log)
	interopInclusion(t, client, old.Tree, w.Log)

	// Second publication, incremental: up to 700 entries, crossing the
	// edges at 512 and at the 300 published before.
	for _, n := range []int{100, 112, 1, 187} {
		interopBatch(t, w, n)
	}
	if p := w.publish(t, pub); p.Before != 300 || p.After != 700 {
		t.Fatalf("second publish: %+v, want 300 -> 700", p)
	}
	cur := interopCheckpoint(t, fetcher, w.Log)
	if cur.N != 700 {
		t.Fatalf("second checkpoint size %d, want 700", cur.N)
	}
	interopEntries(t, client, cur.Tree, w.Log)
	interopInclusion(t, client, cur.Tree, w.Log)

	// Consistency from the first published tree to the second, proved
	// from the tiles the client fetches and authenticates.
	r := torchwood.TileHashReaderWithContext(ctx, cur.Tree, fetcher)
	proof, err := tlog.ProveTree(cur.N, old.N, r)
	if err != nil {
		t.Fatalf("ProveTree(%d, %d) through torchwood: %v", cur.N, old.N, err)
	}
	if err := tlog.CheckTree(proof, cur.N, cur.Hash, old.N, old.Hash); err != nil {
		t.Fatalf("consistency %d -> %d: %v", old.N, cur.N, err)
	}
	if err := tlog.CheckTree(proof, cur.N, cur.Hash, old.N, tlog.Hash{1}); err == nil {
		t.Fatal("consistency proof verifies against a wrong old root")
	}

	// The same tree read from the published directory itself: torchwood's
	// PermanentCache over it looks every tile up at torchwood's own tile
	// path there, and falls back to HTTP only for a tile it does not find.
	mu.Lock()
	served = nil
	mu.Unlock()
	disk, err := torchwood.NewPermanentCache(fetcher, pub)
	if err != nil {
		t.Fatal(err)
	}
	diskClient, err := torchwood.NewClient(disk, torchwood.WithTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	interopEntries(t, diskClient, cur.Tree, w.Log)
	interopInclusion(t, diskClient, cur.Tree, w.Log)
	mu.Lock()
	defer mu.Unlock()
	if len(served) != 0 {
		t.Errorf("tiles not found in the published directory, fetched over HTTP: %q", served)
	}
}

// interopBatch appends n entries in one batch, a second after the last:
// binary entries of 1 to 655 bytes (some over 255, to use both length
// bytes of an entry bundle).
func interopBatch(t *testing.T, w *historyWriter, n int) {
	t.Helper()
	w.now = w.now.Add(time.Second)
	var b [][]byte
	for range n {
		e := binary.BigEndian.AppendUint32(nil, uint32(w.next))
		e = append(e, bytes.Repeat([]byte{byte(w.next), 0, '\n'}, w.next%97)...)
		switch w.next % 50 {
		case 3:
			e = []byte{0} // writ refuses empty entries
		case 7:
			e = bytes.Repeat([]byte{0xff}, 300+w.next)
		}
		b = append(b, e)
		w.next++
	}
	if _, err := w.Append(b); err != nil {
		t.Fatal(err)
	}
}

// interopCheckpoint fetches the published checkpoint through torchwood,
// verifies it with the log's verifier key, and checks it is writ's own
// latest checkpoint, with writ's root. The second signature line, writ's
// timestamped cosignature/v1 by the same key, is left unverified by the
// note verifier and checked with torchwood's cosignature verifier.
func interopCheckpoint(t *testing.T, tr torchwood.TileReader, l *ledger.Log) torchwood.Checkpoint {
	t.Helper()
	signed, err := tr.ReadEndpoint(context.Background(), "checkpoint")
	if err != nil {
		t.Fatal(err)
	}
	v, err := note.NewVerifier(l.VerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	n, err := note.Open(signed, note.VerifierList(v))
	if err != nil {
		t.Fatalf("note.Open with the log's verifier key: %v\n%s", err, signed)
	}
	if len(n.Sigs) != 1 || len(n.UnverifiedSigs) != 1 {
		t.Errorf("verified %d signatures, left %d unverified; want 1 and 1", len(n.Sigs), len(n.UnverifiedSigs))
	}
	cp, err := torchwood.ParseCheckpoint(n.Text)
	if err != nil {
		t.Fatalf("torchwood.ParseCheckpoint: %v\n%s", err, n.Text)
	}
	if cp.Origin != l.Origin() || cp.Extension != "" {
		t.Errorf("checkpoint origin %q, extension %q; want %q and none", cp.Origin, cp.Extension, l.Origin())
	}
	mine, err := l.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(signed, mine) {
		t.Errorf("published checkpoint differs from the log's:\n%s\n%s", signed, mine)
	}
	if root, err := l.TreeHash(cp.N); err != nil || root != cp.Hash {
		t.Errorf("checkpoint root %v, writ's root at %d: %v (%v)", cp.Hash, cp.N, root, err)
	}
	// The client's root: the tree hash from the tiles it authenticates.
	r := torchwood.TileHashReaderWithContext(context.Background(), cp.Tree, tr)
	if root, err := tlog.TreeHash(cp.N, r); err != nil || root != cp.Hash {
		t.Errorf("root from the published tiles: %v (%v), checkpoint has %v", root, err, cp.Hash)
	}

	// testkit.Key(t, 1) is the Ed25519 key with a seed of 32 one bytes.
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize))
	if vk, err := note.NewEd25519VerifierKey(l.Origin(), priv.Public().(ed25519.PublicKey)); err != nil || vk != l.VerifierKey() {
		t.Fatalf("test key derivation: %q (%v), log has %q", vk, err, l.VerifierKey())
	}
	cs, err := torchwood.NewCosignatureSigner(l.Origin(), priv)
	if err != nil {
		t.Fatal(err)
	}
	n, err = note.Open(signed, note.VerifierList(v, cs.Verifier()))
	if err != nil || len(n.Sigs) != 2 || len(n.UnverifiedSigs) != 0 {
		t.Fatalf("with torchwood's cosignature verifier: %v; %d verified, %d unverified", err, len(n.Sigs), len(n.UnverifiedSigs))
	}
	ts, err := torchwood.CosignatureTimestamp(n.Sigs[1])
	if err != nil {
		t.Fatal(err)
	}
	if at, err := formats.CheckpointTime(signed, l.Key()); err != nil || at.Unix() != ts {
		t.Errorf("cosignature time: torchwood %d, writ %v (%v)", ts, at, err)
	}
	return cp
}

// interopEntries reads every entry of tree with the client, resuming
// where the iterator stops short of a partial bundle, and compares each
// with the log's.
func interopEntries(t *testing.T, c *torchwood.Client, tree tlog.Tree, l *ledger.Log) {
	t.Helper()
	var next int64
	for next < tree.N {
		from := next
		for i, e := range c.Entries(context.Background(), tree, next) {
			if i != next {
				t.Fatalf("iterator yielded index %d, want %d", i, next)
			}
			interopSame(t, l, i, e)
			next++
		}
		if err := c.Err(); err != nil {
			t.Fatalf("Entries(tree %d, from %d): %v", tree.N, from, err)
		}
		if next == from {
			t.Fatalf("Entries(tree %d, from %d) yielded nothing", tree.N, from)
		}
	}
}

// interopInclusion fetches entries by index with the client, which builds
// their inclusion proofs from the tiles, and verifies those proofs.
func interopInclusion(t *testing.T, c *torchwood.Client, tree tlog.Tree, l *ledger.Log) {
	t.Helper()
	for _, i := range []int64{0, 1, 255, 256, 257, 299, 300, 511, 512, 699} {
		if i >= tree.N {
			continue
		}
		e, proof, err := c.Entry(context.Background(), tree, i)
		if err != nil {
			t.Fatalf("Entry(%d) in tree %d: %v", i, tree.N, err)
		}
		want := interopSame(t, l, i, e)
		if err := tlog.CheckRecord(proof, tree.N, tree.Hash, i, tlog.RecordHash(want)); err != nil {
			t.Errorf("inclusion of %d in tree %d: %v", i, tree.N, err)
		}
		if err := tlog.CheckRecord(proof, tree.N, tree.Hash, i, tlog.RecordHash(append(want, 0))); err == nil {
			t.Errorf("inclusion proof of %d verifies for another entry", i)
		}
	}
}

func interopSame(t *testing.T, l *ledger.Log, i int64, got []byte) []byte {
	t.Helper()
	want, err := l.Entry(i)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("entry %d: torchwood read %x, log has %x", i, got, want)
	}
	return want
}
