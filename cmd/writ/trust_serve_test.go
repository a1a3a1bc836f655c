package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/rules"
)

// TestTrustAtStart: the servers refuse a wrong trust assertion when they
// start, before they create or serve anything (`admission serve`
// --vkey, --trust-root, --policy on a new runner and on one that decided
// before; `witness serve` a malformed --log key with a new and a used
// state directory), and the right values start them; the decision log's
// key (--decisions-vkey, a fleet file's runner key) is judged by `audit
// --ledger` with and without its state, `ledger import` creating and
// repeating, and `audit --fleet` with a fresh and a warm cache; `ledger
// repair` judges --vkey, --trust-root and --policy whether it finds the
// store whole, rebuilds it, restores it from --from, or has nothing to
// restore.
func TestTrustAtStart(t *testing.T) {
	e := newTrustEnv(t)
	e.moreEnv()
	t.Run("admission serve", func(t *testing.T) { e.t = t; e.admissionServePaths() })
	t.Run("witness serve", func(t *testing.T) { e.t = t; e.witnessServePaths() })
	t.Run("decision logs", func(t *testing.T) { e.t = t; e.decisionKeyPaths() })
	t.Run("repair", func(t *testing.T) { e.t = t; e.repairPaths() })
}

// dirState is a digest of every file under dir, or "absent".
func (e *trustEnv) dirState(dir string) string {
	if _, err := os.Stat(dir); err != nil {
		return "absent"
	}
	return fmt.Sprintf("%x", testkit.Snapshot(e.t, dir))
}

// starts runs a server (writ on PATH, as TestMain installs it) with the
// right values: within 20 s it must print a line containing ready (on
// stdout or stderr); it is then stopped with SIGTERM, and must exit 0.
func (e *trustEnv) starts(label, ready string, args ...string) {
	e.t.Helper()
	cmd := exec.Command("writ", args...)
	pr, pw, err := os.Pipe()
	if err != nil {
		e.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	pw.Close()
	up, output := make(chan bool, 1), make(chan string, 1)
	go func() {
		var all strings.Builder
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), ready) {
				up <- true
			}
		}
		up <- false
		output <- all.String()
	}()
	select {
	case ok := <-up:
		if !ok {
			cmd.Wait()
			e.t.Errorf("%s, right values: exited before serving:\n%s", label, <-output)
			return
		}
	case <-time.After(20 * time.Second):
		e.t.Errorf("%s, right values: not serving within 20 s", label)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		e.t.Errorf("%s, right values: %v on SIGTERM, want exit 0 (stopped cleanly)", label, err)
	}
}

// inTime runs fn, failing the test if it has not returned within a
// minute: a server that did not refuse would serve until stopped.
func (e *trustEnv) inTime(label string, fn func()) {
	e.t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		e.t.Fatalf("%s: still running after a minute: the wrong value was not refused at start", label)
	}
}

// admissionServePaths: `writ admission serve` on a runner with no
// decision log yet and on one that decided before. A wrong value is
// refused before the socket, the runner key or the decision log is made.
func (e *trustEnv) admissionServePaths() {
	as := []assertion{
		{"--vkey", e.vkey, e.otherVKey, rules.VKeyMismatch},
		{"--trust-root", e.root, e.otherRoot, rules.RootUntrusted},
		{"--policy", e.goodPolicy, e.badPolicy, rules.LedgerUnwitnessed},
	}
	fresh := e.path("runner-new")
	e.must("ledger", "sync", "--dir", fresh, "--from", e.url, "--vkey", e.vkey)
	sock := e.path("admission.sock")
	for _, path := range []struct{ name, dir string }{{"new runner", fresh}, {"used runner", e.runner}} {
		state := func() string { return e.dirState(path.dir) + fileState(sock) }
		base := []string{"admission", "serve", "--ledger", path.dir, "--machine", "m1", "--socket", sock}
		label := "admission serve " + path.name
		for _, a := range as {
			right := rights(as, a.flag)
			if a.flag == "--vkey" {
				right = rights(as[1:2], "") // a policy names its log by key (admitPaths)
			}
			e.inTime(label, func() { e.refuses(label, with(base, right), a, state) })
		}
		e.starts(label, "serving admission", append(base, rights(as, "")...)...)
	}
}

