// Package policy is a runner's admission policy as code: rules in CEL
// (cel.dev/cel-go) that may refuse a dispatch every built-in check
// admitted, never admit one a built-in check refused (package verify
// runs them last, and only they can add a refusal). A policy file is
// JSON:
//
//	{"rules": [
//	  {"id": "policy-prod-provenance",
//	   "reason": "production agents are built by our CI",
//	   "refuse": "instruction.stream.startsWith('prod/') && !has(agent.provenance)"}
//	]}
//
// Each rule's id matches ^policy-[a-z0-9-]{1,56}$ and is unique, its
// reason is at most 512 bytes, and its refuse expression (at most 4 KiB)
// is CEL of type bool (or dyn, a bool when evaluated) over the Input
// below; at most 64 rules. A rule
// whose expression is true refuses, with its id and reason; one whose
// evaluation fails (a missing field, its cost past MaxCost, a value
// that is not a bool) refuses too, saying why: a policy fails closed.
//
// The input, one variable each:
//
//	instruction  map: id, stream, machine, transport (strings), issued_at, not_before,
//	             expires (timestamps), agent and engine (maps: name, digest;
//	             engine absent when the instruction names none)
//	signer       string: the key id that signed the instruction ("" when unsigned)
//	machine      string: this runner's machine name
//	time         timestamp: the instant the admission judges at
//	agent        map: the agent's pin in force: artifact, version, digest,
//	             platform (strings), expires (timestamp), build (map: go_version,
//	             path, module, vcs_revision, vcs_modified), provenance (map:
//	             builder, builder_key, issuer, identity (keyless; else ""),
//	             repository, commit; absent without one); absent
//	             when no pin stands
//	engine       map: the engine's pin in force, as agent; absent when none
package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"cel.dev/cel-go/cel"
)

// Bounds of a policy.
const (
	MaxFileSize   = 256 << 10
	MaxRules      = 64
	MaxReason     = 512
	MaxExpression = 4096
	// MaxCost bounds one rule's evaluation (cel-go's cost units, about
	// one per operation and per element a comprehension visits).
	MaxCost = 100_000
)

// ErrPolicy is wrapped by every error of Parse: a policy file that does
// not compile is bad input, never a policy that admits.
var ErrPolicy = errors.New("admission policy")

var idRe = regexp.MustCompile(`^policy-[a-z0-9-]{1,56}$`)

// Rule is one compiled rule.
type Rule struct {
	ID, Reason string
	prg        cel.Program
}

// Policy is a compiled policy, safe for concurrent use.
type Policy struct {
	Rules []Rule
}

// file is a policy file as JSON.
type file struct {
	Rules []struct {
		ID     string `json:"id"`
		Reason string `json:"reason"`
		Refuse string `json:"refuse"`
	} `json:"rules"`
}

// env is the CEL environment of the Input's variables.
func env() (*cel.Env, error) {
	m := cel.MapType(cel.StringType, cel.DynType)
	return cel.NewEnv(
		cel.Variable("instruction", m), cel.Variable("signer", cel.StringType), cel.Variable("machine", cel.StringType),
		cel.Variable("time", cel.TimestampType), cel.Variable("agent", m), cel.Variable("engine", m),
	)
}

// Parse compiles a policy file. Errors wrap ErrPolicy and name the rule
// (by its position and id) and what is wrong: the JSON (strict: no
// unknown field), a bound, an id, or a CEL expression that does not
// compile or is not of type bool.
func Parse(data []byte) (*Policy, error) {
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrPolicy, len(data), MaxFileSize)
	}
	var f file
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil || dec.More() {
		return nil, fmt.Errorf("%w: not a policy file (JSON: {\"rules\": [{\"id\", \"reason\", \"refuse\"}]}): %v", ErrPolicy, err)
	}
	if len(f.Rules) == 0 || len(f.Rules) > MaxRules {
		return nil, fmt.Errorf("%w: %d rules, 1 to %d", ErrPolicy, len(f.Rules), MaxRules)
	}
	e, err := env()
	if err != nil {
		return nil, err
	}
	p := &Policy{}
	seen := map[string]bool{}
	for i, r := range f.Rules {
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%w: rule %d (%q): %s", ErrPolicy, i+1, r.ID, fmt.Sprintf(format, args...))
		}
		switch {
		case !idRe.MatchString(r.ID):
			return nil, bad("id: policy- and 1 to 56 of a-z, 0-9, '-'")
		case seen[r.ID]:
			return nil, bad("id: repeated")
		case r.Reason == "" || len(r.Reason) > MaxReason:
			return nil, bad("reason: 1 to %d bytes", MaxReason)
		case r.Refuse == "" || len(r.Refuse) > MaxExpression:
			return nil, bad("refuse: 1 to %d bytes of CEL", MaxExpression)
		}
		seen[r.ID] = true
		ast, iss := e.Compile(r.Refuse)
		if iss.Err() != nil {
			return nil, bad("refuse: %v", iss.Err())
		}
		if t := ast.OutputType(); t != cel.BoolType && t != cel.DynType {
			return nil, bad("refuse: of type %v, must be bool", t)
		}
		prg, err := e.Program(ast, cel.CostLimit(MaxCost), cel.EvalOptions(cel.OptOptimize))
		if err != nil {
			return nil, bad("refuse: %v", err)
		}
		p.Rules = append(p.Rules, Rule{ID: r.ID, Reason: r.Reason, prg: prg})
	}
	return p, nil
}

// Refusal is a rule's refusal: its id and why (its reason, or why it
// could not be evaluated).
type Refusal struct {
	Rule, Reason string
}

// Judge runs every rule on in, in order, and returns the first refusal
// (nil when none refuses). A rule that cannot be evaluated refuses.
func (p *Policy) Judge(in Input) *Refusal {
	vars := in.vars()
	for _, r := range p.Rules {
		out, _, err := r.prg.Eval(vars)
		if err != nil {
			return &Refusal{Rule: r.ID, Reason: fmt.Sprintf("the rule could not be evaluated, so it refuses: %v", err)}
		}
		if b, ok := out.Value().(bool); !ok {
			return &Refusal{Rule: r.ID, Reason: fmt.Sprintf("the rule evaluated to %v, not a bool, so it refuses", out.Value())}
		} else if b {
			return &Refusal{Rule: r.ID, Reason: r.Reason}
		}
	}
	return nil
}
