package ledgerdir_test

import (
	"crypto/rand"
	"errors"
	"path/filepath"
	"testing"

	"filippo.io/age"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
)

// TestCheckPolicy: a policy naming the log of the key given, or of the
// directory's stored key, passes; one naming another log is refused
// (formats.ErrPolicyLog); a policy without log lines, none, and a
// directory without a readable key pass.
func TestCheckPolicy(t *testing.T) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	dir := ledgerdir.Dir(filepath.Join(t.TempDir(), "l"))
	l, err := dir.Init("example.com/policy", ledgerdir.NewKey{Recipients: []age.Recipient{id.Recipient()}, Rand: rand.Reader},
		func(l *ledger.Log) error { _, err := l.Append([][]byte{[]byte("root")}); return err })
	if err != nil {
		t.Fatal(err)
	}
	own := l.Key()
	l.Close()
	other, err := formats.NewLogKey("example.com/other", testkit.Key(t, 7).Public())
	if err != nil {
		t.Fatal(err)
	}
	policyOf := func(k *formats.LogKey) *formats.Policy {
		p, err := formats.ParsePolicy([]byte("log " + k.String() + "\nquorum none\n"))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		dir  ledgerdir.Dir
		p    *formats.Policy
		k    *formats.LogKey
		want error
	}{
		{"none", dir, nil, other, nil},
		{"no log line", dir, &formats.Policy{Quorum: "none"}, other, nil},
		{"the key given", "", policyOf(other), other, nil},
		{"another key given", "", policyOf(own), other, formats.ErrPolicyLog},
		{"the stored key", dir, policyOf(own), nil, nil},
		{"not the stored key", dir, policyOf(other), nil, formats.ErrPolicyLog},
		{"no stored key", ledgerdir.Dir(t.TempDir()), policyOf(other), nil, nil},
	} {
		if err := tc.dir.CheckPolicy(tc.p, tc.k); !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}