// witnessServePaths: `writ witness serve` with a --log that is not a
// verifier key, with a new state directory and with one a witness
// cosigned from: bad usage (exit 2) before the key is read or the state
// opened.
func (e *trustEnv) witnessServePaths() {
	used := e.path("w3.state")
	wvkey, url, stop := e.startWitness("w3", used)
	p := e.file("w3.policy", fmt.Sprintf("log %s\nwitness w3 %s %s\nquorum w3\n", e.vkey, wvkey, url))
	e.must("ledger", "checkpoint", "--dir", e.writer, "--refresh", "--policy", p)
	stop()
	a := assertion{"--log", e.vkey, "witness.example/not+a+key", ""}
	for _, path := range []struct{ name, dir string }{{"new state", e.path("w4.state")}, {"used state", used}} {
		label := "witness serve " + path.name
		addr := e.path("w-addr")
		os.Remove(addr)
		state := func() string { return e.dirState(path.dir) }
		base := []string{"witness", "serve", "--key", e.path("w3.key"), "--dir", path.dir, "--listen", "127.0.0.1:0", "--addr-file", addr}
		e.inTime(label, func() { e.refusesAs(label, exitcode.Usage, base, a, state) })
		e.starts(label, "serving witness", append(base, a.flag, a.right)...)
	}
}

// decisionKeyPaths: a wrong --decisions-vkey for `writ audit --ledger`
// with a new and a warm state, for `writ ledger import` creating a copy
// and repeating the import, and a wrong runner key in the fleet file of
// `writ audit --fleet` with a fresh and a warm cache.
func (e *trustEnv) decisionKeyPaths() {
	dk := assertion{"--decisions-vkey", e.decVKey, e.otherVKey, rules.VKeyMismatch}
	st := e.path("runner-audit.json")
	base := []string{"audit", "--ledger", e.runner, "--vkey", e.vkey, "--state", st}
	for _, path := range []string{"fresh state", "warm state"} {
		e.refuses("audit --ledger "+path, base, dk, func() string { return fileState(st) + e.stored(e.runner) })
		e.passes("audit --ledger "+path, 0, append(base, dk.flag, dk.right)...)
	}
	export, copyDir := e.path("runner.export"), e.path("runner-copy")
	e.must("ledger", "export", "--dir", e.runner, "--out", export)
	base = []string{"ledger", "import", "--dir", copyDir, "--vkey", e.vkey, export}
	for _, path := range []string{"fresh", "repeated"} {
		e.refuses("import "+path, base, dk, func() string { return e.stored(copyDir) })
		e.passes("import "+path, 0, append(base, dk.flag, dk.right)...)
	}
	pub := e.path("decisions-pub")
	e.must("ledger", "publish", "--dir", e.runner, "--decisions", "--to", pub)
	fleet := func(name, key string) string {
		return e.file(name+".fleet", fmt.Sprintf("authority %s %s\nrunner r1 %s %s\n", e.url, e.vkey, pub, key))
	}
	fk := assertion{"--fleet", fleet("runner-right", e.decVKey), fleet("runner-wrong", e.otherVKey), rules.VKeyMismatch}
	cache := e.path("runner-cache")
	state := func() string { return e.stored(filepath.Join(cache, "runners", "r1"), "decisions") }
	base = []string{"audit", "--cache", cache}
	for _, path := range []string{"fresh cache", "warm cache"} {
		e.refuses("audit --fleet "+path, base, fk, state)
		e.passes("audit --fleet "+path, 0, append(base, fk.flag, fk.right)...)
	}
}

// repairPaths: `writ ledger repair` of the writer's ledger found whole
// (nothing to do), whole with --from (nothing to restore), with a damaged
// MANIFEST (rebuilt from its own files) and with a table gone (restored
// from --from). A refusal leaves every file of the ledger directory as it
// was; the right values repair it.
func (e *trustEnv) repairPaths() {
	export := e.path("writer.export")
	e.must("ledger", "export", "--dir", e.writer, "--out", export)
	as := []assertion{
		{"--vkey", e.vkey, e.otherVKey, rules.VKeyMismatch},
		{"--trust-root", e.root, e.otherRoot, rules.RootUntrusted},
		{"--policy", e.goodPolicy, e.badPolicy, rules.LedgerUnwitnessed},
	}
	for _, path := range []struct {
		name   string
		damage testkit.Damage
		from   bool
		want   int
	}{
		{"whole", "", false, 0},
		{"whole, --from", "", true, 1}, // nothing to restore, a no with the right values too
		{"rebuilt", testkit.ManifestTruncated, false, 0},
		{"restored", testkit.TableMissing, true, 0},
	} {
		dir := e.path("repair-" + strings.NewReplacer(" ", "-", ",", "").Replace(path.name))
		copyTree(e.t, e.writer, dir)
		if path.damage != "" {
			if err := testkit.DamageStore(filepath.Join(dir, "authority"), path.damage); err != nil {
				e.t.Fatal(err)
			}
		}
		base := []string{"ledger", "repair", "--dir", dir}
		if path.from {
			base = append(base, "--from", export)
		}
		state := func() string { return e.dirState(dir) }
		for _, a := range as {
			right := rights(as, a.flag)
			if a.flag == "--vkey" {
				right = rights(as[1:2], "") // a policy names its log by key
			}
			e.refuses("repair "+path.name, with(base, right), a, state)
		}
		e.passes("repair "+path.name, path.want, append(base, rights(as, "")...)...)
	}
}
