package testvectors

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/fxamacker/cbor/v2"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// Files are the published vector files, by name under data/.
const (
	RecordsFile  = "records.json"
	NegativeFile = "negative.json"
)

// t0 is the fixed instant every generated record is issued at
// (2026-11-29T22:13:20Z), so the vectors are the same on every run.
const t0 = 1796000000

const (
	hour = 3600
	day  = 24 * hour
)

// key returns the deterministic test key whose 32-byte seed is n
// repeated. These keys are public test fixtures.
func key(n byte) *sign.PrivateKey {
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{n}, ed25519.SeedSize))
	s, err := signature.LoadED25519Signer(priv)
	if err != nil {
		panic(err)
	}
	k, err := sign.NewPrivateKey(s)
	if err != nil {
		panic(err)
	}
	return k
}

func pubHex(keys ...*sign.PrivateKey) []string {
	var out []string
	for _, k := range keys {
		out = append(out, hex.EncodeToString(k.Public().Raw()))
	}
	return out
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// canon encodes generic values (maps, arrays) in Core Deterministic
// Encoding, for hand-built hostile inputs.
var canon = must(cbor.EncOptions{Sort: cbor.SortCoreDeterministic}.EncMode())

func seal(k schemas.Kind, payload []byte, keys ...*sign.PrivateKey) []byte {
	return must(sign.Sign(k, payload, keys...))
}

// sign1 builds a tagged COSE_Sign1 by hand: protected is the serialized
// protected header map (any bytes), unprotected the raw unprotected map,
// and the signature is computed by k over the RFC 9052 §4.4 Sig_structure.
func sign1(protected, unprotected, payload []byte, k *sign.PrivateKey) []byte {
	tbs := must(canon.Marshal([]any{"Signature1", protected, []byte{}, payload}))
	sig := must(k.SignMessage(tbs))
	return must(canon.Marshal(cbor.Tag{Number: 18, Content: []any{protected, cbor.RawMessage(unprotected), payload, sig}}))
}

func header(m map[int64]any) []byte { return must(canon.Marshal(m)) }

// Sample records, valid under every rule.
func sampleRoot(th uint64, keys ...*sign.PrivateKey) *schemas.Root {
	var raw [][]byte
	for _, k := range keys {
		raw = append(raw, k.Public().Raw())
	}
	slices.SortFunc(raw, bytes.Compare)
	return &schemas.Root{V: 1, Version: 1, Keys: raw, Threshold: th, IssuedAt: t0, Expires: t0 + 365*day}
}

func sampleDelegation() *schemas.Delegation {
	return &schemas.Delegation{V: 1, Key: key(4).Public().Raw(), Actions: []schemas.Action{schemas.ActionInstruct, schemas.ActionPin},
		Streams: []string{"deploy/*"}, Machines: []string{"runner-*"}, Artifacts: []string{"agent"},
		NotBefore: t0, NotAfter: t0 + 30*day, Depth: 0, IssuedAt: t0}
}

var sampleDigest = "sha256:" + strings.Repeat("ab", 32)

func samplePin() *schemas.Pin {
	return &schemas.Pin{V: 1, Artifact: "agent", Platform: "linux/amd64", Digest: sampleDigest, Size: 2397230, Version: "v1.4.2",
		Build: &schemas.Build{GoVersion: "go1.26.8", Path: "example.com/agent", Module: "example.com/agent", ModuleVersion: "v1.4.2",
			VCS: "git", Revision: strings.Repeat("1f", 20), Time: "2026-11-28T09:00:00Z"},
		IssuedAt: t0, Expires: t0 + 90*day}
}

func sampleInstruction() *schemas.Instruction {
	return &schemas.Instruction{V: 1, ID: "0123456789abcdef0123456789abcdef", Stream: "deploy/web", Machine: "runner-7",
		Agent: schemas.ArtifactRef{Name: "agent", Digest: sampleDigest}, Brief: "Deploy release 1.4.2 to the web tier.",
		Transport: "ssh", IssuedAt: t0, NotBefore: t0, Expires: t0 + hour}
}

func sampleDecision() *schemas.Decision {
	return &schemas.Decision{V: 1, Time: t0 + 60, Machine: "runner-7", Mode: "enforce", Verdict: "refused",
		Rule: "agent-digest-mismatch", InstructionID: "0123456789abcdef0123456789abcdef", InstructionDigest: sampleDigest,
		Signer: key(4).Public().ID(), Stream: "deploy/web",
		Compared: []schemas.DigestCheck{{Subject: "agent", Expected: sampleDigest, Actual: "sha256:" + strings.Repeat("cd", 32)}},
		Passed:   []string{"envelope", "signature", "machine", "authority", "instruction-window"},
		Failed:   []string{"agent-digest-mismatch"}, AuthoritySize: 5, AuthorityRoot: strings.Repeat("e3", 32)}
}

// instructionMap is sampleInstruction as a generic map, for variants.
func instructionMap() map[string]any {
	return map[string]any{"v": 1, "id": "0123456789abcdef0123456789abcdef", "stream": "deploy/web", "machine": "runner-7",
		"agent": map[string]any{"name": "agent", "digest": sampleDigest}, "brief": "Deploy release 1.4.2 to the web tier.",
		"transport": "ssh", "issued_at": t0, "not_before": t0, "expires": t0 + hour}
}

func withField(k string, v any) []byte {
	m := instructionMap()
	m[k] = v
	return must(canon.Marshal(m))
}

func valid(name, comment string, rec schemas.Record, input []byte, signed bool, th int, trusted ...*sign.PrivateKey) Vector {
	return Vector{Name: name, Comment: comment, Kind: string(rec.Kind()), Signed: signed, TrustedKeys: pubHex(trusted...),
		Threshold: th, Input: hex.EncodeToString(input), Expect: "valid", Record: must(json.Marshal(rec))}
}

func invalid(name, comment, kind, class string, input []byte, signed bool, th int, trusted ...*sign.PrivateKey) Vector {
	return Vector{Name: name, Comment: comment, Kind: kind, Signed: signed, TrustedKeys: pubHex(trusted...),
		Threshold: th, Input: hex.EncodeToString(input), Expect: "invalid", Error: class}
}

// Build returns the vector files, byte for byte the same on every run.
func Build() map[string][]byte {
	k1, k2, k3, k4 := key(1), key(2), key(3), key(4)
	enc := func(r schemas.Record) []byte { return must(schemas.Encode(r)) }
	inst := schemas.KindInstruction
	instr := enc(sampleInstruction())
	records := File{
		Description: "One valid record of every kind, signed as writ signs it (COSE_Sign1 for one key, COSE_Sign for several), " +
			"or bare CBOR for decisions and unsigned instructions. Keys are Ed25519 with seeds 0x01.., 0x02.., 0x03.., 0x04.. repeated.",
		Vectors: []Vector{
			valid("root-1-of-1", "a root of one key, signed by it", sampleRoot(1, k1), seal(schemas.KindRoot, enc(sampleRoot(1, k1)), k1), true, 1, k1),
			valid("root-2-of-3", "a 2-of-3 root signed by two of its keys (COSE_Sign)", sampleRoot(2, k1, k2, k3),
				seal(schemas.KindRoot, enc(sampleRoot(2, k1, k2, k3)), k1, k3), true, 2, k1, k2, k3),
			valid("delegation", "instruct and pin on deploy/* and runner-*, signed by the root key", sampleDelegation(),
				seal(schemas.KindDelegation, enc(sampleDelegation()), k1), true, 1, k1),
			valid("pin", "a pin with Go build metadata", samplePin(), seal(schemas.KindPin, enc(samplePin()), k4), true, 1, k4),
			valid("instruction-signed", "a signed instruction with a brief", sampleInstruction(), seal(inst, instr, k4), true, 1, k4),
			valid("instruction-unsigned", "the same instruction as bare CBOR, as a control plane that does not sign sends it",
				sampleInstruction(), instr, false, 0),
			valid("instruction-alg-ed25519", "alg -19 (RFC 9864 Ed25519) names the same algorithm as -8 and is accepted on input",
				sampleInstruction(), sign1(header(map[int64]any{1: -19, 3: inst.ContentType(), 4: k4.Public().IDBytes()}), []byte{0xa0}, instr, k4), true, 1, k4),
			valid("decision", "a runner's decision record (bare CBOR in the decision log)", sampleDecision(), enc(sampleDecision()), false, 0),
			valid("revocation", "a revocation of a key id", revocation(k4), seal(schemas.KindRevocation, enc(revocation(k4)), k1), true, 1, k1),
			valid("issuer", "an issuer record signed 2-of-3", issuer(), seal(schemas.KindIssuer, enc(issuer()), k1, k2), true, 2, k1, k2, k3),
			valid("quarantine", "drain runner-7 for a day", quarantine(false), seal(schemas.KindQuarantine, enc(quarantine(false)), k1), true, 1, k1),
			valid("quarantine-lift", "lift the quarantine", quarantine(true), seal(schemas.KindQuarantine, enc(quarantine(true)), k1), true, 1, k1),
			valid("downgrade", "allow runners back to agent v1.4.1, signed 2-of-3", downgrade(), seal(schemas.KindDowngrade, enc(downgrade()), k1, k2), true, 2, k1, k2, k3),
			valid("instruction-engine-provision", "an instruction naming its engine and two provisioned files (one SHA-384)",
				fullInstruction(), seal(inst, enc(fullInstruction()), k4), true, 1, k4),
		},
	}
	negative := File{
		Description: "Inputs every writ implementation must refuse, each breaking exactly one rule, with the error class " +
			"(testvectors package doc). Keys as in records.json; key 0x09.. is never trusted.",
		Vectors: negatives(k1, k2, k3, k4, instr),
	}
	out := map[string][]byte{}
	for name, f := range map[string]File{RecordsFile: records, NegativeFile: negative} {
		b := must(json.MarshalIndent(f, "", "  "))
		out[name] = append(b, '\n')
	}
	out[AdmissionFile] = buildAdmission()
	return out
}

func downgrade() *schemas.Downgrade {
	return &schemas.Downgrade{V: 1, Artifact: "agent", Version: "v1.4.1", Reason: "v1.4.2 breaks the web tier", IssuedAt: t0, Expires: t0 + 7*day}
}

func fullInstruction() *schemas.Instruction {
	in := sampleInstruction()
	in.ID = "fedcba9876543210fedcba9876543210"
	in.Engine = &schemas.ArtifactRef{Name: "engine", Digest: "sha256:" + strings.Repeat("cd", 32)}
	in.Provision = []schemas.Provision{
		{Dest: ".provision/Plan.md", Digest: "sha384:" + strings.Repeat("ef", 48), Size: 1200},
		{Dest: ".provision/config.json", Digest: "sha256:" + strings.Repeat("01", 32), Size: 88},
	}
	return in
}

func revocation(target *sign.PrivateKey) *schemas.Revocation {
	return &schemas.Revocation{V: 1, Target: target.Public().ID(), Reason: "the key left with its holder", IssuedAt: t0}
}

func issuer() *schemas.Issuer {
	return &schemas.Issuer{V: 1, Issuer: "https://issuer.example", JWKSURI: "https://issuer.example/.well-known/jwks.json",
		Audiences: []string{"writ"}, IssuedAt: t0}
}

func quarantine(lift bool) *schemas.Quarantine {
	q := &schemas.Quarantine{V: 1, Machine: "runner-7", IssuedAt: t0}
	if lift {
		q.Lift = true
	} else {
		q.Until = t0 + day
	}
	return q
}

// sanity panics if a generated negative vector does not at least decode
// as the generator meant (a guard against vectors that test nothing).
func sanity(cond bool, what string) {
	if !cond {
		panic(fmt.Sprintf("testvectors: generator invariant broken: %s", what))
	}
}
