package transfer_test

import (
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/transfer"
	"golang.org/x/mod/semver"
)

// FuzzParseDigest: whatever ParseDigest accepts is exactly
// "<alg>:<lowercase hex of the algorithm's size>".
func FuzzParseDigest(f *testing.F) {
	for _, s := range []string{"sha256:" + strings.Repeat("0", 64), "sha384:" + strings.Repeat("a", 96), "sha512:" + strings.Repeat("f", 128),
		"sha256:" + strings.Repeat("A", 64), "md5:00", "", ":", "sha256:", "sha256:" + strings.Repeat("0", 63)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		alg, sum, err := transfer.ParseDigest(s)
		if err != nil {
			if !errors.Is(err, transfer.ErrDigestSyntax) {
				t.Fatalf("%q refused with %v, not ErrDigestSyntax", s, err)
			}
			return
		}
		if alg+":"+hex.EncodeToString(sum) != s || len(sum) != transfer.Algorithms[alg]().Size() {
			t.Fatalf("accepted %q as %s %x", s, alg, sum)
		}
	})
}

// FuzzParseVersion: an accepted version is a canonical semantic version
// with a leading v (build metadata kept).
func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"1.4.2", "v1.4.2-rc.1+b.5", "1.4", "v01.0.0", "", "v", "1.0.0+", "V1.0.0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := transfer.ParseVersion(s)
		if err != nil {
			return
		}
		if !semver.IsValid(v) || semver.Canonical(v)+semver.Build(v) != v || strings.TrimPrefix(v, "v") != strings.TrimPrefix(s, "v") {
			t.Fatalf("accepted %q as %q", s, v)
		}
	})
}

// FuzzInspect: any file's bytes inspect without panic, with the right
// size, and build metadata only as debug/buildinfo yields it.
func FuzzInspect(f *testing.F) {
	f.Add([]byte("#!/bin/sh\n"))
	f.Add([]byte("\x7fELF\x02\x01\x01"))
	f.Add([]byte("\xff Go buildinf:\x08\x02"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "bin")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		in, err := transfer.Inspect(p, "sha256")
		if err != nil {
			t.Fatal(err)
		}
		if in.Size != int64(len(b)) || !strings.HasPrefix(in.Digest, "sha256:") {
			t.Fatalf("inspection %+v of %d bytes", in, len(b))
		}
	})
}
