package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/admission"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify"
)

// printed is what printVerdict writes under --json for res.
func printed(t *testing.T, res *admission.Response, served bool) string {
	t.Helper()
	var out bytes.Buffer
	app := &cli.App{Name: "writ", Writer: &out, Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error { return printVerdict(c, res, served) }}
	if err := app.Run([]string{"writ", "--json"}); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// encodeAsBefore is v as the commands printed their results before they
// had types: json.Encoder, HTML characters unescaped.
func encodeAsBefore(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestVerdictJSONAsBefore: admit and admission request print, byte for
// byte, the objects they built by hand before the verdict had one type:
// admit the map of the verdict's fields (nested objects in their types'
// order), admission request the server's answer with the keys of every
// object sorted; with and without a claim, recorded or not.
func TestVerdictJSONAsBefore(t *testing.T) {
	index := int64(7)
	v := &verify.Verdict{Verdict: verify.Refused, Rule: rules.Replay, Class: rules.ClassIntegrity, Reason: "a <replay> & more",
		NextAct: "n", Mode: verify.ModeWarn, InstructionID: "0123", InstructionDigest: schemas.SHA256Digest(nil), Signer: "ab",
		Machine: "runner-1", Stream: "demo", Passed: []string{"envelope"}, Failed: []verify.Finding{{Rule: "replay", Reason: "again"}},
		Compared: []schemas.DigestCheck{{Subject: "agent", Expected: "sha256:1", Actual: "sha256:2"}}}
	for _, claim := range []*schemas.Claim{nil, {Session: "s1", Until: 1700000000, Release: true}} {
		v.Claim = claim
		old := map[string]any{
			"verdict": v.Verdict, "rule": v.Rule, "class": v.Class, "reason": v.Reason, "next_act": v.NextAct,
			"mode": v.Mode, "instruction_id": v.InstructionID, "instruction_digest": v.InstructionDigest,
			"signer": v.Signer, "machine": v.Machine, "stream": v.Stream, "decision_index": index,
			"passed": v.Passed, "failed": v.Failed, "compared": v.Compared,
		}
		if claim != nil {
			old["claim"] = claim
		}
		res := admission.NewResponse(v, index)
		if got, want := printed(t, res, false), encodeAsBefore(t, old); got != want {
			t.Errorf("admit, claim %v:\n got %s\nwant %s", claim, got, want)
		}
		for _, recorded := range []bool{true, false} {
			res := admission.NewResponse(v, index)
			res.Run, res.HashUS, res.RecordUS, res.TotalUS = true, 1, 2, 3
			if !recorded {
				res.Run, res.DecisionIndex, res.Error = false, nil, "decision log: closed"
			}
			b, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			var fields map[string]any // as admission request printed it
			if err := json.Unmarshal(b, &fields); err != nil {
				t.Fatal(err)
			}
			if got, want := printed(t, res, true), encodeAsBefore(t, fields); got != want {
				t.Errorf("admission request, claim %v, recorded %v:\n got %s\nwant %s", claim, recorded, got, want)
			}
		}
	}
}
