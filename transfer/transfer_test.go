package transfer_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/transfer"
)

func TestDigestAndCompare(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	data := make([]byte, 3<<20+17) // crosses several hash buffers
	for i := range data {
		data[i] = byte(i * 7)
	}
	os.WriteFile(p, data, 0o644)
	sum := sha256.Sum256(data)
	want := "sha256:" + hex.EncodeToString(sum[:])
	d, n, err := transfer.DigestFile(p)
	if err != nil || d != want || n != int64(len(data)) {
		t.Fatalf("DigestFile = %s, %d, %v", d, n, err)
	}
	if got, err := transfer.Compare(p, want); err != nil || got != want {
		t.Fatalf("Compare with the right digest = %s, %v", got, err)
	}
	data[len(data)/2] ^= 1
	os.WriteFile(p, data, 0o644)
	_, err = transfer.Compare(p, want)
	var mm *transfer.MismatchError
	if !errors.As(err, &mm) || !errors.Is(err, transfer.ErrDigestMismatch) || mm.Expected != want || mm.Actual == want {
		t.Fatalf("Compare after one changed bit = %v", err)
	}
	if _, _, err := transfer.DigestFile(t.TempDir()); !errors.Is(err, transfer.ErrNotRegular) {
		t.Fatalf("a directory: %v", err)
	}
}

// TestNotRegular: a FIFO (whose open would block), a directory and a
// device are refused before they are opened, by every entry point; a
// symbolic link to a regular file is followed.
func TestNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, dir, "/dev/zero"} {
		if _, err := transfer.Inspect(p, "sha256"); !errors.Is(err, transfer.ErrNotRegular) {
			t.Errorf("Inspect(%s): %v", p, err)
		}
		if _, err := transfer.Compare(p, "sha256:"+strings.Repeat("0", 64)); !errors.Is(err, transfer.ErrNotRegular) {
			t.Errorf("Compare(%s): %v", p, err)
		}
		if _, err := transfer.NewPin(p, transfer.PinOptions{Artifact: "a", Version: "1.0.0", AllowUnknown: true}); !errors.Is(err, transfer.ErrNotRegular) {
			t.Errorf("NewPin(%s): %v", p, err)
		}
	}
	if _, err := transfer.Inspect(filepath.Join(dir, "absent"), "sha256"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("absent: %v", err)
	}
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("x"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(target, link)
	if in, err := transfer.Inspect(link, "sha256"); err != nil || in.Size != 1 || in.Build != nil {
		t.Errorf("symlink to a regular file: %+v, %v", in, err)
	}
}

// TestNewPinOnRealBuilds: pins of real Go binaries built in the test from a
// git repository record what they saw, and dirty or unknown builds are
// refused unless allowed.
func TestNewPinOnRealBuilds(t *testing.T) {
	now := testkit.Epoch
	opts := transfer.PinOptions{Artifact: "agent", Version: "1.2.3", IssuedAt: now, Expires: now.Add(time.Hour)}
	clean := testkit.BuildAgent(t, testkit.BuildOptions{})
	p, err := transfer.NewPin(clean, opts)
	if err != nil {
		t.Fatal(err)
	}
	if p.Build == nil || p.Build.VCS != "git" || len(p.Build.Revision) != 40 || p.Build.Modified || p.Version != "v1.2.3" {
		t.Fatalf("clean pin %+v build %+v", p, p.Build)
	}
	if p.Platform != transfer.Platform() {
		t.Fatalf("platform %s", p.Platform)
	}

	dirty := testkit.BuildAgent(t, testkit.BuildOptions{Dirty: true})
	if _, err := transfer.NewPin(dirty, opts); !errors.Is(err, transfer.ErrDirtyBuild) {
		t.Fatalf("dirty build: %v", err)
	}
	o := opts
	o.AllowDirty = true
	if p, err := transfer.NewPin(dirty, o); err != nil || !p.Build.Modified {
		t.Fatalf("dirty build allowed: %+v, %v", p, err)
	}

	novcs := testkit.BuildAgent(t, testkit.BuildOptions{NoVCS: true})
	if _, err := transfer.NewPin(novcs, opts); !errors.Is(err, transfer.ErrUnknownBuild) {
		t.Fatalf("-buildvcs=false: %v", err)
	}

	notGo := filepath.Join(t.TempDir(), "script.sh")
	os.WriteFile(notGo, []byte("#!/bin/sh\necho hi\n"), 0o755)
	if _, err := transfer.NewPin(notGo, opts); !errors.Is(err, transfer.ErrUnknownBuild) {
		t.Fatalf("non-Go file: %v", err)
	}
	o = opts
	o.AllowUnknown = true
	if p, err := transfer.NewPin(notGo, o); err != nil || p.Build != nil {
		t.Fatalf("non-Go file allowed: %+v, %v", p, err)
	}
	o.Platform = "plan9/arm"
	if _, err := transfer.NewPin(clean, o); err == nil {
		t.Fatal("a platform contradicting the binary was accepted")
	}
}

// TestFIFOSwappedInNeverBlocks: a regular file swapped for a FIFO between
// the check and the open (a race an attacker controls) is refused or
// hashed, and never blocks the open.
func TestFIFOSwappedInNeverBlocks(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agent")
	os.WriteFile(path, []byte("agent"), 0o755)
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			tmp := filepath.Join(dir, "tmp")
			if i%2 == 0 {
				os.WriteFile(tmp, []byte("agent"), 0o755)
			} else {
				syscall.Mkfifo(tmp, 0o600)
			}
			os.Rename(tmp, path)
		}
	}()
	// The swapper must be gone before the temporary directory is
	// removed, or it may create a file there meanwhile.
	defer func() { close(stop); <-stopped }()
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
				if _, err := transfer.Inspect(path, "sha256"); err != nil && !errors.Is(err, transfer.ErrNotRegular) && !errors.Is(err, os.ErrNotExist) {
					t.Errorf("Inspect: %v", err)
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Inspect blocked on a FIFO swapped in after the check")
	}
}
