package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
)

// trustEnv is a writer's ledger published on a loopback HTTP server (nginx
// when installed, else Go's file server), with the values an operator can
// assert about it and wrong ones taken from another real ledger: every
// command runs in process through run, on real Badger directories, keys
// and signatures.
type trustEnv struct {
	t          *testing.T
	dir        string // the test's directory
	writer     string // the writer's ledger directory
	pub        string // its publication
	url        string // the publication over HTTP on loopback
	vkey, root string // the writer's checkpoint verifier key and first root digest
	otherVKey  string // another ledger's verifier key
	otherRoot  string // another ledger's first root digest
	goodPolicy string // a policy file the writer's checkpoints meet
	badPolicy  string // a policy file whose quorum (one witness) they miss
	grown      int    // records appended after init

	// For TestTrustOnMorePaths (moreEnv).
	runner      string // a runner's ledger directory: a replica of the writer's, with a decision log
	decVKey     string // its decision log's verifier key
	admitted    int    // instructions it admitted
	otherPolicy string // a policy whose log line names another log
	witnessed   string // a policy whose quorum is a witness of the writer's log, on loopback
}

// newTrustEnv makes the writer's ledger (a root and one delegation),
// another ledger, a witness key and both policies, and publishes.
func newTrustEnv(t *testing.T) *trustEnv {
	t.Setenv("WRIT_PASSPHRASE", "trust-paths")
	t.Setenv("WRIT_PROGRESS", "0")
	e := &trustEnv{t: t, dir: t.TempDir()}
	e.writer, e.pub = e.path("W"), e.path("pub")
	e.vkey, e.root = e.newLedger("root", e.writer)
	e.otherVKey, e.otherRoot = e.newLedger("other", e.path("X"))
	e.must("key", "generate", "--out", e.path("op"), "--work-factor", "10")
	w := e.json(e.must("--json", "witness", "key", "generate", "--name", "witness.example/w1", "--out", e.path("w1"), "--work-factor", "10"))
	e.goodPolicy = e.file("good.policy", "log "+e.vkey+"\nquorum none\n")
	e.badPolicy = e.file("bad.policy", fmt.Sprintf("log %s\nwitness w1 %s\nquorum w1\n", e.vkey, w["vkey"]))
	e.grow()
	e.serve()
	return e
}

func (e *trustEnv) path(name string) string { return filepath.Join(e.dir, name) }

