package ledgerdir_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/keys"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/sign"
)

// TestTokenCheckpointKey: a ledger whose checkpoint key lives in a real
// SoftHSM2 token stores only the key's URI and public key, signs its
// checkpoints inside the token across opens, and refuses a URI that names
// another key or a file that is not one URI.
func TestTokenCheckpointKey(t *testing.T) {
	_, uri := testkit.SoftHSM(t)
	key, err := sign.GenerateTokenKey(uri("checkpoint"), sign.KeyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "ledger")
	l, err := ledgerdir.InitWithKey(dir, "example.com/token", uri("checkpoint"), key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append([][]byte{[]byte("first")}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if _, err := os.Stat(filepath.Join(dir, ledgerdir.CheckpointKey+".key")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a key file next to a token key: %v", err)
	}
	if ref, err := ledgerdir.CheckpointKeyRef(dir); err != nil || ref != uri("checkpoint") {
		t.Fatalf("CheckpointKeyRef = %q, %v", ref, err)
	}
	l, err = ledgerdir.OpenAuthorityWith(dir, sign.KeyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append([][]byte{[]byte("second")}); err != nil {
		t.Fatal(err)
	}
	vkey := l.VerifierKey()
	if cp, err := l.Verify(testLogKey(t, vkey), nil); err != nil || cp.Size != 2 {
		t.Fatalf("Verify = %+v, %v", cp, err)
	}
	l.Close()

	// Another key of the same token is not the ledger's.
	if _, err := sign.GenerateTokenKey(uri("other"), sign.KeyOptions{}); err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(dir, ledgerdir.CheckpointKey+".uri")
	if err := os.WriteFile(ref, []byte(uri("other")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ledgerdir.OpenAuthorityWith(dir, sign.KeyOptions{}); !errors.Is(err, ledger.ErrWrongKey) {
		t.Fatalf("another token key: %v", err)
	}
	if err := os.WriteFile(ref, []byte("/etc/passwd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ledgerdir.OpenAuthorityWith(dir, sign.KeyOptions{}); !errors.Is(err, keys.ErrKeyRef) {
		t.Fatalf("a file path in checkpoint.uri: %v", err)
	}
}
