package testvectors

import (
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
		Expect: AdmissionExpect{Verdict: verdict, Rule: rule}}
}

// admissionCases are the cases, each failing exactly one check (or none),
// so its rule is the only one an implementation can reach.
func admissionCases(k admitKeys) []AdmissionCase {
	const (
		off, warn, enforce = "off", "warn", "enforce"
		admitted, unsigned = "admitted", "admitted-unsigned"
		would, refused     = "would-refuse", "refused"
	)
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
	malformed := must(canon.Marshal(map[string]any{"v": 1, "id": fmt.Sprintf("a0%030x", 11), "stream": "deploy/web",
		"machine": "runner-1", "agent": map[string]any{"name": "agent"}, "transport": "ssh",
		"issued_at": admitNow - 60, "not_before": admitNow - 60, "expires": admitNow + hour, "priority": "high"}))

	c := func(name, comment, mode string, dispatch []byte, verdict, rule string) AdmissionCase {
		return admitCase(name, comment, mode, dispatch, "agent", agentClean, verdict, rule)
	}
	expired := c("instruction-expired-enforce", "the runner's clock is t0+3h, an hour after the instruction's expires (exclusive)",
		enforce, good, refused, "instruction-expired")
	expired.Runner.Now = t0 + 3*hour
	quarantined := func(mode string) AdmissionCase {
		q := c("quarantined-"+mode, "runner-q is quarantined until t0+7 days; quarantine refuses in every mode",
			mode, drained, refused, "quarantined")
		q.Runner.Machine = "runner-q"
		return q
	}
	return []AdmissionCase{
		c("ok-enforce", "signed by the operator, the clean pinned agent: every check passes", enforce, good, admitted, "ok"),
		c("ok-off", "the same dispatch under off", off, good, admitted, "ok"),
		admitCase("unknown-build-off", "script-agent is pinned with no build information (AllowUnknown): a provenance finding, admitted under off",
			off, script, "script-agent", agentScript, admitted, "unknown-build"),
		admitCase("unknown-build-warn", "the same under warn", warn, script, "script-agent", agentScript, would, "unknown-build"),
		admitCase("unknown-build-enforce", "the same under enforce", enforce, script, "script-agent", agentScript, refused, "unknown-build"),
		c("unsigned-off", "a bare instruction (no envelope) under off", off, bare, unsigned, "unsigned"),
		c("unsigned-warn", "the same under warn", warn, bare, would, "unsigned"),
		c("unsigned-enforce", "the same under enforce", enforce, bare, refused, "unsigned"),
		c("unknown-key-off", "signed by key 0x09, which the ledger never names: no verified authority, admitted-unsigned under off",
			off, stranger, unsigned, "unknown-key"),
		c("unknown-key-enforce", "the same under enforce", enforce, stranger, refused, "unknown-key"),
		c("out-of-scope-off", "the operator instructs billing/invoices, outside its deploy/* delegation: admitted-unsigned under off",
			off, scope, unsigned, "out-of-scope"),
		c("out-of-scope-enforce", "the same under enforce", enforce, scope, refused, "out-of-scope"),
		c("outside-window-enforce", "signed by 0x06, whose delegation starts at t0+2 days", enforce, late, refused, "outside-window"),
		c("revoked-enforce", "signed by 0x05, whose key the root revoked", enforce, revoked, refused, "revoked"),
		c("wrong-machine-off", "the instruction names runner-2; this runner is runner-1: an integrity rule, refused in every mode",
			off, elsewhere, refused, "wrong-machine"),
		c("wrong-machine-enforce", "the same under enforce", enforce, elsewhere, refused, "wrong-machine"),
		c("agent-not-pinned-off", "the instruction names other-agent, which no pin covers: a provenance finding, admitted under off",
			off, other, admitted, "agent-not-pinned"),
		c("agent-not-pinned-enforce", "the same under enforce", enforce, other, refused, "agent-not-pinned"),
		admitCase("agent-digest-mismatch-off", "the agent file has one byte changed (same size): an integrity rule, refused in every mode",
			off, good, "agent", agentTampered, refused, "agent-digest-mismatch"),
		admitCase("agent-digest-mismatch-enforce", "the same under enforce", enforce, good, "agent", agentTampered, refused, "agent-digest-mismatch"),
		expired,
		quarantined(off),
		quarantined(enforce),
		c("malformed-dispatch-off", "a bare instruction with a field the schema does not know (priority): an integrity rule, refused in every mode",
			off, malformed, refused, "malformed-dispatch"),
		c("malformed-dispatch-enforce", "the same under enforce", enforce, malformed, refused, "malformed-dispatch"),
	}
}
