package ledger

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
)

// mappedTableKiB sums the resident KiB of this process's mappings of .sst
// files under dir, from /proc/self/smaps.
func mappedTableKiB(t *testing.T, dir string) (kib, mappings int) {
	t.Helper()
	abs, _ := filepath.Abs(dir)
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 5 && strings.Contains(fields[0], "-") {
			in = len(fields) == 6 && filepath.Dir(fields[5]) == abs && strings.HasSuffix(fields[5], ".sst")
			if in {
				mappings++
			}
			continue
		}
		if in && len(fields) == 3 && fields[0] == "Rss:" {
			n, _ := strconv.Atoi(fields[1])
			kib += n
		}
	}
	return kib, mappings
}

// TestReleaseMapped: after a walk over a log whose entries are in table
// files, releasing drops their pages from this process's resident set,
// and the log still reads and verifies the same.
func TestReleaseMapped(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "log")
	l, err := Create(dir, "example.com/mapped", testkit.Key(t, 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	for b := range 40 { // 40 MB of entries: more than one 16 MiB memtable, so tables are written
		batch := make([][]byte, 1000)
		for i := range batch {
			batch[i] = []byte(strings.Repeat(fmt.Sprintf("%08d", b*1000+i), 125))
		}
		if _, err := l.Append(batch); err != nil {
			t.Fatal(err)
		}
	}
	vkey := l.VerifierKey()
	l.Close()
	l, err = Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Verify(testLogKey(t, vkey), nil); err != nil {
		t.Fatal(err)
	}
	before, n := mappedTableKiB(t, dir)
	if n == 0 || before == 0 {
		t.Fatalf("no resident table mappings after a walk (%d mappings, %d KiB): the test does not exercise release", n, before)
	}
	l.db.(badgerStore).releaseMapped()
	after, _ := mappedTableKiB(t, dir)
	if after >= before/4 {
		t.Fatalf("resident table pages %d KiB before release, %d KiB after", before, after)
	}
	if _, err := l.Verify(testLogKey(t, vkey), nil); err != nil {
		t.Fatalf("verify after release: %v", err)
	}
	t.Logf("resident table pages: %d KiB in %d mappings, %d KiB after release", before, n, after)
}

// TestWriteReleasesMapped: a long write (a writer that stays open, as an
// import, a sync or a server does) keeps few of the tables it writes in
// its resident set: Badger writes each table through a shared mapping,
// and the store releases the pages every releaseEvery bytes set. Without
// the release, every table written stays resident (the test fails: the
// resident pages are about the tables' size).
func TestWriteReleasesMapped(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "log")
	l, err := Create(dir, "example.com/mapped", testkit.Key(t, 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	appendIncompressible(t, l, 96) // 96 MB
	var tables int64
	names, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	for _, n := range names {
		if fi, err := os.Stat(n); err == nil {
			tables += fi.Size()
		}
	}
	resident, n := mappedTableKiB(t, dir)
	t.Logf("%d MiB of tables in %d files; %d KiB of them resident in %d mappings", tables>>20, len(names), resident, n)
	if tables < 48<<20 {
		t.Fatalf("only %d MiB of tables written: the test does not exercise the release", tables>>20)
	}
	if int64(resident)<<10 > tables/2 {
		t.Fatalf("%d KiB of the %d MiB of tables written are resident: a long write keeps the tables it writes in memory", resident, tables>>20)
	}
}
