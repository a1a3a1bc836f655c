// Package testkit builds real keys and signed records for writ's tests:
// deterministic Ed25519 keys (through the same sigstore signer the product
// uses) and envelopes made with package sign. It holds no fakes.
package testkit

import (
	"bytes"
	"crypto/ed25519"
	"slices"
	"testing"
	"time"

	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// Epoch is the fixed instant tests judge at: 2026-11-29T10:00:00Z.
var Epoch = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

// Key returns the Ed25519 key whose 32-byte seed is n repeated.
func Key(t testing.TB, n byte) *sign.PrivateKey {
	t.Helper()
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{n}, ed25519.SeedSize))
	s, err := signature.LoadED25519Signer(priv)
	if err != nil {
		t.Fatal(err)
	}
	k, err := sign.NewPrivateKey(s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// Seal encodes rec and signs it with keys.
func Seal(t testing.TB, rec schemas.Record, keys ...*sign.PrivateKey) []byte {
	t.Helper()
	payload, err := schemas.Encode(rec)
	if err != nil {
		t.Fatal(err)
	}
	env, err := sign.Sign(rec.Kind(), payload, keys...)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// Root returns a root record over keys with threshold th, issued an hour
// before Epoch and expiring a year after.
func Root(th uint64, keys ...*sign.PrivateKey) *schemas.Root {
	var raw [][]byte
	for _, k := range keys {
		raw = append(raw, k.Public().Raw())
	}
	slices.SortFunc(raw, bytes.Compare)
	return &schemas.Root{V: 1, Version: 1, Keys: raw, Threshold: th,
		IssuedAt: Epoch.Add(-time.Hour).Unix(), Expires: Epoch.Add(365 * 24 * time.Hour).Unix()}
}

// Delegation returns a delegation of actions to k on stream and machine
// patterns (and artifact "agent" when actions include pin), valid from a
// day before Epoch to a day after.
func Delegation(k *sign.PrivateKey, actions []string, stream, machine string) *schemas.Delegation {
	acts := make([]schemas.Action, len(actions))
	for i, a := range actions {
		acts[i] = schemas.Action(a)
	}
	d := &schemas.Delegation{V: 1, Key: k.Public().Raw(), Actions: acts,
		NotBefore: Epoch.Add(-24 * time.Hour).Unix(), NotAfter: Epoch.Add(24 * time.Hour).Unix(),
		IssuedAt: Epoch.Add(-time.Hour).Unix()}
	if stream != "" {
		d.Streams, d.Machines = []string{stream}, []string{machine}
	}
	if slices.Contains(actions, "pin") {
		d.Artifacts = []string{"agent"}
	}
	return d
}

// Pin returns a pin of artifact "agent" for platform with digest and
// size, expiring 30 days after Epoch.
func Pin(platform, digest string, size uint64) *schemas.Pin {
	return &schemas.Pin{V: 1, Artifact: "agent", Platform: platform, Digest: digest, Size: size, Version: "v1.0.0",
		IssuedAt: Epoch.Add(-time.Hour).Unix(), Expires: Epoch.Add(30 * 24 * time.Hour).Unix()}
}

// Instruction returns an instruction for stream "demo" on machine
// "runner-1" running "agent", valid for an hour around Epoch.
func Instruction(id string) *schemas.Instruction {
	return &schemas.Instruction{V: 1, ID: id, Stream: "demo", Machine: "runner-1", Agent: schemas.ArtifactRef{Name: "agent"},
		Transport: "ssh", IssuedAt: Epoch.Add(-time.Minute).Unix(), NotBefore: Epoch.Add(-time.Minute).Unix(),
		Expires: Epoch.Add(time.Hour).Unix()}
}
