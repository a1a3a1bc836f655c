package verify_test

import (
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify"
)

// TestNewLedger: a root the ledger accepts makes a ledger whose first
// entry it is; a root it refuses is a *ledgerdir.FirstEntryError before
// the key is asked for and before anything is made; the key's error is
// returned as it is, leaving nothing.
func TestNewLedger(t *testing.T) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	rootKey := testkit.Key(t, 1)
	good := testkit.Root(1, rootKey)
	good.IssuedAt, good.Expires = time.Now().Add(-time.Hour).Unix(), time.Now().Add(time.Hour).Unix()
	expired := testkit.Root(1, rootKey)
	expired.IssuedAt, expired.Expires = time.Now().Add(-2*time.Hour).Unix(), time.Now().Add(-time.Hour).Unix()
	keyFailure := errors.New("no passphrase")
	for _, tc := range []struct {
		name    string
		root    []byte
		origin  string
		keyErr  error
		wantErr error  // errors.Is target; nil: success
		rule    string // the root's refusal rule
	}{
		{name: "origin given", root: testkit.Seal(t, good, rootKey), origin: "example.com/new"},
		{name: "origin made", root: testkit.Seal(t, good, rootKey)},
		{name: "root expired", root: testkit.Seal(t, expired, rootKey), origin: "example.com/new", rule: rules.RootExpired},
		{name: "key fails", root: testkit.Seal(t, good, rootKey), origin: "example.com/new", keyErr: keyFailure, wantErr: keyFailure},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := ledgerdir.Dir(filepath.Join(t.TempDir(), "ledger"))
			asked := false
			created, err := verify.NewLedger(d, tc.origin, tc.root, time.Now(), func() (ledgerdir.NewKey, error) {
				asked = true
				return ledgerdir.NewKey{Recipients: []age.Recipient{id.Recipient()}, Rand: rand.Reader}, tc.keyErr
			})
			if tc.rule != "" || tc.wantErr != nil {
				var fe *ledgerdir.FirstEntryError
				var re *delegation.RecordError
				switch {
				case tc.rule != "" && (!errors.As(err, &fe) || !errors.As(err, &re) || re.Rule != tc.rule || asked):
					t.Fatalf("err %v (key asked %v), want a *FirstEntryError with rule %s before the key", err, asked, tc.rule)
				case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
					t.Fatalf("err %v, want %v", err, tc.wantErr)
				}
				if _, serr := os.Stat(string(d)); !errors.Is(serr, os.ErrNotExist) {
					t.Fatalf("%s left behind: %v", d, serr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := verify.Created{VKey: created.VKey, Origin: tc.origin, RootDigest: schemas.SHA256Digest(tc.root)}
			if tc.origin == "" {
				want.Origin = created.Origin
				if !strings.HasPrefix(created.Origin, ledgerdir.NewOriginPrefix) || len(created.Origin) != len(ledgerdir.NewOriginPrefix)+16 {
					t.Errorf("origin %q, want %s and 16 hex digits", created.Origin, ledgerdir.NewOriginPrefix)
				}
			}
			if *created != want || !strings.HasPrefix(created.VKey, want.Origin+"+") {
				t.Fatalf("created %+v, want %+v", *created, want)
			}
			a, err := verify.OpenAuthority(d, verify.Trust{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Log.Close()
			if a.Log.VerifierKey() != created.VKey || a.Checkpoint.Size != 1 {
				t.Fatalf("ledger: vkey %s, size %d", a.Log.VerifierKey(), a.Checkpoint.Size)
			}
		})
	}
}