func (e *trustEnv) file(name, content string) string {
	p := e.path(name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// newLedger makes a root key, a root and a ledger at dir, returning the
// ledger's verifier key and the root's digest.
func (e *trustEnv) newLedger(name, dir string) (vkey, root string) {
	e.must("key", "generate", "--out", e.path(name), "--work-factor", "10")
	e.must("root", "sign", "--key", e.path(name)+".key", "--pub", e.path(name)+".pub", "--threshold", "1", "--expires", "8760h", "--out", e.path(name)+".cose")
	out := e.json(e.must("--json", "ledger", "init", "--dir", dir, "--root", e.path(name)+".cose", "--work-factor", "10"))
	return out["vkey"].(string), out["root_digest"].(string)
}

// grow appends one delegation to the writer's ledger and publishes it.
func (e *trustEnv) grow() {
	e.must("ledger", "append", "--dir", e.writer, e.record())
	e.must("ledger", "publish", "--dir", e.writer, "--to", e.pub)
}

// record signs a new delegation (the next machine) and returns its file.
func (e *trustEnv) record() string {
	e.grown++
	d := e.path(fmt.Sprintf("d%d.cose", e.grown))
	e.must("delegate", "--key", e.path("root.key"), "--to", e.path("op.pub"), "--action", "instruct", "--stream", "s",
		"--machine", fmt.Sprintf("m%d", e.grown), "--not-after", "720h", "--out", d)
	return d
}

// refresh signs a newer checkpoint of the same tree (a second later, so
// that a replica stores it) and publishes it.
func (e *trustEnv) refresh() {
	time.Sleep(1100 * time.Millisecond)
	e.must("ledger", "checkpoint", "--dir", e.writer, "--refresh")
	e.must("ledger", "publish", "--dir", e.writer, "--to", e.pub)
}

// serve serves the publication on loopback.
func (e *trustEnv) serve() {
	if url, stop, err := testkit.StartNginx(e.pub); err == nil {
		e.url = url
		e.t.Cleanup(func() { stop() })
		return
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(e.pub)))
	e.t.Cleanup(srv.Close)
	e.url = srv.URL
}

// writ runs one writ command in process.
func (e *trustEnv) writ(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(append([]string{"writ"}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// must runs a command that must succeed and returns its stdout.
func (e *trustEnv) must(args ...string) string {
	e.t.Helper()
	code, out, errs := e.writ(args...)
	if code != 0 {
		e.t.Fatalf("writ %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

func (e *trustEnv) json(s string) map[string]any {
	e.t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(s)), &v); err != nil {
		e.t.Fatalf("not one JSON object: %v\n%s", err, s)
	}
	return v
}

// stored is what a refused run must leave as it was: the signed
// checkpoints (with their cosignatures) of the ledger directory dir's
// logs (authority and decisions, or those named), or "absent" for each
// it does not have. A log that cannot be read fails the test: a state
// that is an error message would compare equal whatever happened.
func (e *trustEnv) stored(dir string, logs ...string) string {
	e.t.Helper()
	if len(logs) == 0 {
		logs = []string{"authority", "decisions"}
	}
	var b strings.Builder
	for _, log := range logs {
		if _, err := os.Stat(filepath.Join(dir, log)); err != nil {
			b.WriteString(log + ": absent\n")
			continue
		}
		code, out, errs := e.writ("ledger", "checkpoint", "--dir", dir, "--log", log)
		if code != 0 {
			e.t.Fatalf("reading the %s log of %s: exit %d\n%s", log, dir, code, errs)
		}
		b.WriteString(log + ": " + out)
	}
	return b.String()
}

// fileState is a file's content, or "absent".
func fileState(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "absent"
	}
	return string(b)
}

// assertion is one flag an operator gives, with a right and a wrong value
// and the rule a wrong value is refused under.
type assertion struct {
	flag, right, wrong, rule string
}

// refuses runs args with the wrong value: exit 1, the rule in the JSON
// error, the flag named, and nothing stored changed (as state reports it).
func (e *trustEnv) refuses(label string, args []string, a assertion, state func() string) {
	e.t.Helper()
	before := state()
	code, out, errs := e.writ(append(append([]string{"--json"}, args...), a.flag, a.wrong)...)
	var got struct {
		Error string `json:"error"`
		Exit  int    `json:"exit"`
		Rule  string `json:"rule"`
	}
	json.Unmarshal([]byte(lastLine(errs)), &got)
	if code != 1 || got.Exit != 1 || got.Rule != a.rule || !strings.Contains(got.Error, strings.Fields(a.flag)[0]) {
		e.t.Errorf("%s, wrong %s: exit %d, rule %q, error %q; want exit 1, rule %s, the flag named\n%s%s", label, a.flag, code, got.Rule, got.Error, a.rule, out, errs)
	}
	if after := state(); after != before {
		e.t.Errorf("%s, wrong %s: a refused run changed what is stored:\nbefore %s\nafter  %s", label, a.flag, before, after)
	}
}

// lastLine is the last line of s: under --json, a command's error
// object follows the notes it printed on the way.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// passes runs args (with every right value) and wants exit want.
func (e *trustEnv) passes(label string, want int, args ...string) {
	e.t.Helper()
	if code, out, errs := e.writ(args...); code != want {
		e.t.Errorf("%s, right values: exit %d, want %d\n%s%s", label, code, want, out, errs)
	}
}

// rights gives every assertion's right value as flags, but skip's.
func rights(as []assertion, skip string) []string {
	var out []string
	for _, a := range as {
		if a.flag != skip {
			out = append(out, a.flag, a.right)
		}
	}
	return out
}
