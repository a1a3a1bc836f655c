package verify_test

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
	"github.com/writ-ledger/writ/transfer"
	"github.com/writ-ledger/writ/verify"
)

// End to end: an authority ledger holds a root, an operator's delegation
// to instruct, a release engineer's delegation to pin and the pin of the
// agent; the runner verifies the ledger, replays it (LoadAuthority) and
// admits a signed instruction in each mode. The agent file is not a Go
// binary, so it records no source revision: a provenance finding
// (unknown-build) that only enforce refuses. A changed agent byte is an
// integrity finding, refused in every mode.
func ExampleAdmit() {
	key := func(n byte) *sign.PrivateKey { // a fixed seed, for stable output
		s, _ := signature.LoadED25519Signer(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{n}, 32)))
		k, _ := sign.NewPrivateKey(s)
		return k
	}
	seal := func(r schemas.Record, k *sign.PrivateKey) []byte {
		payload, _ := schemas.Encode(r)
		env, _ := sign.Sign(r.Kind(), payload, k)
		return env
	}
	root, logKey, op, rel := key(1), key(2), key(10), key(11)
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	dir, _ := os.MkdirTemp("", "writ-example-")
	defer os.RemoveAll(dir)
	agent := filepath.Join(dir, "agent")
	os.WriteFile(agent, []byte("#!/bin/sh\necho agent\n"), 0o755)
	pin, _ := transfer.NewPin(agent, transfer.PinOptions{Artifact: "agent", Version: "1.0.0", Platform: "linux/amd64",
		IssuedAt: now.Add(-time.Hour), Expires: now.AddDate(0, 0, 30), AllowUnknown: true})
	window := func(d *schemas.Delegation) *schemas.Delegation {
		d.V, d.Depth, d.IssuedAt = 1, 0, now.Add(-time.Hour).Unix()
		d.NotBefore, d.NotAfter = now.Add(-24*time.Hour).Unix(), now.Add(24*time.Hour).Unix()
		return d
	}
	log, err := ledger.CreateWithHistory(filepath.Join(dir, "authority"), "example.com/authority", logKey, func() time.Time { return now })
	if err != nil {
		fmt.Println(err)
		return
	}
	defer log.Close()
	_, err = log.Append([][]byte{
		seal(&schemas.Root{V: 1, Version: 1, Keys: [][]byte{root.Public().Raw()}, Threshold: 1,
			IssuedAt: now.Add(-time.Hour).Unix(), Expires: now.AddDate(1, 0, 0).Unix()}, root),
		seal(window(&schemas.Delegation{Key: op.Public().Raw(), Actions: []schemas.Action{"instruct"},
			Streams: []string{"demo"}, Machines: []string{"runner-*"}}), root),
		seal(window(&schemas.Delegation{Key: rel.Public().Raw(), Actions: []schemas.Action{"pin"}, Artifacts: []string{"agent"}}), root),
		seal(pin, rel),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	vkey, _ := formats.NewLogKey("example.com/authority", logKey.Public()) // the runner's trusted log key
	auth, err := verify.LoadAuthority(log, vkey)
	if err != nil {
		fmt.Println(err)
		return
	}
	instruction := seal(&schemas.Instruction{V: 1, ID: "0123456789abcdef0123456789abcdef", Stream: "demo",
		Machine: "runner-1", Agent: schemas.ArtifactRef{Name: "agent"}, Transport: "ssh",
		IssuedAt: now.Add(-time.Minute).Unix(), NotBefore: now.Add(-time.Minute).Unix(), Expires: now.Add(time.Hour).Unix()}, op)
	admit := func(mode verify.Mode) {
		cfg := verify.Config{Machine: "runner-1", Mode: mode, Platform: "linux/amd64", Now: func() time.Time { return now }}
		v := verify.Admit(auth.State, cfg, verify.Dispatch{Raw: instruction, AgentBinary: agent})
		fmt.Printf("%-7s %s %s\n", mode, v.Verdict, v.Rule)
	}
	admit(verify.ModeOff)
	admit(verify.ModeWarn)
	admit(verify.ModeEnforce)
	os.WriteFile(agent, []byte("#!/bin/sh\necho AGENT\n"), 0o755)
	admit(verify.ModeOff)
	// Output:
	// off     admitted unknown-build
	// warn    would-refuse unknown-build
	// enforce refused unknown-build
	// off     refused agent-digest-mismatch
}
