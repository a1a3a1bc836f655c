// Package quickstart is `writ quickstart`'s story: writ's main job run
// end to end on a real binary (the running writ executable) in a fresh
// directory, through the same command lines a user types. It makes a
// passphrase file and three keys (root, operator, release engineer), a
// root record and a ledger; delegates to the operator and the release
// engineer; pins a copy of the binary; appends the records with a signed
// instruction; admits a signed and an unsigned dispatch and refuses one
// whose binary has one byte changed; and audits the ledger. Each step is
// told in one line as it is done.
package quickstart

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/transfer"
)

// workFactor is the scrypt work factor of the story's throwaway keys:
// low, so the story runs in seconds. Real keys use 18.
const workFactor = "12"

// Runner runs one writ command line (args[0] is "writ") in-process, as
// the command line's entry point does, and returns its exit code.
type Runner func(args []string, stdin io.Reader, stdout, stderr io.Writer) int

// Options are what the story needs: an empty directory to work in, the
// writ that runs each step, and where each step's line is told.
type Options struct {
	Dir string // existing and empty
	Run Runner
	Say func(line string)
}

// Result is what the story made, in Dir.
type Result struct {
	Dir            string
	PassphraseFile string            // the keys' passphrase (its first line)
	KeyIDs         map[string]string // "root", "operator", "release": the key ids writ prints
	Ledger         string            // the ledger directory
	VKey           string            // its checkpoint verifier key
	Agent          string            // the pinned copy of the writ binary
	Admissions     []Admission       // in order: signed, unsigned, tampered
	Next           string            // the command that audits the ledger again
}

// Admission is one dispatch the story admitted or refused.
type Admission struct {
	Label   string // what was dispatched, and under which mode
	Verdict string // admitted, admitted-unsigned or refused
	Rule    string // the rule the verdict names
}

// Run tells the story in o.Dir. The story's keys use the passphrase file
// it writes, whatever the caller's environment says ($WRIT_PASSPHRASE is
// unset), so that the file it names is the truth. A step that exits
// other than expected, or prints no JSON result, ends the story with an
// error naming the command line and its stderr; the result then holds
// what was made so far.
func Run(o Options) (*Result, error) {
	os.Unsetenv("WRIT_PASSPHRASE")
	q := &qs{Options: o, res: Result{Dir: o.Dir, KeyIDs: map[string]string{}}}
	err := q.story()
	return &q.res, err
}

// qs runs writ commands in-process, exactly as a user would type them,
// and reads their --json results.
type qs struct {
	Options
	res Result
}

// say tells one step's line.
func (q *qs) say(format string, args ...any) {
	q.Say(fmt.Sprintf(format, args...))
}

func (q *qs) path(name string) string { return filepath.Join(q.Dir, name) }

