package schemas

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// cddlMembers reads the map rules of writ.cddl: rule name → member key →
// optional. It understands the subset writ.cddl is written in: one member
// per line, `? "key": type,`.
func cddlMembers(t *testing.T) map[string]map[string]bool {
	t.Helper()
	src, err := os.ReadFile("writ.cddl")
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string]map[string]bool{}
	start := regexp.MustCompile(`^([a-z-]+) = \{$`)
	member := regexp.MustCompile(`^\s+(\? )?"([a-z_]+)": .+,(\s+;.*)?$`)
	var cur map[string]bool
	for i, line := range strings.Split(string(src), "\n") {
		switch {
		case start.MatchString(line):
			cur = map[string]bool{}
			rules[start.FindStringSubmatch(line)[1]] = cur
		case line == "}":
			cur = nil
		case cur != nil:
			m := member.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("writ.cddl:%d: member line not understood: %q", i+1, line)
			}
			cur[m[2]] = m[1] != ""
		}
	}
	return rules
}

// goMembers reads a struct's cbor tags: key → optional (omitempty).
func goMembers(v any) map[string]bool {
	out := map[string]bool{}
	rt := reflect.TypeOf(v).Elem()
	for i := range rt.NumField() {
		tag := rt.Field(i).Tag.Get("cbor")
		name, opts, _ := strings.Cut(tag, ",")
		out[name] = slices.Contains(strings.Split(opts, ","), "omitempty")
	}
	return out
}

// TestCDDLMatchesGoTypes: every CDDL map rule and its Go type have the
// same member keys, and a member is optional in CDDL exactly when the Go
// field is omitempty.
func TestCDDLMatchesGoTypes(t *testing.T) {
	types := map[string]any{
		"root": &Root{}, "delegation": &Delegation{}, "pin": &Pin{}, "build": &Build{},
		"instruction": &Instruction{}, "artifact-ref": &ArtifactRef{}, "decision": &Decision{}, "claim": &Claim{},
		"digest-check": &DigestCheck{}, "provenance": &Provenance{}, "builder": &Builder{}, "revocation": &Revocation{}, "issuer": &Issuer{}, "quarantine": &Quarantine{}, "downgrade": &Downgrade{}, "provision": &Provision{},
	}
	rules := cddlMembers(t)
	for name := range rules {
		if _, ok := types[name]; !ok {
			t.Errorf("CDDL rule %q has no Go type in this test", name)
		}
	}
	for name, v := range types {
		want, ok := rules[name]
		if !ok {
			t.Errorf("Go type %T has no CDDL rule %q", v, name)
			continue
		}
		if got := goMembers(v); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Go members %v, CDDL members %v", name, got, want)
		}
	}
	for _, k := range Kinds {
		if _, ok := rules[string(k)]; !ok {
			t.Errorf("record kind %s has no CDDL rule", k)
		}
	}
}
