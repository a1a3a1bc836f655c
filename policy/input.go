package policy

import (
	"time"

	"github.com/writ-ledger/writ/schemas"
)

// Input is what a policy judges (the package doc names each variable):
// the instruction (nil for one that did not parse: its map is empty), its
// signer's key id, this runner's machine name, the instant, and the pins
// in force for the agent and the engine (nil when none stands).
type Input struct {
	Instruction   *schemas.Instruction
	Signer        string
	Machine       string
	Time          time.Time
	Agent, Engine *schemas.Pin
}

// vars builds the CEL activation of in.
func (in Input) vars() map[string]any {
	return map[string]any{
		"instruction": instruction(in.Instruction), "signer": in.Signer, "machine": in.Machine,
		"time": in.Time.UTC(), "agent": pin(in.Agent), "engine": pin(in.Engine),
	}
}

func unix(sec int64) time.Time { return time.Unix(sec, 0).UTC() }

func instruction(r *schemas.Instruction) map[string]any {
	if r == nil {
		return map[string]any{}
	}
	m := map[string]any{
		"id": r.ID, "stream": r.Stream, "machine": r.Machine, "transport": r.Transport,
		"issued_at": unix(r.IssuedAt), "not_before": unix(r.NotBefore), "expires": unix(r.Expires),
		"agent": map[string]any{"name": r.Agent.Name, "digest": r.Agent.Digest},
	}
	if r.Engine != nil {
		m["engine"] = map[string]any{"name": r.Engine.Name, "digest": r.Engine.Digest}
	}
	return m
}

func pin(p *schemas.Pin) map[string]any {
	if p == nil {
		return map[string]any{}
	}
	m := map[string]any{"artifact": p.Artifact, "version": p.Version, "digest": p.Digest, "platform": p.Platform, "expires": unix(p.Expires)}
	if b := p.Build; b != nil {
		m["build"] = map[string]any{"go_version": b.GoVersion, "path": b.Path, "module": b.Module, "vcs_revision": b.Revision, "vcs_modified": b.Modified}
	}
	if v := p.Provenance; v != nil {
		m["provenance"] = map[string]any{"builder": v.Builder, "builder_key": p.Builder().Key, "issuer": v.Issuer, "identity": v.Identity, "repository": v.Repository, "commit": v.Commit}
	}
	return m
}
