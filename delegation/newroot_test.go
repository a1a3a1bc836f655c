package delegation_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/sign"
)

// TestNewRootAgreesWithApply: NewRoot refuses the signer sets the ledger
// would refuse for a root and a rotation, with the counts named, and what
// it makes, signed by the planned signers, the ledger accepts.
func TestNewRootAgreesWithApply(t *testing.T) {
	o1, o2, o3 := testkit.Key(t, 1), testkit.Key(t, 2), testkit.Key(t, 3)
	n1, n2, n3 := testkit.Key(t, 4), testkit.Key(t, 5), testkit.Key(t, 6)
	pubs := func(ks ...*sign.PrivateKey) []sign.PublicKey {
		var out []sign.PublicKey
		for _, k := range ks {
			out = append(out, k.Public())
		}
		return out
	}
	issued, expires := testkit.Epoch.Add(-2*time.Hour), testkit.Epoch.Add(365*24*time.Hour)
	genesisRec, err := delegation.NewRoot(delegation.RootParams{Keys: pubs(o1, o2, o3), Threshold: 2, IssuedAt: issued, Expires: expires, Signers: pubs(o1, o2)})
	if err != nil || genesisRec.Version != 1 {
		t.Fatalf("first root: %v %v", genesisRec, err)
	}
	genesis := testkit.Seal(t, genesisRec, o1, o2)
	chain(t, "", genesis)

	for _, tc := range []struct {
		name    string
		signers []*sign.PrivateKey
		want    string // "" : made, and the ledger accepts it
	}{
		{"signed by the old keys only", []*sign.PrivateKey{o1, o2}, "0 of the new root's keys sign, its threshold is 2"},
		{"signed by the new keys only", []*sign.PrivateKey{n1, n2}, "0 of the previous root's keys sign, its threshold is 2"},
		{"one old key and two new", []*sign.PrivateKey{o1, n1, n2}, "1 of the previous root's keys sign, its threshold is 2"},
		{"a stranger", []*sign.PrivateKey{o1, o2, n1, n2, testkit.Key(t, 9)}, "is not one of the root's keys"},
		{"two old and two new", []*sign.PrivateKey{o1, o3, n2, n3}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := delegation.NewRoot(delegation.RootParams{Keys: pubs(n3, n1, n2), Threshold: 2, IssuedAt: issued.Add(time.Minute),
				Expires: expires, Previous: genesisRec, Signers: pubs(tc.signers...)})
			if tc.want != "" {
				if !errors.Is(err, delegation.ErrRootParams) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("%v; want ErrRootParams with %q", err, tc.want)
				}
				return
			}
			if err != nil || rec.Version != 2 {
				t.Fatalf("%v %v", rec, err)
			}
			if st := chain(t, "", genesis, testkit.Seal(t, rec, tc.signers...)); st.Root().Record.Version != 2 {
				t.Fatalf("root in force is version %d", st.Root().Record.Version)
			}
		})
	}
	for _, p := range []delegation.RootParams{
		{Keys: pubs(n1), Threshold: 1, IssuedAt: expires, Expires: expires.Add(time.Hour), Previous: genesisRec, Signers: pubs(o1, o2, n1)},
		{Keys: pubs(n1), Threshold: 1, IssuedAt: issued.Add(-time.Minute), Expires: expires, Previous: genesisRec, Signers: pubs(o1, o2, n1)},
		{Threshold: 1, IssuedAt: issued, Expires: expires},
		{Keys: pubs(o1), Threshold: 2, IssuedAt: issued, Expires: expires, Signers: pubs(o1)},
		{Keys: pubs(o1, o1), Threshold: 1, IssuedAt: issued, Expires: expires, Signers: pubs(o1)},
		{Keys: pubs(o1), Threshold: 1, IssuedAt: issued, Expires: issued, Signers: pubs(o1)},
	} {
		if _, err := delegation.NewRoot(p); !errors.Is(err, delegation.ErrRootParams) {
			t.Errorf("%+v: %v, want ErrRootParams", p, err)
		}
	}
}
