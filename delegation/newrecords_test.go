package delegation_test

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
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// TestNewRecords: each constructor returns a record its reader accepts,
// or the reader's field error, never a record the reader would refuse.
func TestNewRecords(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	to := testkit.Key(t, 2).Public()
	p := delegation.DelegationParams{To: to, Actions: []schemas.Action{"pin", "instruct", "pin"},
		Streams: []string{"team/b", "team/a"}, Machines: []string{"runner-*"}, Artifacts: []string{"*"}, NotBefore: now, NotAfter: now.Add(time.Hour), IssuedAt: now}
	d, err := delegation.NewDelegation(p)
	if err != nil || strings.Join(d.Streams, " ") != "team/a team/b" || len(d.Actions) != 2 {
		t.Fatalf("NewDelegation = %+v, %v", d, err)
	}
	if _, err := schemas.Encode(d); err != nil {
		t.Fatalf("its reader refuses it: %v", err)
	}
	for name, bad := range map[string]func(*delegation.DelegationParams){
		"comma in a machine": func(p *delegation.DelegationParams) { p.Machines = []string{"runner-1,prod-db"} },
		"window reversed":    func(p *delegation.DelegationParams) { p.NotAfter = p.NotBefore.Add(-time.Hour) },
	} {
		q := p
		bad(&q)
		var fe *schemas.FieldError
		if _, err := delegation.NewDelegation(q); !errors.As(err, &fe) {
			t.Errorf("%s: %v, want a *schemas.FieldError", name, err)
		}
	}
	p.Depth = -1
	if _, err := delegation.NewDelegation(p); !errors.Is(err, delegation.ErrNegativeDepth) {
		t.Errorf("depth -1: %v", err)
	}

	in := schemas.Instruction{Stream: "team/a", Machine: "runner-1", Agent: schemas.ArtifactRef{Name: "agent"}, Transport: "local",
		IssuedAt: now.Unix(), NotBefore: now.Unix(), Expires: now.Add(time.Hour).Unix()}
	i1, err := delegation.NewInstruction(in, rand.Reader)
	if err != nil || len(i1.ID) != 32 || i1.V != schemas.SchemaVersion {
		t.Fatalf("NewInstruction = %+v, %v", i1, err)
	}
	if i2, _ := delegation.NewInstruction(in, rand.Reader); i2.ID == i1.ID {
		t.Fatal("two instructions share an id")
	}
	in.Machine = "runner-1,prod-db"
	var fe *schemas.FieldError
	if _, err := delegation.NewInstruction(in, rand.Reader); !errors.As(err, &fe) {
		t.Errorf("a machine with a comma: %v", err)
	}

	dir := t.TempDir()
	id, _ := age.GenerateX25519Identity()
	k, err := sign.GenerateKeyFiles(filepath.Join(dir, "k"), []age.Recipient{id.Recipient()}, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := os.ReadFile(filepath.Join(dir, "k.pub"))
	priv, _ := os.ReadFile(filepath.Join(dir, "k.key"))
	if got, err := delegation.RevocationTarget(pub); err != nil || got != k.Public().ID() {
		t.Errorf("a public key file: %q, %v; want its key id", got, err)
	}
	if got, err := delegation.RevocationTarget([]byte("record bytes")); err != nil || got != schemas.SHA256Digest([]byte("record bytes")) {
		t.Errorf("a record: %q, %v; want its digest", got, err)
	}
	if _, err := delegation.RevocationTarget(priv); !errors.Is(err, sign.ErrPrivateKeyFile) {
		t.Errorf("a private key file: %v", err)
	}
	if r, err := delegation.NewRevocation(k.Public().ID(), "left the team", now); err != nil || r.Target != k.Public().ID() {
		t.Errorf("NewRevocation = %+v, %v", r, err)
	}
	if _, err := delegation.NewRevocation("not a target", "x", now); !errors.As(err, &fe) {
		t.Errorf("a bad target: %v", err)
	}
}

// TestNewIssuerQuarantine: audiences sorted without repeats; a lift with
// an end time, or a bad issuer URL, is the reader's field error.
func TestNewIssuerQuarantine(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	is, err := delegation.NewIssuer("https://id.example", "https://id.example/jwks", []string{"b", "a", "b"}, now)
	if err != nil || strings.Join(is.Audiences, " ") != "a b" {
		t.Fatalf("NewIssuer = %+v, %v", is, err)
	}
	var fe *schemas.FieldError
	if is, err := delegation.NewIssuer("http://id.example", "https://id.example/jwks", []string{"a"}, now); is != nil || !errors.As(err, &fe) {
		t.Errorf("http issuer: %+v, %v", is, err)
	}
	q, err := delegation.NewQuarantine("runner-1", time.Time{}, false, now)
	if err != nil || q.Until != 0 || q.Lift {
		t.Fatalf("NewQuarantine = %+v, %v", q, err)
	}
	if q, err := delegation.NewQuarantine("runner-1", now.Add(time.Hour), true, now); q != nil || !errors.As(err, &fe) || fe.Field != "until" {
		t.Errorf("lift with an end: %+v, %v", q, err)
	}
}

// TestParseRootEnvelope: a signed root decodes; another kind, and bytes
// that are no envelope, are refused.
func TestParseRootEnvelope(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	k := testkit.Key(t, 1)
	root, err := delegation.NewRoot(delegation.RootParams{Keys: []sign.PublicKey{k.Public()}, Threshold: 1, IssuedAt: now, Expires: now.Add(time.Hour), Signers: []sign.PublicKey{k.Public()}})
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := schemas.Encode(root)
	env, err := sign.Sign(schemas.KindRoot, payload, k)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := delegation.ParseRootEnvelope(env); err != nil || got.Version != root.Version {
		t.Fatalf("ParseRootEnvelope = %+v, %v", got, err)
	}
	rev, _ := delegation.NewRevocation(k.Public().ID(), "lost", now)
	payload, _ = schemas.Encode(rev)
	env, _ = sign.Sign(schemas.KindRevocation, payload, k)
	if got, err := delegation.ParseRootEnvelope(env); got != nil || err == nil || !strings.Contains(err.Error(), "not a root record") {
		t.Errorf("a revocation: %+v, %v", got, err)
	}
	if got, err := delegation.ParseRootEnvelope([]byte("x")); got != nil || err == nil {
		t.Errorf("garbage: %+v, %v", got, err)
	}
}
