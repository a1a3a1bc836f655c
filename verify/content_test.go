package verify_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify"
)

const workspace = "/ws/control"

// Outcomes of a content case.
const (
	pass    = "pass"
	refDest = "refused, normalized destination"
	refRaw  = "refused on the raw token"
	refR30  = "refused, workspace path"
)

// contentCases are the remote-order rules (R30, R37) case by case: a
// brief sent over ssh with .provision/Plan.md shipped, the runner knowing
// the control plane's workspace /ws/control unless noWorkspace is set.
var contentCases = []struct {
	name        string
	brief       string
	outcome     string
	msg         string // a part of the reason, exact
	local       bool   // transport local
	noWorkspace bool
}{
	// R37: citations that normalize, shipped or not.
	{"bare form, shipped", ".provision/Plan.md", pass, "", false, false},
	{"bare form, not shipped", ".provision/Other.md", refDest, "line 1 cites .provision/Other.md, which this dispatch does not provision: ship it with --provision <source>=.provision/Other.md", false, false},
	{"absolute, shipped", "/repo/.provision/Plan.md", pass, "", false, false},
	{"absolute", "/repo/.provision/Other.md", refDest, "cites .provision/Other.md,", false, false},
	{"relative", "docs/.provision/Other.md", refDest, "cites .provision/Other.md,", false, false},
	{"home-relative", "~/.provision/Other.md", refDest, "cites .provision/Other.md,", false, false},
	{"variable-rooted", "$HOME/.provision/Other.md", refDest, "cites .provision/Other.md,", false, false},
	{"placeholder-rooted", "<ws>/.provision/Other.md", refDest, "cites .provision/Other.md,", false, false},
	{"dotted name", ".provision/my-plan.v2.md", refDest, "--provision <source>=.provision/my-plan.v2.md", false, false},
	{"underscore name", ".provision/plan_final.MD", refDest, "--provision <source>=.provision/plan_final.MD", false, false},
	{"two extensions", ".provision/notes.tar.gz", refDest, "--provision <source>=.provision/notes.tar.gz", false, false},
	{"non-ASCII name", ".provision/Plän.md", refDest, "--provision <source>=.provision/Plän.md", false, false},
	{"marker after an x.provision directory", "vendor.provision/.provision/Other.md", refDest, "cites .provision/Other.md,", false, false},
	{"assignment not at the marker", "a=b/.provision/Other.md", refDest, "cites .provision/Other.md,", false, false},
	{"second line", "read this\nthen .provision/Other.md please", refDest, "line 2 cites .provision/Other.md,", false, false},
	{"CRLF lines", "one\r\ntwo\r\n.provision/Other.md\r\n", refDest, "line 3 cites .provision/Other.md,", false, false},
	{"tab separated", "see\t.provision/Other.md\tnow", refDest, "line 1 cites .provision/Other.md,", false, false},
	{"shipped and not", ".provision/Plan.md and .provision/Other.md", refDest, "line 1 cites .provision/Other.md,", false, false},
	{"many missing, counted", ".provision/a.md .provision/b.md .provision/c.md .provision/d.md .provision/e.md .provision/f.md .provision/g.md", refDest, "line 1 cites .provision/e.md, which this dispatch does not provision: ship it with --provision <source>=.provision/e.md; and 2 more", false, false},
	// R37: citations that cannot be normalized confidently.
	{"trailing ellipsis", ".provision/Other.md…", refRaw, `line 1 cites ".provision/Other.md…", which is not a plain .provision/<name>.<ext>: write the path plainly, or ship the file and cite it as .provision/<name>.<ext>`, false, false},
	{"trailing comma", ".provision/Other.md,", refRaw, `cites ".provision/Other.md,"`, false, false},
	{"trailing period, shipped", ".provision/Plan.md.", refRaw, `cites ".provision/Plan.md."`, false, false},
	{"trailing colon", ".provision/Plan.md:", refRaw, `cites ".provision/Plan.md:"`, false, false},
	{"code markup", "`.provision/Plan.md`", refRaw, "cites \"`.provision/Plan.md`\"", false, false},
	{"bold markup", "**.provision/Other.md**", refRaw, `cites "**.provision/Other.md**"`, false, false},
	{"glob after the name", ".provision/Other.md*", refRaw, `cites ".provision/Other.md*"`, false, false},
	{"parenthesized", "(.provision/Other.md)", refRaw, `cites "(.provision/Other.md)"`, false, false},
	{"quoted", `".provision/Plan.md"`, refRaw, `cites "\".provision/Plan.md\""`, false, false},
	{"nested file", ".provision/canon/Plan.md", refRaw, `cites ".provision/canon/Plan.md"`, false, false},
	{"zero-width inside the name (shown escaped)", ".provision/Pl\u200ban.md", refRaw, `cites ".provision/Pl\u200ban.md"`, false, false},
	{"scheme after the marker", ".provision/Other.md://x", refRaw, `cites ".provision/Other.md://x"`, false, false},
	{"raw on line 4", "a\nb\nc\nsee (.provision/Other.md)", refRaw, `line 4 cites "(.provision/Other.md)"`, false, false},
	// R37: a spelled name with anything after it, extension or not.
	{"name, then an ellipsis", ".provision/Plan…", refRaw, `cites ".provision/Plan…"`, false, false},
	{"name, then a closing tag", ".provision/Plan</code>", refRaw, `cites ".provision/Plan</code>"`, false, false},
	{"name, then a glob and an extension", ".provision/PLAN*.md", refRaw, `cites ".provision/PLAN*.md"`, false, false},
	{"name, then a period", "read .provision/PLAN.", refRaw, `cites ".provision/PLAN."`, false, false},
	{"name, then a comma", ".provision/PLAN,", refRaw, `cites ".provision/PLAN,"`, false, false},
	{"name, then a zero-width space", ".provision/PLAN\u200b", refRaw, `cites ".provision/PLAN\u200b"`, false, false},
	{"nested, no extension", ".provision/canon/Plan", refRaw, `cites ".provision/canon/Plan"`, false, false},
	{"brace expansion", "read .provision/{plan,spec}.md", refRaw, `cites ".provision/{plan,spec}.md"`, false, false},
	{"parenthesized name", ".provision/(Plan).md", refRaw, `cites ".provision/(Plan).md"`, false, false},
	{"a URL earlier in the token, then a citation", `{"ref":"https://wiki/x","plan":".provision/Other.md"}`, refRaw, `cites "{\"ref\":\"https://wiki/x\",\"plan\":\".provision/Other.md\"}"`, false, false},
	{"markdown link to a citation", "[https://wiki/Plan](.provision/Other.md)", refRaw, `cites "[https://wiki/Plan](.provision/Other.md)"`, false, false},
	{"name, then a quote", "'.provision/Plan'", refRaw, `cites "'.provision/Plan'"`, false, false},
	// R37: not citations, by design.
	{"https URL", "https://host/.provision/Other.md", pass, "", false, false},
	{"http URL", "http://host/.provision/Other.md", pass, "", false, false},
	{"scheme with plus", "git+ssh://host/r/.provision/Other.md", pass, "", false, false},
	{"x.provision directory", "vendor.provision/config.md", pass, "", false, false},
	{"..provision directory", "..provision/Plan.md", pass, "", false, false},
	{"digit before the marker", "v2.provision/Other.md", pass, "", false, false},
	{"assignment operand", "/tmp/p.md=.provision/Other.md", pass, "", false, false},
	{"bare directory", ".provision/", pass, "", false, false},
	{"nested directory", ".provision/canon/", pass, "", false, false},
	{"deeper directory", ".provision/canon/v1.2/", pass, "", false, false},
	{"placeholder", ".provision/<document>", pass, "", false, false},
	{"placeholder with extension", ".provision/<name>.md", pass, "", false, false},
	{"extensionless", ".provision/PLAN", pass, "", false, false},
	{"extensionless with underscore", ".provision/PLAN_", pass, "", false, false},
	{"extensionless with a hyphen", ".provision/PLAN-v2", pass, "", false, false},
	{"placeholder, then text", ".provision/<document>…", pass, "", false, false},
	{"glob without a name", ".provision/*.md", pass, "", false, false},
	{"split across tokens", ".provision/ Other.md", pass, "", false, false},
	{"other case", ".Provision/Other.md", pass, "", false, false},
	{"upper case", ".PROVISION/Other.md", pass, "", false, false},
	{"division slash", ".provision\u2215Other.md", pass, "", false, false},
	{"fullwidth slash", ".provision\uff0fOther.md", pass, "", false, false},
	{"HTML-encoded slash", ".provision&#47;Other.md", pass, "", false, false},
	{"backslash", `.provision\Other.md`, pass, "", false, false},
	{"zero-width inside the marker", ".pro\u200bvision/Other.md", pass, "", false, false},
	{"zero-width before the slash", ".provision\u200b/Other.md", pass, "", false, false},
	{"no marker", "read Plan.md and go", pass, "", false, false},
	{"local dispatch", ".provision/Other.md /ws/control/x", pass, "", true, false},
	// R30: the control plane's workspace.
	{"path beneath the workspace", "edit /ws/control/repo/main.go", refR30, `line 1: "/ws/control/repo/main.go"`, false, false},
	{"the workspace itself", "cd /ws/control", refR30, `line 1: "/ws/control"`, false, false},
	{"workspace with trailing slash", "/ws/control/", refR30, `"/ws/control/"`, false, false},
	{"trailing punctuation", "see /ws/control/notes.md, then", refR30, `"/ws/control/notes.md,"`, false, false},
	{"quoted workspace path", "`/ws/control/x`", refR30, "\"`/ws/control/x`\"", false, false},
	{"in parentheses", "(/ws/control/x)", refR30, `"(/ws/control/x)"`, false, false},
	{"workspace path citing a shipped file", "/ws/control/.provision/Plan.md", refR30, `"/ws/control/.provision/Plan.md"`, false, false},
	{"line 2", "ok\nrm -rf /ws/control/tmp", refR30, `line 2: "/ws/control/tmp"`, false, false},
	{"after a flag's '='", "run --config=/ws/control/app.yaml", refR30, `"--config=/ws/control/app.yaml"`, false, false},
	{"doubled slash", "cat /ws//control/secrets.env", refR30, `"/ws//control/secrets.env"`, false, false},
	{"dot segment", "cat /ws/./control/x", refR30, `"/ws/./control/x"`, false, false},
	{"dot-dot segment", "cat /tmp/../ws/control/x", refR30, `"/tmp/../ws/control/x"`, false, false},
	{"file URL", "open file:///ws/control/x", refR30, `"file:///ws/control/x"`, false, false},
	{"after a colon", "PATH=/usr/bin:/ws/control/bin", refR30, `"PATH=/usr/bin:/ws/control/bin"`, false, false},
	{"a URL whose path looks alike", "https://host/ws/control/x", pass, "", false, false},
	{"in curly quotes", "“/ws/control/secrets.env”", refR30, `"“/ws/control/secrets.env”"`, false, false},
	{"after a zero-width space", "\u200b/ws/control/x", refR30, `line 1: "\u200b/ws/control/x"`, false, false},
	{"an ellipsis right after the root", "/ws/control…", refR30, `"/ws/control…"`, false, false},
	{"in full-width parentheses", "（/ws/control/x）", refR30, `"（/ws/control/x）"`, false, false},
	{"a file URL with a host", "file://localhost/ws/control/x", refR30, `"file://localhost/ws/control/x"`, false, false},
	{"sibling directory", "/ws/controller/x", pass, "", false, false},
	{"relative look-alike", "ws/control/x", pass, "", false, false},
	{"runner's own path", "/srv/runner/x", pass, "", false, false},
	{"workspace unknown to the runner", "/ws/control/x", pass, "", false, true},
}

