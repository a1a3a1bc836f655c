package ledgerdir_test

import (
	"crypto/rand"
	"errors"
	"path/filepath"
	"regexp"
	"testing"

	"filippo.io/age"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
)

// TestLogKey: the key each log stores, by name, named by its origin; no
// decision log yet and an unknown name are errors. (A decision log held
// by another process cannot be made in this one: ledger.Open shares it.)
func TestLogKey(t *testing.T) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	d := ledgerdir.Dir(filepath.Join(t.TempDir(), "ledger"))
	auth, err := d.Init("example.com/logkey", ledgerdir.NewKey{Recipients: []age.Recipient{id.Recipient()}, Rand: rand.Reader}, nil)
	if err != nil {
		t.Fatal(err)
	}
	authKey := auth.VerifierKey()
	auth.Close()
	if _, err := d.LogKey(ledgerdir.DecisionsLog); !errors.Is(err, ledgerdir.ErrNoDecisionLog) {
		t.Fatalf("no decision log: %v, want ErrNoDecisionLog", err)
	}
	dec, err := ledgerdir.OpenDecisions(string(d), "example.com/logkey", ledgerdir.KeyParams{Rand: rand.Reader})
	if err != nil {
		t.Fatal(err)
	}
	decKey := dec.VerifierKey()
	dec.Close()
	for _, tc := range []struct{ name, want, origin string }{
		{ledgerdir.AuthorityLog, authKey, "example.com/logkey"},
		{ledgerdir.DecisionsLog, decKey, dec.Origin()},
	} {
		k, err := d.LogKey(tc.name)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if k.String() != tc.want || k.Name() != tc.origin {
			t.Fatalf("%s: key %s named %s, want %s named %s", tc.name, k, k.Name(), tc.want, tc.origin)
		}
	}
	if !regexp.MustCompile(`^example\.com/logkey/decisions/[0-9a-f]{16}$`).MatchString(dec.Origin()) {
		t.Fatalf("decision log origin %q", dec.Origin())
	}
	if _, err := d.LogKey("other"); err == nil {
		t.Fatal("an unknown log name: no error")
	}
}

// TestNewOrigin: the prefix and 16 hex digits, a valid ledger origin,
// another each time.
func TestNewOrigin(t *testing.T) {
	a, b := ledgerdir.NewOrigin(), ledgerdir.NewOrigin()
	re := regexp.MustCompile(`^writ/ledger/[0-9a-f]{16}$`)
	if !re.MatchString(a) || !re.MatchString(b) || a == b || len(a) > ledgerdir.MaxLedgerOrigin {
		t.Fatalf("origins %q, %q", a, b)
	}
}
