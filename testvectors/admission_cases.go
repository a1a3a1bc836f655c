package testvectors

import (
	"bytes"
	"encoding/hex"
	"fmt"

	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// order is an instruction for the admission vectors: id n, valid from a
// minute before admitNow for an hour, transport ssh, with a brief.
func order(n int, stream, machine, agent string) *schemas.Instruction {
	return &schemas.Instruction{V: 1, ID: fmt.Sprintf("a0%030x", n), Stream: stream, Machine: machine,
		Agent: schemas.ArtifactRef{Name: agent}, Brief: "Deploy release 1.0.0 to the web tier.", Transport: "ssh",
		IssuedAt: admitNow - 60, NotBefore: admitNow - 60, Expires: admitNow + hour}
}

// signed returns in as a COSE_Sign1 envelope signed by k, or as bare
// CBOR when k is nil.
func signed(in *schemas.Instruction, k *sign.PrivateKey) []byte {
	payload := must(schemas.Encode(in))
	if k == nil {
		return payload
	}
	return seal(schemas.KindInstruction, payload, k)
}

// admitCase is one case on the main ledger, the agent file named agent
// holding data, at runner-1 on linux/amd64 at admitNow unless changed.
func admitCase(name, comment, mode string, dispatch []byte, agent string, data []byte, verdict, rule string) AdmissionCase {
	return AdmissionCase{Name: name, Comment: comment, Ledger: admitLedger, Dispatch: hex.EncodeToString(dispatch),
		Files: map[string][]byte{agent: data}, AgentBinary: agent,
		Runner: AdmissionRunner{Mode: mode, Machine: "runner-1", Platform: admitPlatform, Now: admitNow},
		Expect: AdmissionExpect{Verdict: verdict, Rule: rule, Failed: failedOnly(rule)}}
}

// failedOnly is the failed list of a case that fails rule alone (none
// for ok).
func failedOnly(rule string) []string {
	if rule == "ok" {
		return []string{}
	}
	return []string{rule}
}

// corrupt returns env with the first byte of its signature flipped. A
// one-signature envelope (COSE_Sign1) ends with its 64-byte Ed25519
// signature.
func corrupt(env []byte) []byte {
	b := bytes.Clone(env)
	b[len(b)-64] ^= 0x01
	return b
}

// admitDispatches are the dispatches the admission cases judge.
type admitDispatches struct {
	good, script, bare, stranger, scope, late, revoked, elsewhere, other, drained, forged, notYet, stale, byRoot, bareElsewhere, malformed []byte
}

// makeDispatches signs each dispatch with the key its case needs.
func makeDispatches(k admitKeys) admitDispatches {
	good := signed(order(1, "deploy/web", "runner-1", "agent"), k.op)
	script := signed(order(2, "deploy/web", "runner-1", "script-agent"), k.op)
	bare := signed(order(3, "deploy/web", "runner-1", "agent"), nil)
	stranger := signed(order(4, "deploy/web", "runner-1", "agent"), k.stranger)
	scope := signed(order(5, "billing/invoices", "runner-1", "agent"), k.op)
	late := signed(order(6, "deploy/web", "runner-1", "agent"), k.late)
	revoked := signed(order(7, "deploy/web", "runner-1", "agent"), k.revoked)
	elsewhere := signed(order(8, "deploy/web", "runner-2", "agent"), k.op)
	other := signed(order(9, "deploy/web", "runner-1", "other-agent"), k.op)
	drained := signed(order(10, "deploy/web", "runner-q", "agent"), k.op)
	forged := corrupt(signed(order(12, "deploy/web", "runner-1", "agent"), k.op))
	early := order(13, "deploy/web", "runner-1", "agent")
	early.NotBefore = admitNow + 60
	notYet := signed(early, k.op)
	stale := signed(order(14, "deploy/web", "runner-1", "stale-agent"), k.op)
	byRoot := signed(order(15, "deploy/web", "runner-1", "agent"), k.root)
	bareElsewhere := signed(order(16, "deploy/web", "runner-2", "agent"), nil)
	malformed := must(canon.Marshal(map[string]any{"v": 1, "id": fmt.Sprintf("a0%030x", 11), "stream": "deploy/web",
		"machine": "runner-1", "agent": map[string]any{"name": "agent"}, "transport": "ssh",
		"issued_at": admitNow - 60, "not_before": admitNow - 60, "expires": admitNow + hour, "priority": "high"}))
	return admitDispatches{good: good, script: script, bare: bare, stranger: stranger, scope: scope, late: late, revoked: revoked, elsewhere: elsewhere, other: other, drained: drained, forged: forged, notYet: notYet, stale: stale, byRoot: byRoot, bareElsewhere: bareElsewhere, malformed: malformed}
}

// admissionCases are the cases. Each fails exactly one check (or none),
// so its rule is the only one an implementation can reach, except the
// precedence cases, which declare every rule they fail.
func admissionCases(k admitKeys) []AdmissionCase {
	const (
		off, warn, enforce = "off", "warn", "enforce"
		admitted, unsigned = "admitted", "admitted-unsigned"
		would, refused     = "would-refuse", "refused"
	)
	d := makeDispatches(k)

	c := func(name, comment, mode string, dispatch []byte, verdict, rule string) AdmissionCase {
		return admitCase(name, comment, mode, dispatch, "agent", agentClean, verdict, rule)
	}
	expired := c("instruction-expired-enforce", "the runner's clock is t0+3h, an hour after the instruction's expires (exclusive)",
		enforce, d.good, refused, "instruction-expired")
	expired.Runner.Now = t0 + 3*hour
	// Two failures: unsigned (governed, admitted-unsigned alone under off)
	// and wrong-machine (integrity): an integrity finding refuses in
	// every mode and wins over any governed one.
	precedence := c("precedence-unsigned-wrong-machine-off", "a bare instruction naming runner-2, judged by runner-1 under off: "+
		"it fails unsigned and wrong-machine; the integrity rule wins over the governed one", off, d.bareElsewhere, refused, "wrong-machine")
	precedence.Expect.Failed = []string{"unsigned", "wrong-machine"}
	quarantined := func(mode string) AdmissionCase {
		q := c("quarantined-"+mode, "runner-q is quarantined until t0+7 days; quarantine refuses in every mode",
			mode, d.drained, refused, "quarantined")
		q.Runner.Machine = "runner-q"
		return q
	}
	return []AdmissionCase{
		c("ok-enforce", "signed by the operator, the clean pinned agent: every check passes", enforce, d.good, admitted, "ok"),
		c("ok-off", "the same dispatch under off", off, d.good, admitted, "ok"),
		admitCase("unknown-build-off", "script-agent is pinned with no build information (AllowUnknown): a provenance finding, admitted under off",
			off, d.script, "script-agent", agentScript, admitted, "unknown-build"),
		admitCase("unknown-build-warn", "the same under warn", warn, d.script, "script-agent", agentScript, would, "unknown-build"),
		admitCase("unknown-build-enforce", "the same under enforce", enforce, d.script, "script-agent", agentScript, refused, "unknown-build"),
		c("unsigned-off", "a bare instruction (no envelope) under off", off, d.bare, unsigned, "unsigned"),
		c("unsigned-warn", "the same under warn", warn, d.bare, would, "unsigned"),
		c("unsigned-enforce", "the same under enforce", enforce, d.bare, refused, "unsigned"),
		c("unknown-key-off", "signed by key 0x09, which the ledger never names: no verified authority, admitted-unsigned under off",
			off, d.stranger, unsigned, "unknown-key"),
		c("unknown-key-enforce", "the same under enforce", enforce, d.stranger, refused, "unknown-key"),
		c("out-of-scope-off", "the operator instructs billing/invoices, outside its deploy/* delegation: admitted-unsigned under off",
			off, d.scope, unsigned, "out-of-scope"),
		c("out-of-scope-enforce", "the same under enforce", enforce, d.scope, refused, "out-of-scope"),
		c("outside-window-enforce", "signed by 0x06, whose delegation starts at t0+2 days", enforce, d.late, refused, "outside-window"),
		c("revoked-enforce", "signed by 0x05, whose key the root revoked", enforce, d.revoked, refused, "revoked"),
		c("wrong-machine-off", "the instruction names runner-2; this runner is runner-1: an integrity rule, refused in every mode",
			off, d.elsewhere, refused, "wrong-machine"),
		c("wrong-machine-enforce", "the same under enforce", enforce, d.elsewhere, refused, "wrong-machine"),
		c("agent-not-pinned-off", "the instruction names other-agent, which no pin covers: a provenance finding, admitted under off",
			off, d.other, admitted, "agent-not-pinned"),
		c("agent-not-pinned-enforce", "the same under enforce", enforce, d.other, refused, "agent-not-pinned"),
		admitCase("agent-digest-mismatch-off", "the agent file has one byte changed (same size): an integrity rule, refused in every mode",
			off, d.good, "agent", agentTampered, refused, "agent-digest-mismatch"),
		admitCase("agent-digest-mismatch-enforce", "the same under enforce", enforce, d.good, "agent", agentTampered, refused, "agent-digest-mismatch"),
		expired,
		quarantined(off),
		quarantined(enforce),
		c("malformed-dispatch-off", "a bare instruction with a field the schema does not know (priority): an integrity rule, refused in every mode",
			off, d.malformed, refused, "malformed-dispatch"),
		c("malformed-dispatch-enforce", "the same under enforce", enforce, d.malformed, refused, "malformed-dispatch"),
		c("bad-signature-off", "signed by the operator 0x04, whom the ledger trusts, with the first byte of the Ed25519 signature flipped: "+
			"bad-signature is an authenticity rule marked to refuse in every mode (evidence of tampering), so refused even under off",
			off, d.forged, refused, "bad-signature"),
		c("bad-signature-enforce", "the same under enforce", enforce, d.forged, refused, "bad-signature"),
		c("out-of-scope-warn", "the operator instructs billing/invoices, outside its deploy/* delegation, under warn", warn, d.scope, would, "out-of-scope"),
		c("instruction-not-yet-valid-enforce", "the instruction's not_before is a minute after the runner's clock (t0+1h); issued_at is a minute before it",
			enforce, d.notYet, refused, "instruction-not-yet-valid"),
		c("instruction-not-yet-valid-warn", "the same under warn", warn, d.notYet, would, "instruction-not-yet-valid"),
		admitCase("pin-expired-enforce", "the instruction names stale-agent, whose pin (the clean build) expired at t0+30 minutes, half an hour "+
			"before the runner's clock", enforce, d.stale, "stale-agent", agentClean, refused, "pin-expired"),
		admitCase("pin-expired-off", "the same under off: a freshness finding, admitted (the signature is verified and delegated)",
			off, d.stale, "stale-agent", agentClean, admitted, "pin-expired"),
		c("no-delegation-enforce", "signed by the root key 0x01: the ledger knows the key (the root names it), but it holds no delegation, "+
			"so it may not instruct", enforce, d.byRoot, refused, "no-delegation"),
		c("no-delegation-off", "the same under off: no delegated signature stands behind it, admitted-unsigned", off, d.byRoot, unsigned, "no-delegation"),
		precedence,
	}
}