// step runs one writ command line and returns its last JSON result. The
// exit code must be want.
func (q *qs) step(want int, args ...string) (map[string]any, error) {
	var out, errb bytes.Buffer
	code := q.Run(append([]string{"writ", "--json"}, args...), strings.NewReader(""), &out, &errb)
	if code != want {
		return nil, fmt.Errorf("quickstart: `writ %s` exited %d, expected %d: %s", strings.Join(args, " "), code, want, strings.TrimSpace(errb.String()))
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	res := map[string]any{}
	dec := json.NewDecoder(strings.NewReader(lines[len(lines)-1]))
	dec.UseNumber()
	if err := dec.Decode(&res); err != nil {
		return nil, fmt.Errorf("quickstart: `writ %s` printed no JSON result: %w", strings.Join(args, " "), err)
	}
	return res, nil
}

func (q *qs) story() error {
	q.say("quickstart in %s", q.Dir)
	pf, led, err := q.keys()
	if err != nil {
		return err
	}
	agent, build, err := q.authority(pf, led)
	if err != nil {
		return err
	}
	q.res.Agent = agent
	if err := q.dispatches(pf, agent, build); err != nil {
		return err
	}
	return q.audit(led)
}

// keys makes the passphrase file, the three keys, the root record and
// the ledger, and returns the paths of the passphrase file and the
// ledger.
func (q *qs) keys() (string, string, error) {
	secret := make([]byte, 16)
	rand.Read(secret)
	pf := q.path("passphrase")
	if err := os.WriteFile(pf, []byte(hex.EncodeToString(secret)+"\n"), 0o600); err != nil {
		return "", "", err
	}
	ids := q.res.KeyIDs
	for _, who := range []string{"root", "operator", "release"} {
		r, err := q.step(0, "key", "generate", "--out", q.path(who), "--passphrase-file", pf, "--work-factor", workFactor)
		if err != nil {
			return "", "", err
		}
		ids[who] = r["key_id"].(string)
	}
	q.say("keys (ids as every writ command prints them): root %s, operator %s, release engineer %s (age-encrypted, mode 0600, passphrase in %s)", ids["root"], ids["operator"], ids["release"], pf)

	r, err := q.step(0, "root", "sign", "--key", q.path("root.key"), "--pub", q.path("root.pub"), "--threshold", "1",
		"--expires", "8760h", "--out", q.path("root.cose"), "--passphrase-file", pf)
	if err != nil {
		return "", "", err
	}
	q.say("root: 1-of-1 root record %s", r["digest"])
	led := q.path("ledger")
	q.res.PassphraseFile, q.res.Ledger = pf, led
	r, err = q.step(0, "ledger", "init", "--dir", led, "--root", q.path("root.cose"), "--passphrase-file", pf, "--work-factor", workFactor)
	if err != nil {
		return "", "", err
	}
	q.res.VKey, _ = r["vkey"].(string)
	q.say("ledger: created %s, checkpoint verifier key %s", led, r["vkey"])
	return pf, led, nil
}

// authority delegates to the operator and the release engineer, pins a
// copy of this binary and appends both with a signed instruction to the
// ledger led; it returns the copy's path and its Go build info (nil if it
// has none).
func (q *qs) authority(pf, led string) (string, *schemas.Build, error) {
	if _, err := q.step(0, "delegate", "--key", q.path("root.key"), "--to", q.path("operator.pub"), "--action", "instruct",
		"--stream", "demo", "--machine", "runner-1", "--not-after", "720h", "--out", q.path("operator.delegation"), "--passphrase-file", pf); err != nil {
		return "", nil, err
	}
	if _, err := q.step(0, "delegate", "--key", q.path("root.key"), "--to", q.path("release.pub"), "--action", "pin",
		"--artifact", "writ-agent", "--not-after", "720h", "--out", q.path("release.delegation"), "--passphrase-file", pf); err != nil {
		return "", nil, err
	}
	q.say("delegations: operator may instruct stream demo on runner-1; release engineer may pin writ-agent (30 days)")

	agent, err := q.copySelf()
	if err != nil {
		return "", nil, err
	}
	pinArgs := []string{"pin", "--key", q.path("release.key"), "--artifact", "writ-agent", "--version", "0.1.0", "--out", q.path("agent.pin"), "--passphrase-file", pf}
	build, _, _ := transfer.ReadBuild(agent)
	note := ""
	switch {
	case build == nil:
		pinArgs, note = append(pinArgs, "--allow-unknown-build"), "; no Go build info, pinned with --allow-unknown-build"
	case build.Revision == "":
		pinArgs, note = append(pinArgs, "--allow-unknown-build"), fmt.Sprintf("; %s, no vcs.revision (go run and -buildvcs=false omit it), pinned with --allow-unknown-build", build.GoVersion)
	case build.Modified:
		pinArgs, note = append(pinArgs, "--allow-dirty"), fmt.Sprintf("; vcs.revision %.12s with uncommitted changes, pinned with --allow-dirty", build.Revision)
	default:
		note = fmt.Sprintf("; vcs.revision %.12s, clean", build.Revision)
	}
	r, err := q.step(0, append(pinArgs, agent)...)
	if err != nil {
		return "", nil, err
	}
	q.say("pin: writ-agent %s = %s (%v bytes%s)", r["version"], r["binary_digest"], r["size"], note)

	if _, err = q.step(0, "instruct", "--key", q.path("operator.key"), "--stream", "demo", "--machine", "runner-1", "--agent", "writ-agent",
		"--out", q.path("signed.dispatch"), "--passphrase-file", pf); err != nil {
		return "", nil, err
	}
	r, err = q.step(0, "ledger", "append", "--dir", led, "--passphrase-file", pf,
		q.path("operator.delegation"), q.path("release.delegation"), q.path("agent.pin"), q.path("signed.dispatch"))
	if err != nil {
		return "", nil, err
	}
	q.say("ledger: appended 2 delegations, the pin and the signed instruction (last index %v)", r["index"])
	q.say("runner: its key is made at the first admission, age-encrypted with the same passphrase (--runner-key-protection passphrase; without that flag a runner keeps it as a 0600 file)")
	return agent, build, nil
}

// dispatches admits a signed and an unsigned dispatch, and refuses a
// signed one whose agent binary has one byte changed.
func (q *qs) dispatches(pf, agent string, build *schemas.Build) error {
	// A clean build is admitted under enforce. A writ run with `go run`
	// records no vcs.revision, which admission flags (unknown-build) and
	// enforce would refuse; then the story shows it admitted under off.
	mode := "enforce"
	if build == nil || build.Revision == "" || build.Modified {
		mode = "off"
	}
	if err := q.admit("signed dispatch, mode "+mode, "admitted", mode, "signed.dispatch", agent); err != nil {
		return err
	}
	if _, err := q.step(0, "instruct", "--unsigned", "--stream", "demo", "--machine", "runner-1", "--agent", "writ-agent", "--out", q.path("unsigned.dispatch")); err != nil {
		return err
	}
	if err := q.admit("unsigned dispatch, mode off", "admitted-unsigned", "off", "unsigned.dispatch", agent); err != nil {
		return err
	}
	tampered, err := q.tamper(agent)
	if err != nil {
		return err
	}
	if _, err = q.step(0, "instruct", "--key", q.path("operator.key"), "--stream", "demo", "--machine", "runner-1", "--agent", "writ-agent",
		"--out", q.path("signed2.dispatch"), "--passphrase-file", pf); err != nil {
		return err
	}
	return q.admit("signed dispatch, agent binary with one byte changed, mode off", "refused", "off", "signed2.dispatch", tampered)
}

// audit audits the ledger led and says what to run next.
func (q *qs) audit(led string) error {
	r, err := q.step(0, "audit", "--ledger", led)
	if err != nil {
		return err
	}
	bv := r["by_verdict"].(map[string]any)
	q.say("audit: ok, %v entries verified (%v authority records, %v decisions); decisions: admitted %v, admitted-unsigned %v, would-refuse %v, refused %v",
		r["entries_verified"], r["authority_entries"], r["decisions"], bv["admitted"], bv["admitted-unsigned"], bv["would-refuse"], bv["refused"])
	w := SelfCommand()
	q.res.Next = fmt.Sprintf("%s audit --ledger %s", w, led)
	q.say("next: %s audit --ledger %s   (and %s admit --rules for every rule)", w, led, w)
	return nil
}

// SelfCommand is how the user can run this writ again: "go run
// ./cmd/writ" when it was built by go run (a binary in Go's temporary
// build directory), "writ" when that name on PATH is this binary, else
// this binary's path.
func SelfCommand() string {
	self, err := os.Executable()
	if err != nil {
		return "writ"
	}
	if strings.Contains(self, string(filepath.Separator)+"go-build") {
		return "go run ./cmd/writ"
	}
	if p, err := exec.LookPath("writ"); err == nil {
		a, errA := os.Stat(p)
		b, errB := os.Stat(self)
		if errA == nil && errB == nil && os.SameFile(a, b) {
			return "writ"
		}
	}
	return self
}

// admit runs `writ admit` and checks the verdict.
func (q *qs) admit(label, want, mode, dispatch, agent string) error {
	code := 0
	if want == "refused" {
		code = 1
	}
	// The runner key too is age-encrypted to the story's passphrase, as
	// every key the story makes (a runner's default is a plain key file).
	r, err := q.step(code, "admit", "--ledger", q.path("ledger"), "--machine", "runner-1", "--mode", mode, "--agent-binary", agent,
		"--runner-key-protection", "passphrase", "--passphrase-file", q.path("passphrase"), "--work-factor", workFactor, q.path(dispatch))
	if err != nil {
		return err
	}
	if r["verdict"] != want {
		return fmt.Errorf("quickstart: %s: verdict %v (rule %v), expected %s", label, r["verdict"], r["rule"], want)
	}
	rule, _ := r["rule"].(string)
	q.res.Admissions = append(q.res.Admissions, Admission{Label: label, Verdict: want, Rule: rule})
	line := fmt.Sprintf("%s: %s (rule %s)", label, r["verdict"], r["rule"])
	if r["rule"] == "unknown-build" {
		line += "; this writ binary records no vcs.revision, so --mode enforce would refuse it"
	}
	q.say("%s", line)
	return nil
}

// copySelf copies the running writ executable to DIR/agent/writ-agent: a
// real Go binary with real build metadata, to pin and admit.
func (q *qs) copySelf() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	dst := q.path(filepath.Join("agent", "writ-agent"))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	return dst, copyFile(self, dst)
}

// tamper copies the agent and flips one bit of its last byte.
func (q *qs) tamper(agent string) (string, error) {
	dst := q.path(filepath.Join("agent", "writ-agent.tampered"))
	if err := copyFile(agent, dst); err != nil {
		return "", err
	}
	f, err := os.OpenFile(dst, os.O_RDWR, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, fi.Size()-1); err != nil {
		return "", err
	}
	b[0] ^= 1
	_, err = f.WriteAt(b, fi.Size()-1)
	return dst, err
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
