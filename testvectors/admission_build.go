package testvectors

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
	"github.com/writ-ledger/writ/transfer"
	"github.com/writ-ledger/writ/verify"
)

// The admission vectors' fixed world. The authority log accepts its one
// batch at t0; runners judge at admitNow unless a case says otherwise.
const (
	admitOrigin   = "vectors.writ.example/authority"
	admitLedger   = "main"
	admitPlatform = "linux/amd64"
	admitNow      = t0 + hour
	issued        = t0 - hour // issued_at of every authority record
)

// admitKeys are the admission vectors' keys, by seed byte: 0x01 the root,
// 0x02 the authority log's checkpoint key, 0x03 the release engineer,
// 0x04 the operator, 0x05 an operator whose key is revoked, 0x06 an
// operator whose delegation starts two days after t0, 0x09 a key the
// ledger never names.
type admitKeys struct{ root, log, rel, op, revoked, late, stranger *sign.PrivateKey }

func newAdmitKeys() admitKeys {
	return admitKeys{key(1), key(2), key(3), key(4), key(5), key(6), key(9)}
}

// The files a runner sees: the clean agent (a build-info ELF with a clean
// revision, buildInfoELF), the same bytes with one byte changed, and a
// shell script, which records no build information.
var (
	agentClean    = buildInfoELF("go1.26.8", "example.com/agent", "v1.0.0", "0123456789abcdef0123456789abcdef01234567", "2026-11-28T09:00:00Z")
	agentTampered = func() []byte {
		b := bytes.Clone(agentClean)
		i := bytes.Index(b, []byte("vcs.revision=0"))
		sanity(i > 0, "the clean agent records its revision")
		b[i+len("vcs.revision=")] = '1'
		return b
	}()
	agentScript = []byte("#!/bin/sh\necho agent\n")
)

func window(k *sign.PrivateKey, notBefore int64) *schemas.Delegation {
	return &schemas.Delegation{V: 1, Key: k.Public().Raw(), Actions: []schemas.Action{schemas.ActionInstruct},
		Streams: []string{"deploy/*"}, Machines: []string{"runner-*"},
		NotBefore: notBefore, NotAfter: t0 + 30*day, Depth: 0, IssuedAt: issued}
}

// admitRecords returns the authority log's entries, in order: the root,
// the delegations, the three pins, the revocation of key 0x05 and the
// quarantine of runner-q. Pins are made by transfer.NewPin from the
// agent files written to dir, as `writ pin` makes them.
func admitRecords(k admitKeys, dir string) [][]byte {
	env := func(r schemas.Record, by *sign.PrivateKey) []byte {
		return seal(r.Kind(), must(schemas.Encode(r)), by)
	}
	pin := func(name string, data []byte, allowUnknown bool, expires int64) *schemas.Pin {
		path := filepath.Join(dir, name)
		must(0, os.WriteFile(path, data, 0o755))
		return must(transfer.NewPin(path, transfer.PinOptions{Artifact: name, Version: "1.0.0", Platform: admitPlatform,
			IssuedAt: time.Unix(issued, 0), Expires: time.Unix(expires, 0), AllowUnknown: allowUnknown}))
	}
	root := &schemas.Root{V: 1, Version: 1, Keys: [][]byte{k.root.Public().Raw()}, Threshold: 1, IssuedAt: issued, Expires: t0 + 365*day}
	rel := &schemas.Delegation{V: 1, Key: k.rel.Public().Raw(), Actions: []schemas.Action{schemas.ActionPin}, Artifacts: []string{"agent", "script-agent", "stale-agent"},
		NotBefore: t0 - day, NotAfter: t0 + 30*day, IssuedAt: issued}
	return [][]byte{
		env(root, k.root),
		env(rel, k.root),
		env(window(k.op, t0-day), k.root),
		env(window(k.revoked, t0-day), k.root),
		env(window(k.late, t0+2*day), k.root),
		env(pin("agent", agentClean, false, t0+90*day), k.rel),
		env(pin("script-agent", agentScript, true, t0+90*day), k.rel),
		env(pin("stale-agent", agentClean, false, t0+30*60), k.rel),
		env(&schemas.Revocation{V: 1, Target: k.revoked.Public().ID(), Reason: "the key left with its holder", IssuedAt: issued}, k.root),
		env(&schemas.Quarantine{V: 1, Machine: "runner-q", Until: t0 + 7*day, IssuedAt: issued}, k.root),
	}
}

// admitLedgerExport builds the authority log in a temporary directory
// with its clock fixed at t0 (ledger.CreateWithHistory's now: the
// checkpoints' signed times), appends every record in one batch, checks
// it loads (verify.LoadAuthority), and returns its export: the same bytes
// on every run, since the origin, keys, times and Ed25519 signatures are
// all fixed.
func admitLedgerExport(k admitKeys) AdmissionLedger {
	dir := must(os.MkdirTemp("", "writ-admission-vectors-"))
	defer os.RemoveAll(dir)
	log := must(ledger.CreateWithHistory(filepath.Join(dir, "authority"), admitOrigin, k.log, func() time.Time { return time.Unix(t0, 0) }))
	defer log.Close()
	must(log.Append(admitRecords(k, dir)))
	key := must(formats.NewLogKey(admitOrigin, k.log.Public()))
	vkey := key.String()
	must(verify.LoadAuthority(log, key))
	var out bytes.Buffer
	must(0, replica.Export(&out, []string{"authority"}, []*ledger.Log{log}))
	first := must(log.Entry(0))
	return AdmissionLedger{Name: admitLedger, Export: out.Bytes(), AuthorityVKey: vkey, TrustRoot: schemas.SHA256Digest(first),
		Comment: "root 0x01 (1 of 1); 0x03 may pin agent, script-agent and stale-agent; 0x04, 0x05 and 0x06 may instruct deploy/* on runner-* " +
			"(0x06 only from t0+2 days); pins of agent (a clean build, expires t0+90 days), script-agent (no build information, t0+90 days) " +
			"and stale-agent (the clean build, expires t0+30 minutes), v1.0.0 for linux/amd64; " +
			"key 0x05 revoked; runner-q quarantined until t0+7 days. All accepted in one batch at t0 = " + time.Unix(t0, 0).UTC().Format(time.RFC3339)}
}

// buildAdmission returns data/admission.json.
func buildAdmission() []byte {
	k := newAdmitKeys()
	f := Admission{
		Description: "Admission vectors: a runner imports the ledger export, trusts its authority_vkey and trust_root, writes the files, " +
			"sets its clock, mode, machine and platform, judges the dispatch and must reach the expected verdict and rule " +
			"(testvectors package doc, \"Admission vectors\"). Keys are Ed25519 with seeds 0x01.. to 0x09.. repeated.",
		T0:      t0,
		Ledgers: []AdmissionLedger{admitLedgerExport(k)},
		Cases:   admissionCases(k),
	}
	b := must(json.MarshalIndent(f, "", "  "))
	return append(b, '\n')
}
