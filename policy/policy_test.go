package policy

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/schemas"
)

func input() Input {
	now := time.Unix(1_800_000_000, 0)
	return Input{
		Instruction: &schemas.Instruction{ID: strings.Repeat("a", 32), Stream: "prod/web", Machine: "runner-1", Transport: "ssh",
			Agent: schemas.ArtifactRef{Name: "agent"}, IssuedAt: now.Unix() - 60, NotBefore: now.Unix() - 60, Expires: now.Unix() + 3600},
		Signer: strings.Repeat("b", 64), Machine: "runner-1", Time: now,
		Agent: &schemas.Pin{Artifact: "agent", Version: "v1.4.2", Digest: "sha256:" + strings.Repeat("c", 64), Platform: "linux/amd64",
			Expires: now.Unix() + 86400, Build: &schemas.Build{GoVersion: "go1.26.8", Path: "example.com/agent", Revision: strings.Repeat("d", 40)}},
	}
}

func rule(refuse string) string {
	return `{"rules": [{"id": "policy-test", "reason": "the test's rule", "refuse": ` + jsonString(refuse) + `}]}`
}

func jsonString(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// TestJudge: a rule refuses when its expression is true, with its id and
// reason; one that cannot be evaluated refuses, saying why; none refuses
// otherwise. Every variable of the input is reachable.
func TestJudge(t *testing.T) {
	withProv := input()
	withProv.Agent.Provenance = &schemas.Provenance{Builder: "https://ci.example/b", Commit: strings.Repeat("d", 40)}
	for _, c := range []struct {
		name, refuse string
		in           Input
		refused      bool
		reason       string
	}{
		{"prod needs provenance, none", "instruction.stream.startsWith('prod/') && !has(agent.provenance)", input(), true, "the test's rule"},
		{"prod needs provenance, has it", "instruction.stream.startsWith('prod/') && !has(agent.provenance)", withProv, false, ""},
		{"the builder", "has(agent.provenance) && agent.provenance.builder != 'https://ci.example/b'", withProv, false, ""},
		{"the machine and signer", "machine != instruction.machine || size(signer) != 64", input(), false, ""},
		{"night hours", "time.getHours('UTC') < 6", input(), false, ""},
		{"the pin's version", "agent.version == 'v1.4.2'", input(), true, "the test's rule"},
		{"the build", "agent.build.vcs_modified", input(), false, ""},
		{"an expiry within a day", "agent.expires - time < duration('24h')", input(), false, ""},
		{"no engine", "has(engine.version)", input(), false, ""},
		{"a missing field", "agent.no_such_field == 'x'", input(), true, "could not be evaluated"},
		{"not a bool when evaluated", "instruction.stream", input(), true, "not a bool"},
		{"no pin at all", "agent.version == 'v1'", Input{Time: time.Unix(1, 0)}, true, "could not be evaluated"},
		{"too costly", "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, a+b+c+d+e > 0)))))",
			input(), true, "could not be evaluated"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := Parse([]byte(rule(c.refuse)))
			if err != nil {
				t.Fatal(err)
			}
			r := p.Judge(c.in)
			if (r != nil) != c.refused || (r != nil && (r.Rule != "policy-test" || !strings.Contains(r.Reason, c.reason))) {
				t.Fatalf("refusal %+v, want refused %v (%q)", r, c.refused, c.reason)
			}
		})
	}
}

// TestParse: a policy that does not compile is refused, naming the rule
// and what is wrong.
func TestParse(t *testing.T) {
	for _, c := range []struct{ name, file, want string }{
		{"not JSON", `rules: []`, "not a policy file"},
		{"an unknown field", `{"rules": [], "extra": 1}`, "not a policy file"},
		{"no rules", `{"rules": []}`, "0 rules"},
		{"a bad id", `{"rules": [{"id": "prod", "reason": "r", "refuse": "true"}]}`, `rule 1 ("prod"): id`},
		{"a repeated id", `{"rules": [{"id": "policy-a", "reason": "r", "refuse": "true"}, {"id": "policy-a", "reason": "r", "refuse": "false"}]}`, "repeated"},
		{"no reason", `{"rules": [{"id": "policy-a", "reason": "", "refuse": "true"}]}`, "reason"},
		{"not CEL", rule("instruction.stream ==="), "refuse: ERROR"},
		{"not bool", rule("size(signer)"), "must be bool"},
		{"an unknown variable", rule("secrets.key == 'x'"), "undeclared reference"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.file))
			if !errors.Is(err, ErrPolicy) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%v, want %q", err, c.want)
			}
		})
	}
}

// FuzzJudge: any instruction the input builder is given, judged by a
// policy that reads every field, refuses or not, never panics.
func FuzzJudge(f *testing.F) {
	p, err := Parse([]byte(rule("instruction.stream.startsWith(machine) || instruction.agent.name == agent.artifact || instruction.id.matches('^[a-f]+$') || signer.endsWith(instruction.transport)")))
	if err != nil {
		f.Fatal(err)
	}
	f.Add("prod/web", "runner-1", "agent", "ssh", int64(0), true)
	f.Fuzz(func(t *testing.T, stream, machine, agent, transport string, at int64, pinned bool) {
		in := input()
		in.Instruction.Stream, in.Instruction.Machine, in.Instruction.Agent.Name, in.Instruction.Transport = stream, machine, agent, transport
		in.Instruction.IssuedAt, in.Machine = at, machine
		if !pinned {
			in.Agent = nil
		}
		p.Judge(in)
	})
}

// FuzzParse: any bytes as a policy file compile or are refused with
// ErrPolicy, never a panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte(rule("true")))
	f.Add([]byte(`{"rules": [{"id": "policy-x", "reason": "r", "refuse": "agent.x"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := Parse(data); err != nil && !errors.Is(err, ErrPolicy) {
			t.Fatalf("%v does not wrap ErrPolicy", err)
		}
	})
}
