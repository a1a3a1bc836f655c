package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/cliflags"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// listFlags are the repeatable flags whose help documents a
// comma-separated list; their commands split the value themselves
// (cliflags.CommaList; admit and admission serve share the runner flags). Every
// other repeatable flag takes its value whole.
var listFlags = map[string]bool{"delegate --action": true, "admit --refuse": true, "admission serve --refuse": true, "monitor --alert": true}

// sliceFlags returns "path --name" for every repeatable flag of every
// command under cmds.
func sliceFlags(cmds []*cli.Command, prefix string) map[string]*cli.StringSliceFlag {
	out := map[string]*cli.StringSliceFlag{}
	for _, c := range cmds {
		path := strings.TrimSpace(prefix + " " + c.Name)
		for _, f := range c.Flags {
			if sf, ok := f.(*cli.StringSliceFlag); ok {
				out[path+" --"+sf.Name] = sf
			}
		}
		for k, v := range sliceFlags(c.Subcommands, path) {
			out[k] = v
		}
	}
	return out
}

// commandAt returns the command at path ("ledger append").
func commandAt(cmds []*cli.Command, path []string) *cli.Command {
	for _, c := range cmds {
		if c.Name == path[0] {
			if len(path) == 1 {
				return c
			}
			return commandAt(c.Subcommands, path[1:])
		}
	}
	return nil
}

// TestOneValuePerFlag gives every repeatable flag of every command a value
// holding commas and spaces, twice, and checks the command receives
// exactly the two values typed: urfave/cli neither splits nor trims them.
// The two flags documented as lists split explicitly, and only they say
// "comma-separated" in their help.
func TestOneValuePerFlag(t *testing.T) {
	flags := sliceFlags(newApp(nil, io.Discard, io.Discard).Commands, "")
	if len(flags) < 10 {
		t.Fatalf("found %d repeatable flags; the walk is broken", len(flags))
	}
	for key, sf := range flags {
		t.Run(key, func(t *testing.T) {
			path, name, _ := strings.Cut(key, " --")
			app := newApp(strings.NewReader(""), io.Discard, io.Discard)
			cmd := commandAt(app.Commands, strings.Fields(path))
			var got []string
			cmd.Action = func(c *cli.Context) error { got = c.StringSlice(name); return nil }
			first, second := "a,b c, d ", " e"
			args := append(append([]string{"writ"}, strings.Fields(path)...), "--"+name, first, "--"+name+"="+second)
			if err := app.Run(args); err != nil {
				t.Fatalf("%v: %v", args, err)
			}
			if want := []string{first, second}; !slices.Equal(got, want) {
				t.Fatalf("--%s got %q, want %q: one flag value is one value", name, got, want)
			}
			documented := strings.Contains(sf.Usage, "comma-separated")
			if documented != listFlags[key] {
				t.Fatalf("%s: help says comma-separated: %v, documented list: %v (%q)", key, documented, listFlags[key], sf.Usage)
			}
			if listFlags[key] {
				if split := cliflags.CommaList(got); !slices.Equal(split, []string{"a", "b c", "d", "e"}) {
					t.Fatalf("CommaList(%q) = %q", got, split)
				}
			}
		})
	}
	for key := range listFlags {
		if flags[key] == nil {
			t.Errorf("documented list flag %s no longer exists", key)
		}
	}
}

