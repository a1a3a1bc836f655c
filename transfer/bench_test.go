package transfer_test

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/writ-ledger/writ/transfer"
)

// zeros is an endless reader of zero bytes that does not allocate.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestDigestMemoryFlat: hashing 256 MiB allocates no more than hashing
// 1 MiB does, give or take a little: memory does not grow with size.
func TestDigestMemoryFlat(t *testing.T) {
	alloc := func(n int64) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, got, err := transfer.DigestReader(io.LimitReader(zeros{}, n), "sha256"); err != nil || got != n {
			t.Fatalf("DigestReader: %d bytes, %v", got, err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := alloc(1<<20), alloc(256<<20)
	if large > small+64<<10 {
		t.Fatalf("hashing 256 MiB allocated %d bytes, 1 MiB allocated %d", large, small)
	}
}

// BenchmarkDigestFile hashes a 64 MiB file from the page cache with each
// accepted algorithm; compare runs with benchstat. bench/transfer.sh
// compares the command with openssl and sha256sum.
func BenchmarkDigestFile(b *testing.B) {
	path := filepath.Join(b.TempDir(), "blob")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	const size = 64 << 20
	if _, err := io.CopyN(f, zeros{}, size); err != nil {
		b.Fatal(err)
	}
	f.Close()
	for _, alg := range []string{"sha256", "sha384", "sha512"} {
		b.Run(alg, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := transfer.DigestFileAlg(path, alg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