// TestContentRules: each case through a real admission (enforce), with
// the exact verdict and the reason's text.
func TestContentRules(t *testing.T) {
	if len(contentCases) < 60 {
		t.Fatalf("%d cases; the rules need at least 60", len(contentCases))
	}
	w := newWorld(t)
	w.pin(t, agentPath, "agent", "1.0.0")
	prov := t.TempDir()
	body := []byte("# the plan\n")
	if err := os.WriteFile(filepath.Join(prov, "Plan.md"), body, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range contentCases {
		t.Run(tc.name, func(t *testing.T) {
			i := instr(func(i *schemas.Instruction) {
				i.Brief = tc.brief
				i.Provision = []schemas.Provision{{Dest: ".provision/Plan.md", Digest: schemas.SHA256Digest(body), Size: uint64(len(body))}}
				if tc.local {
					i.Transport = "local"
				}
			})
			c := cfg(verify.ModeEnforce)
			if !tc.noWorkspace {
				c.ControlWorkspace = workspace
			}
			d := verify.Dispatch{Raw: testkit.Seal(t, i, w.op), AgentBinary: agentPath, ProvisionDir: prov}
			v := verify.Admit(w.st, c, d)
			want := map[string]string{pass: rules.OK, refDest: rules.ProvisionCitation, refRaw: rules.ProvisionCitation, refR30: rules.WorkspacePath}[tc.outcome]
			if v.Rule != want {
				t.Fatalf("%s / %s (%s), want %s", v.Verdict, v.Rule, v.Reason, tc.outcome)
			}
			if tc.outcome != pass && (v.Verdict != verify.Refused || !strings.Contains(v.Reason, tc.msg)) {
				t.Fatalf("%s: reason %q does not contain %q", v.Verdict, v.Reason, tc.msg)
			}
			checked := contains(v.Passed, "brief-citations-shipped") || v.Rule == rules.ProvisionCitation
			if tc.local == checked {
				t.Fatalf("R37 ran on a %s dispatch: %v (passed %v)", map[bool]string{true: "local", false: "remote"}[tc.local], checked, v.Passed)
			}
		})
	}
}

// TestContentRulesEveryMode: both content rules refuse in off, warn and
// enforce.
func TestContentRulesEveryMode(t *testing.T) {
	w := newWorld(t)
	w.pin(t, agentPath, "agent", "1.0.0")
	for _, tc := range []struct {
		brief, rule string
	}{{"/ws/control/x", rules.WorkspacePath}, {".provision/Other.md", rules.ProvisionCitation}} {
		i := instr(func(i *schemas.Instruction) { i.Brief = tc.brief })
		for n, mode := range []verify.Mode{verify.ModeOff, verify.ModeWarn, verify.ModeEnforce} {
			c := cfg(mode)
			c.ControlWorkspace = workspace
			v := verify.Admit(w.st, c, verify.Dispatch{Raw: testkit.Seal(t, i, w.op), AgentBinary: agentPath})
			if v.Rule != tc.rule || v.Verdict != refusedAll[n] || v.Class != rules.ClassContent {
				t.Fatalf("%s under %s: %s / %s (%s)", tc.brief, mode, v.Verdict, v.Rule, v.Class)
			}
		}
		assertedRule(tc.rule)
	}
}

// TestCiteKinds: the classification itself, for the documented examples.
func TestCiteKinds(t *testing.T) {
	for _, tc := range []struct{ token, kind, dest string }{
		{".provision/Plan.md", verify.CitationFile, ".provision/Plan.md"},
		{"/repo/.provision/Plan.md", verify.CitationFile, ".provision/Plan.md"},
		{"https://host/.provision/Plan.md", verify.NotCitation, ""},
		{"vendor.provision/config.md", verify.NotCitation, ""},
		{"/tmp/p.md=.provision/Plan.md", verify.NotCitation, ""},
		{".provision/Plan.md…", verify.CitationRaw, ""},
		{".provision/<document>", verify.NotCitation, ""},
	} {
		if kind, dest := verify.Cite(tc.token); kind != tc.kind || dest != tc.dest {
			t.Errorf("Cite(%q) = %s, %q; want %s, %q", tc.token, kind, dest, tc.kind, tc.dest)
		}
	}
}

// FuzzBrief: any brief tokenizes and classifies without a panic; tokens
// hold no whitespace and appear in the brief in order; a file citation's
// destination is a plain .provision/<name>.<ext> the token ends with.
func FuzzBrief(f *testing.F) {
	for _, tc := range contentCases {
		f.Add(tc.brief)
	}
	f.Fuzz(func(t *testing.T, brief string) {
		rest := brief
		for _, tok := range verify.Tokens(brief) {
			if tok.Text == "" || strings.ContainsAny(tok.Text, " \t\n\r") {
				t.Fatalf("token %q holds whitespace or is empty", tok.Text)
			}
			i := strings.Index(rest, tok.Text)
			if i < 0 {
				t.Fatalf("token %q is not in the brief after the previous one", tok.Text)
			}
			rest = rest[i+len(tok.Text):]
			kind, dest := verify.Cite(tok.Text)
			switch kind {
			case verify.CitationFile:
				if !strings.HasPrefix(dest, verify.Marker) || !strings.HasSuffix(tok.Text, dest) || strings.Contains(dest[len(verify.Marker):], "/") {
					t.Fatalf("Cite(%q) = file %q", tok.Text, dest)
				}
			case verify.CitationRaw, verify.NotCitation:
				if dest != "" {
					t.Fatalf("Cite(%q) = %s with a destination %q", tok.Text, kind, dest)
				}
				if kind == verify.CitationRaw && !strings.Contains(tok.Text, verify.Marker) {
					t.Fatalf("Cite(%q) = raw without the marker", tok.Text)
				}
			default:
				t.Fatalf("Cite(%q): kind %q", tok.Text, kind)
			}
		}
	})
}

// TestR30WorkspaceSpellings: the runner's workspace is cleaned as a brief
// path is: written with a trailing "/.", a doubled slash or a trailing
// slash, it still catches the paths beneath it.
func TestR30WorkspaceSpellings(t *testing.T) {
	w := newWorld(t)
	w.pin(t, agentPath, "agent", "1.0.0")
	i := instr(func(i *schemas.Instruction) { i.Brief = "cat /ws/control/secrets.env" })
	for _, ws := range []string{"/ws/control/.", "/ws//control", "/ws/control/", "/ws/x/../control"} {
		c := cfg(verify.ModeEnforce)
		c.ControlWorkspace = ws
		v := verify.Admit(w.st, c, verify.Dispatch{Raw: testkit.Seal(t, i, w.op), AgentBinary: agentPath})
		if v.Verdict != verify.Refused || v.Rule != rules.WorkspacePath {
			t.Errorf("workspace %q: %s / %s (%s)", ws, v.Verdict, v.Rule, v.Reason)
		}
	}
}