// TestSigningRefusesWhatReadersRefuse runs the signing commands with a
// value holding a comma or a space: a pattern, machine name or action the
// record's field rule refuses (the rule every reader applies) is refused
// before anything is signed, naming the flag and the field; a value the
// rule accepts (an audience may hold a comma) is signed as one value.
func TestSigningRefusesWhatReadersRefuse(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("WRIT_PASSPHRASE", "pw")
	in := func(name string) string { return filepath.Join(dir, name) }
	for _, k := range []string{"root", "op"} {
		if code, _, errs := runWrit("key", "generate", "--out", in(k), "--work-factor", "10"); code != 0 {
			t.Fatalf("key generate: %d %s", code, errs)
		}
	}
	del := []string{"delegate", "--key", in("root.key"), "--to", in("op.pub"), "--not-after", "720h"}
	cases := []struct {
		name   string
		args   []string
		exit   int
		stderr string // the exact error line, or "" when signed
	}{
		{"machine with a comma", append(del, "--action", "instruct", "--stream", "deploy", "--machine", "runner-1,prod-db"), 2,
			`writ: error: --machine: delegation.machines: pattern 0 "runner-1,prod-db": only letters, digits, the name's punctuation and '*' are allowed`},
		{"machine with a space", append(del, "--action", "instruct", "--stream", "deploy", "--machine", " runner-1"), 2,
			`writ: error: --machine: delegation.machines: pattern 0 " runner-1": only letters, digits, the name's punctuation and '*' are allowed`},
		{"stream with a comma", append(del, "--action", "instruct", "--stream", "deploy,prod", "--machine", "runner-1"), 2,
			`writ: error: --stream: delegation.streams: pattern 0 "deploy,prod": only letters, digits, the name's punctuation and '*' are allowed`},
		{"artifact with a comma", append(del, "--action", "pin", "--artifact", "agent,evil"), 2,
			`writ: error: --artifact: delegation.artifacts: pattern 0 "agent,evil": only letters, digits, the name's punctuation and '*' are allowed`},
		{"action list with an empty part", append(del, "--action", "instruct,,pin", "--stream", "deploy", "--machine", "runner-1", "--artifact", "agent"), 2,
			`writ: error: --action: delegation.actions: unknown action "" (known: [delegate instruct issuer pin quarantine revoke])`},
		{"action list", append(del, "--action", "pin, instruct", "--stream", "deploy", "--machine", "runner-1", "--artifact", "agent"), 0, ""},
		{"quarantine machine with a comma", []string{"quarantine", "--key", in("root.key"), "--machine", "runner-1,prod-db"}, 2,
			`writ: error: --machine: quarantine.machine: "runner-1,prod-db" is not a machine name`},
		{"instruction machine with a comma", []string{"instruct", "--unsigned", "--stream", "deploy", "--machine", "runner-1,prod-db", "--agent", "agent"}, 2,
			`writ: error: --machine: instruction.machine: "runner-1,prod-db" is not a machine name`},
		{"audience with a comma", []string{"issuer", "--key", in("root.key"), "--issuer", "https://id.example", "--jwks-uri", "https://id.example/jwks", "--audience", "https://api.example/a,b"}, 0, ""},
		{"root key file list", []string{"root", "sign", "--key", in("root.key"), "--pub", in("root.pub") + "," + in("op.pub"), "--expires", "8760h"}, 2,
			"writ: error: open " + in("root.pub") + "," + in("op.pub") + ": no such file or directory"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := in(strings.ReplaceAll(tc.name, " ", "-") + ".cose")
			code, _, errs := runWrit(append(tc.args, "--out", out)...)
			if code != tc.exit || strings.TrimSpace(errs) != tc.stderr {
				t.Fatalf("case %d: exit %d, stderr %q; want exit %d, %q", i, code, errs, tc.exit, tc.stderr)
			}
			if _, err := os.Stat(out); (err == nil) != (tc.exit == 0) {
				t.Fatalf("a refused command wrote %s, or a signed one did not (%v)", out, err)
			}
		})
	}
	checkSigned(t, in("action-list.cose"), func(r schemas.Record) bool {
		return slices.Equal(r.(*schemas.Delegation).Actions, []schemas.Action{"instruct", "pin"})
	})
	checkSigned(t, in("audience-with-a-comma.cose"), func(r schemas.Record) bool {
		return slices.Equal(r.(*schemas.Issuer).Audiences, []string{"https://api.example/a,b"})
	})
}

// runWrit runs one writ command line in this process.
func runWrit(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(append([]string{"writ"}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// checkSigned decodes the signed record at path and applies ok to it.
func checkSigned(t *testing.T, path string, ok func(schemas.Record) bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	env, err := sign.ParseEnvelope(data)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := schemas.Decode(env.Kind, env.Payload)
	if err != nil {
		t.Fatal(err)
	}
	if !ok(rec) {
		t.Fatalf("%s holds %+v", path, rec)
	}
}
