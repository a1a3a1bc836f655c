package ledger

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger/internal/badgerfile"
)

// TestOneShotWritersCompact: a writer that opens a log, appends one entry
// and closes, again and again (`ledger append`, `admit`, a sync of one
// record), keeps level 0 bounded: the close that completes 40 level-0
// tables compacts them (badgerfile.Options), and a close that leaves a
// lower level over its target waits for Badger's compactors
// (badgerfile.Settle). Before, every such act added one level-0 table
// that no later act compacted, and every open read them all: 120 acts
// left 121 tables. The log reads and verifies the same after every act.
func TestOneShotWritersCompact(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "log")
	key := testkit.Key(t, 1)
	l, err := Create(dir, "example.com/settle", key, nil)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	most := 0
	for i := range 120 {
		l, err := Open(dir, key)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append([][]byte{fmt.Appendf(nil, "entry %d", i)}); err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		n, err := badgerfile.LevelZeroTables(dir)
		if err != nil {
			t.Fatal(err)
		}
		most = max(most, n)
	}
	if most > 41 {
		t.Errorf("level 0 held up to %d tables over 120 one-shot appends, want at most 41 (40, and the one a close flushes)", most)
	}
	l, err = OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got := l.Size(); got != 120 {
		t.Fatalf("size %d after 120 appends, want 120", got)
	}
	if _, err := l.Verify(l.Key(), nil); err != nil {
		t.Fatalf("the log does not verify after the compactions: %v", err)
	}
	e, err := l.Entry(77)
	if err != nil || string(e) != "entry 77" {
		t.Fatalf("entry 77 = %q, %v; want \"entry 77\"", e, err)
	}
}

// TestBulkWriterCompactsOnClose: a writer that set badgerfile.BulkBytes or
// more (a first sync, an import) leaves no table at level 0 when it
// closes, however few it made there: the next one-shot act does not pay
// for compacting what it wrote (a first sync of a million records left 38
// tables of 257 MiB, and the next sync took 3.3 s instead of 0.05). The
// log reads the same after.
func TestBulkWriterCompactsOnClose(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "log")
	l, err := Create(dir, "example.com/bulk", testkit.Key(t, 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	const batches = 72
	appendIncompressible(t, l, batches) // 72 MB
	before, err := badgerfile.LevelZeroTables(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	after, err := badgerfile.LevelZeroTables(dir)
	if err != nil {
		t.Fatal(err)
	}
	if before < 2 || after != 0 {
		t.Fatalf("level 0: %d tables before the close, %d after; want at least 2 before (or the test shows nothing) and 0 after", before, after)
	}
	l, err = OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Verify(l.Key(), nil); err != nil || l.Size() != batches*1000 {
		t.Fatalf("after the compaction: size %d (want %d), verify: %v", l.Size(), batches*1000, err)
	}
}

// appendIncompressible appends batches batches of 1,000 random entries of
// 1,000 bytes each to l: about batches MB that no compression shrinks.
func appendIncompressible(t *testing.T, l *Log, batches int) {
	t.Helper()
	rnd := rand.New(rand.NewPCG(1, 2))
	for range batches {
		batch := make([][]byte, 1000)
		for i := range batch {
			batch[i] = make([]byte, 1000)
			for j := range batch[i] {
				batch[i][j] = byte(rnd.Uint32())
			}
		}
		if _, err := l.Append(batch); err != nil {
			t.Fatal(err)
		}
	}
}
