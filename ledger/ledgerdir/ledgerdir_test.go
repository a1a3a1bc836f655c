package ledgerdir_test

import (
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"filippo.io/age"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/keys"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
)

// TestInitAtomic: a failed Init leaves nothing of the ledger behind, and
// never removes a directory that existed before it (or one that held the
// user's files, which it refuses before making anything).
func TestInitAtomic(t *testing.T) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	keyFile := ledgerdir.NewKey{Recipients: []age.Recipient{id.Recipient()}, Rand: rand.Reader}
	refused := errors.New("root refused")
	fail := func(l *ledger.Log) error {
		if _, err := l.Append([][]byte{[]byte("entry")}); err != nil {
			t.Fatal(err)
		}
		return refused
	}
	parent := t.TempDir()

	// A directory Init creates is removed again.
	absent := filepath.Join(parent, "new")
	if _, err := ledgerdir.Dir(absent).Init("example.com/atomic", keyFile, fail); !errors.Is(err, refused) {
		t.Fatalf("Init: %v, want the first step's error", err)
	}
	var fe *ledgerdir.FirstEntryError
	if _, err := ledgerdir.Dir(absent).Init("example.com/atomic", keyFile, fail); !errors.As(err, &fe) || err.Error() != refused.Error() {
		t.Fatalf("Init: %v, want a *FirstEntryError with the first step's message", err)
	}
	if _, err := os.Lstat(absent); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the directory Init made is left: %v", err)
	}

	// An empty directory that existed is kept, and left empty: after the
	// first step fails, and after the key cannot be stored.
	empty := filepath.Join(parent, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	tokenWithModule := ledgerdir.NewKey{TokenURI: "pkcs11:token=t;object=o?module-path=/lib/x.so", Token: testkit.Key(t, 3)}
	for _, step := range []struct {
		key   ledgerdir.NewKey
		first func(*ledger.Log) error
		want  error
	}{{keyFile, fail, refused}, {tokenWithModule, nil, keys.ErrKeyRef}} {
		if _, err := ledgerdir.Dir(empty).Init("example.com/atomic", step.key, step.first); !errors.Is(err, step.want) {
			t.Fatalf("Init: %v, want %v", err, step.want)
		}
		if entries, err := os.ReadDir(empty); err != nil || len(entries) != 0 {
			t.Fatalf("the existing directory after a failed Init: %v, %v (want it kept, empty)", entries, err)
		}
	}

	// A directory with the user's files is refused, untouched.
	full := filepath.Join(parent, "full")
	if err := os.Mkdir(full, 0o755); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(full, "notes.txt")
	if err := os.WriteFile(mine, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ledgerdir.Dir(full).Init("example.com/atomic", keyFile, fail); err == nil {
		t.Fatal("Init into a directory that is not empty succeeded")
	}
	if b, err := os.ReadFile(mine); err != nil || string(b) != "mine" {
		t.Fatalf("the user's file after a refused Init: %q, %v", b, err)
	}
	if entries, _ := os.ReadDir(full); len(entries) != 1 {
		t.Fatalf("Init left %d files in a directory it refused", len(entries))
	}

	// A successful Init keeps what it made.
	l, err := ledgerdir.Dir(empty).Init("example.com/atomic", keyFile, func(l *ledger.Log) error { _, err := l.Append([][]byte{[]byte("root")}); return err })
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Size() != 1 {
		t.Fatalf("size %d after Init, want 1", l.Size())
	}
}
