package testkit

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Damage is a kind of damage DamageStore does to a Badger store: what a
// crash, a bad disk or a careless hand leaves.
type Damage string

// The damages DamageStore knows.
const (
	ManifestTruncated Damage = "manifest-truncated" // the MANIFEST cut to half its size
	ManifestMissing   Damage = "manifest-missing"   // the MANIFEST removed
	TableChanged      Damage = "table-changed"      // four bytes changed in the middle of the largest table
	TableMissing      Damage = "table-missing"      // the largest table removed
	TableTruncated    Damage = "table-truncated"    // the newest table (highest number) cut to 100 bytes
	ValueLogChanged   Damage = "vlog-changed"       // four bytes changed in the first value log's header
	ValueLogEmpty     Damage = "vlog-empty"         // the newest value log cut to zero bytes (a writer killed while making one)
)

// Damages lists every Damage, in a fixed order.
var Damages = []Damage{ManifestTruncated, ManifestMissing, TableChanged, TableMissing, TableTruncated, ValueLogChanged, ValueLogEmpty}

// DamageStore does kind to the Badger store in dir, which must not be
// open. It fails when the store has no file of the kind to damage.
func DamageStore(dir string, kind Damage) error {
	pick := func(glob string, largest bool) (string, error) {
		names, _ := filepath.Glob(filepath.Join(dir, glob))
		if len(names) == 0 {
			return "", fmt.Errorf("%s: no %s to damage", dir, glob)
		}
		slices.Sort(names)
		if !largest {
			return names[len(names)-1], nil
		}
		best, size := "", int64(-1)
		for _, n := range names {
			if fi, err := os.Stat(n); err == nil && fi.Size() > size {
				best, size = n, fi.Size()
			}
		}
		return best, nil
	}
	switch kind {
	case ManifestTruncated:
		fi, err := os.Stat(filepath.Join(dir, "MANIFEST"))
		if err != nil {
			return err
		}
		return os.Truncate(filepath.Join(dir, "MANIFEST"), fi.Size()/2)
	case ManifestMissing:
		return os.Remove(filepath.Join(dir, "MANIFEST"))
	case TableChanged, TableMissing:
		p, err := pick("*.sst", true)
		if err != nil || kind == TableMissing {
			return firstErr(err, func() error { return os.Remove(p) })
		}
		return flip(p, -1)
	case TableTruncated:
		p, err := pick("*.sst", false)
		return firstErr(err, func() error { return os.Truncate(p, 100) })
	case ValueLogChanged:
		p, err := pick("*.vlog", false)
		return firstErr(err, func() error { return flip(p, 0) })
	case ValueLogEmpty:
		p, err := pick("*.vlog", false)
		return firstErr(err, func() error { return os.Truncate(p, 0) })
	}
	return fmt.Errorf("unknown damage %q", kind)
}

func firstErr(err error, then func() error) error {
	if err != nil {
		return err
	}
	return then()
}

// flip inverts four bytes of the file at off (-1: the middle).
func flip(path string, off int) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if off < 0 {
		off = len(b) / 2
	}
	if off+4 > len(b) {
		return fmt.Errorf("%s: %d bytes, too short to damage", path, len(b))
	}
	for i := off; i < off+4; i++ {
		b[i] ^= 0xff
	}
	return os.WriteFile(path, b, 0o600)
}

// Snapshot returns a digest of every file under dir, by name, size and
// content, to compare before and after something that must not change
// it.
func Snapshot(t testing.TB, dir string) []byte {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d %x\n", p, len(b), sha256.Sum256(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return h.Sum(nil)
}
