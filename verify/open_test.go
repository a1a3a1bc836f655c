package verify_test

import (
	"crypto/rand"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/verify"
)

// TestOpenAuthority: a ledger made by InitAuthority opens verified under
// the stored key or a given one, says which, and a key that did not sign
// the log is a *LoadError carrying the *ledger.TrustError.
func TestOpenAuthority(t *testing.T) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	rootKey := testkit.Key(t, 1)
	r := testkit.Root(1, rootKey)
	r.IssuedAt, r.Expires = time.Now().Add(-time.Hour).Unix(), time.Now().Add(time.Hour).Unix()
	d := ledgerdir.Dir(filepath.Join(t.TempDir(), "ledger"))
	a, err := verify.InitAuthority(d, "example.com/open", ledgerdir.NewKey{Recipients: []age.Recipient{id.Recipient()}, Rand: rand.Reader}, testkit.Seal(t, r, rootKey))
	if err != nil {
		t.Fatal(err)
	}
	stored := a.Log.VerifierKey()
	a.Log.Close()

	for _, given := range []bool{false, true} {
		trust := verify.Trust{}
		if given {
			trust.VKey = testLogKey(t, stored)
		}
		a, err := verify.OpenAuthority(d, trust, nil)
		if err != nil {
			t.Fatal(err)
		}
		if a.KeyGiven != given || a.Key.String() != stored || a.Checkpoint.Size != 1 || len(a.State.Roots()) != 1 {
			t.Errorf("given %v: KeyGiven %v, Key %s, size %d", given, a.KeyGiven, a.Key, a.Checkpoint.Size)
		}
		a.Log.Close()
	}

	other, err := formats.VerifierKey("example.com/open", testkit.Key(t, 9).Public())
	if err != nil {
		t.Fatal(err)
	}
	_, err = verify.OpenAuthority(d, verify.Trust{VKey: testLogKey(t, other)}, nil)
	var le *verify.LoadError
	var te *ledger.TrustError
	if !errors.As(err, &le) || !errors.As(err, &te) || !errors.Is(err, ledger.ErrVKeyMismatch) {
		t.Fatalf("another key: %v, want a *LoadError wrapping a *ledger.TrustError", err)
	}

	_, err = verify.OpenAuthority(ledgerdir.Dir(t.TempDir()), verify.Trust{}, nil)
	if err == nil || errors.As(err, &le) {
		t.Fatalf("no ledger: %v, want the open's error, not a *LoadError", err)
	}

	// Keyed: the identities unlock the checkpoint key, so Append works.
	unlock := &ledgerdir.Unlock{Identities: func() ([]age.Identity, error) { return []age.Identity{id}, nil }}
	a, err = verify.OpenAuthority(d, verify.Trust{}, unlock)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Log.Close()
	if err := a.Log.Refresh(); err != nil {
		t.Fatalf("refresh with the key unlocked: %v", err)
	}
}
