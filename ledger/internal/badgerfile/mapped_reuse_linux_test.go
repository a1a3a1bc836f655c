package badgerfile

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestReleaseMappedReusedRange (a hostile review's attack, kept as a
// regression test): ReleaseMapped reads /proc/self/maps, then advises
// each listed range. A table Badger unmaps in between (a compaction
// closing it) frees the range, and the process may map private memory
// there next (runtime metadata, a cgo allocation, a thread stack). The
// advice must never change that memory: MADV_DONTNEED zeroed it (the
// attack hit within 40 iterations); MADV_PAGEOUT only reclaims.
func TestReleaseMappedReusedRange(t *testing.T) {
	dir := t.TempDir()
	const size = 1 << 20
	name := filepath.Join(dir, "000001.sst")
	if err := os.WriteFile(name, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			ReleaseMapped(dir)
		}
	}()
	defer func() { stop.Store(true); <-done }()
	spin := func(d time.Duration) {
		for end := time.Now().Add(d); time.Now().Before(end); {
		}
	}
	deadline := time.Now().Add(3 * time.Second)
	for iter := 0; time.Now().Before(deadline); iter++ {
		// Badger: a table mapped shared...
		a, err := unix.MmapPtr(int(f.Fd()), 0, nil, size, unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			t.Fatal(err)
		}
		spin(30 * time.Microsecond)
		// ...closed by a compaction,
		if err := unix.MunmapPtr(a, size); err != nil {
			t.Fatal(err)
		}
		// and the range reused for private memory of the process.
		b, err := unix.MmapPtr(-1, 0, a, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED_NOREPLACE)
		if err != nil || b != a {
			if err == nil {
				unix.MunmapPtr(b, size)
			}
			continue
		}
		mem := unsafe.Slice((*byte)(b), size)
		for i := 0; i < size; i += 4096 {
			mem[i] = 0xAA
		}
		spin(30 * time.Microsecond)
		for i := 0; i < size; i += 4096 {
			if v := mem[i]; v != 0xAA {
				unix.MunmapPtr(b, size)
				t.Fatalf("iteration %d: private anonymous memory at %p changed (byte %d is %#x): releaseMapped advised a range that was no longer the table's", iter, b, i, v)
			}
		}
		unix.MunmapPtr(b, size)
	}
	t.Log("no reused range was changed")
}
