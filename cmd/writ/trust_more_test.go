package main

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/failure"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger/witness"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/sign"
)

// TestTrustOnMorePaths extends TestTrustOnEveryPath to the other commands
// that take a trust assertion, each on the paths where it has nothing new
// to do as well as those where it has: `ledger verify` (--vkey,
// --decisions-vkey) on a ledger without and with a decision log, and
// grown; `authority explain --vkey` for a key allowed and one denied;
// `audit --export` (--vkey, --decisions-vkey, --trust-root, --policy) of
// an authority-only and a full export, with a fresh and a warm state;
// `ledger receipt --policy` for the latest and an old entry, and
// `ledger verify-receipt` (--vkey, --policy) of a witnessed receipt, a
// receipt of an older tree and one that carries no checkpoint; the
// writer's `ledger append`, `ledger checkpoint --refresh` and `ledger
// publish` under a policy that cannot be met or is another log's, with a
// fresh publication, nothing new to publish, and a grown log. Each
// refusal has its exit code (1 a verdict of no, 2 bad usage) and rule,
// names the flag, and changes nothing stored; the right values pass on
// the same path.
func TestTrustOnMorePaths(t *testing.T) {
	e := newTrustEnv(t)
	e.moreEnv()
	t.Run("ledger verify", func(t *testing.T) { e.t = t; e.verifyPaths() })
	t.Run("authority explain", func(t *testing.T) { e.t = t; e.explainPaths() })
	t.Run("audit export", func(t *testing.T) { e.t = t; e.exportAuditPaths() })
	t.Run("writer", func(t *testing.T) { e.t = t; e.writerPaths() })
	t.Run("receipts", func(t *testing.T) { e.t = t; e.receiptPaths() })
}

// moreEnv adds what the other commands need: a runner that decided
// once (a replica with a decision log), a policy of another log, and a
// witness of the writer's log with the policy that requires it.
func (e *trustEnv) moreEnv() {
	e.runner = e.path("runner")
	e.must("ledger", "sync", "--dir", e.runner, "--from", e.url, "--vkey", e.vkey)
	e.admitOnce()
	e.decVKey = strings.TrimSpace(e.must("ledger", "vkey", "--dir", e.runner, "--log", "decisions"))
	e.otherPolicy = e.file("other.policy", "log "+e.otherVKey+"\nquorum none\n")
	wvkey, url, _ := e.startWitness("w2", e.path("w2.state"))
	e.witnessed = e.file("witnessed.policy", fmt.Sprintf("log %s\nwitness w2 %s %s\nquorum w2\n", e.vkey, wvkey, url))
}

// admitOnce syncs the runner and admits one new unsigned instruction.
func (e *trustEnv) admitOnce() {
	e.t.Helper()
	e.must("ledger", "sync", "--dir", e.runner, "--from", e.url, "--vkey", e.vkey)
	e.admitted++
	u := e.path(fmt.Sprintf("u%d.cbor", e.admitted))
	agent := e.file("agent", "#!/bin/sh\n")
	e.must("instruct", "--unsigned", "--stream", "s", "--machine", "m1", "--agent", "agent", "--out", u)
	e.must("admit", "--ledger", e.runner, "--machine", "m1", "--mode", "off", "--agent-binary", agent, u)
}

// startWitness runs a C2SP witness of the writer's log on loopback, in
// process, with a new key and its state in dir; it returns the
// witness's cosignature verifier key, its URL and a stop function (also
// run at the test's end).
func (e *trustEnv) startWitness(name, dir string) (vkey, url string, stop func()) {
	e.must("witness", "key", "generate", "--name", "witness.example/"+name, "--out", e.path(name), "--work-factor", "10")
	id, err := age.NewScryptIdentity(os.Getenv("WRIT_PASSPHRASE"))
	if err != nil {
		e.t.Fatal(err)
	}
	k, err := sign.LoadKey(e.path(name)+".key", sign.KeyOptions{Identities: []age.Identity{id}})
	if err != nil {
		e.t.Fatal(err)
	}
	w, err := witness.New(witness.Config{Name: "witness.example/" + name, Key: k, Dir: dir, Logs: []string{e.vkey}})
	if err != nil {
		e.t.Fatal(err)
	}
	srv := httptest.NewServer(w.Handler())
	done := false
	stop = func() {
		if !done {
			done = true
			srv.Close()
			w.Close()
		}
	}
	e.t.Cleanup(stop)
	return w.VerifierKey(), srv.URL, stop
}

// refusesAs is refuses with the exit code want: 1 under a.rule, or 2
// (bad usage) with no rule; the flag is named either way.
func (e *trustEnv) refusesAs(label string, want int, args []string, a assertion, state func() string) {
	e.t.Helper()
	if want == exitcode.No {
		e.refuses(label, args, a, state)
		return
	}
	before := state()
	code, out, errs := e.writ(append(append([]string{"--json"}, args...), a.flag, a.wrong)...)
	var got failure.Failure
	json.Unmarshal([]byte(lastLine(errs)), &got)
	if code != want || got.Exit != want || got.Rule != "" || !strings.Contains(got.Error, a.flag) {
		e.t.Errorf("%s, wrong %s: exit %d, rule %q, error %q; want exit %d naming the flag\n%s%s", label, a.flag, code, got.Rule, got.Error, want, out, errs)
	}
	if after := state(); after != before {
		e.t.Errorf("%s, wrong %s: a refused run changed what is stored:\nbefore %s\nafter  %s", label, a.flag, before, after)
	}
}

// verifyPaths: `writ ledger verify` on the writer's ledger (no decision
// log: a --decisions-vkey signs nothing there), on the runner's (both
// logs) and on the runner's grown (both logs longer).
func (e *trustEnv) verifyPaths() {
	vk := assertion{"--vkey", e.vkey, e.otherVKey, rules.VKeyMismatch}
	dk := assertion{"--decisions-vkey", e.decVKey, e.otherVKey, rules.VKeyMismatch}
	for _, path := range []struct {
		name, dir string
		setup     func()
		as        []assertion
	}{
		{"authority only", e.writer, func() {}, []assertion{vk}},
		{"with decisions", e.runner, func() {}, []assertion{vk, dk}},
		{"with decisions, grown", e.runner, func() { e.grow(); e.admitOnce() }, []assertion{vk, dk}},
	} {
		path.setup()
		state := func() string { return e.stored(path.dir) }
		base := []string{"ledger", "verify", "--dir", path.dir}
		for _, a := range path.as {
			e.refuses("verify "+path.name, with(base, rights(path.as, a.flag)), a, state)
		}
		if len(path.as) == 1 {
			e.refuses("verify "+path.name, with(base, rights(path.as, "")), dk, state)
		}
		e.passes("verify "+path.name, 0, append(base, rights(path.as, "")...)...)
	}
}

// explainPaths: `writ authority explain --vkey` for a key the ledger
// allows (exit 0 with the right key), for one it denies (exit 1, the
// denial's rule, with the right key), and after the log grew.
func (e *trustEnv) explainPaths() {
	vk := assertion{"--vkey", e.vkey, e.otherVKey, rules.VKeyMismatch}
	state := func() string { return e.stored(e.writer) }
	for _, path := range []struct {
		name    string
		machine string
		want    int
		setup   func()
	}{{"allowed", "m1", 0, func() {}}, {"denied", "elsewhere", 1, func() {}}, {"grown", "m1", 0, e.grow}} {
		path.setup()
		base := []string{"authority", "explain", "--ledger", e.writer, "--key", e.path("op.pub"), "--action", "instruct", "--stream", "s", "--machine", path.machine}
		e.refuses("explain "+path.name, base, vk, state)
		e.passes("explain "+path.name, path.want, append(base, "--vkey", e.vkey)...)
	}
}

// exportAuditPaths: `writ audit --export` of the writer's export (no
// decision log) and of the runner's (both logs), each with a new state
// file and with the state an earlier audit left.
func (e *trustEnv) exportAuditPaths() {
	for _, x := range []struct {
		name, dir string
		decisions bool
	}{{"authority only", e.writer, false}, {"full", e.runner, true}} {
		export := e.path("audit-" + strings.ReplaceAll(x.name, " ", "-") + ".export")
		e.must("ledger", "export", "--dir", x.dir, "--out", export)
		st := e.path("audit-" + strings.ReplaceAll(x.name, " ", "-") + ".json")
		state := func() string { return fileState(st) }
		as := []assertion{
			{"--vkey", e.vkey, e.otherVKey, rules.VKeyMismatch},
			{"--trust-root", e.root, e.otherRoot, rules.RootUntrusted},
			{"--policy", e.goodPolicy, e.badPolicy, rules.LedgerUnwitnessed},
		}
		dk := assertion{"--decisions-vkey", e.decVKey, e.otherVKey, rules.VKeyMismatch}
		if x.decisions {
			as = append(as, dk)
		}
		base := []string{"audit", "--export", export, "--state", st}
		for _, path := range []string{"fresh state", "warm state"} {
			label := fmt.Sprintf("audit --export %s, %s", x.name, path)
			for _, a := range as {
				e.refuses(label, with(base, rights(as, a.flag)), a, state)
			}
			if !x.decisions {
				e.refuses(label, with(base, rights(as, "")), dk, state)
			}
			e.passes(label, 0, append(base, rights(as, "")...)...)
		}
	}
}

// writerPaths: the writer's commands under a policy that no witness can
// meet (its one witness has no URL) or that names another log. `ledger
// append` and `ledger checkpoint --refresh` refuse both before they sign
// anything (exit 2); `ledger publish` refuses the first as a verdict
// (exit 1, ledger-unwitnessed) and the second as bad usage, whether it
// starts a publication, has nothing new to publish, or publishes growth.
func (e *trustEnv) writerPaths() {
	pub := e.path("witnessed-pub")
	state := func() string { return e.stored(e.writer) + fmt.Sprintf("%x", testkitSnapshot(e.t, pub)) }
	bad := assertion{"--policy", e.witnessed, e.badPolicy, rules.LedgerUnwitnessed}
	other := assertion{"--policy", e.witnessed, e.otherPolicy, ""}
	appendArgs := []string{"ledger", "append", "--dir", e.writer, e.record()}
	refresh := []string{"ledger", "checkpoint", "--dir", e.writer, "--refresh"}
	for _, a := range []assertion{bad, other} {
		e.refusesAs("append", exitcode.Usage, appendArgs, a, state)
		e.refusesAs("checkpoint --refresh", exitcode.Usage, refresh, a, state)
	}
	e.passes("append", 0, append(appendArgs, "--policy", e.witnessed)...)
	e.passes("checkpoint --refresh", 0, append(refresh, "--policy", e.witnessed)...)
	publish := []string{"ledger", "publish", "--dir", e.writer, "--to", pub}
	for _, path := range []struct {
		name  string
		setup func()
	}{
		{"fresh publication", func() {}},
		{"nothing new", func() {}},
		{"grown", func() { e.must("ledger", "append", "--dir", e.writer, "--policy", e.witnessed, e.record()) }},
	} {
		path.setup()
		e.refusesAs("publish "+path.name, exitcode.No, publish, bad, state)
		e.refusesAs("publish "+path.name, exitcode.Usage, publish, other, state)
		e.passes("publish "+path.name, 0, append(publish, "--policy", e.witnessed)...)
	}
}

// testkitSnapshot is testkit.Snapshot, or nil for a directory that does
// not exist yet.
func testkitSnapshot(t *testing.T, dir string) []byte {
	if fileState(filepath.Join(dir, "checkpoint")) == "absent" {
		return nil
	}
	return testkit.Snapshot(t, dir)
}

// receiptPaths: `writ ledger receipt --policy` for the latest entry and
// for entry 0, once the writer's checkpoint is witnessed; and `writ
// ledger verify-receipt` (--vkey, --policy) of a witnessed receipt of the
// latest entry and of entry 0, of one whose tree the log has grown past
// (and been witnessed again), and of one that carries no checkpoint (made
// while the latest checkpoint was not witnessed): with the right values
// that one is a no (exit 1) under a policy, a yes without.
func (e *trustEnv) receiptPaths() {
	e.grow()
	plainR, plainE := e.receipt(0, "plain")
	e.must("ledger", "checkpoint", "--dir", e.writer, "--refresh", "--policy", e.witnessed)
	last := e.size(e.writer) - 1
	bad := assertion{"--policy", e.witnessed, e.badPolicy, rules.LedgerUnwitnessed}
	other := assertion{"--policy", e.witnessed, e.otherPolicy, ""}
	for _, path := range []struct {
		name  string
		index int64
	}{{"latest entry", last}, {"old entry", 0}} {
		out := e.path("receipt-" + strings.ReplaceAll(path.name, " ", "-"))
		state := func() string { return fileState(out) + e.stored(e.writer) }
		base := []string{"ledger", "receipt", "--dir", e.writer, "--index", fmt.Sprint(path.index), "--out", out}
		e.refusesAs("receipt "+path.name, exitcode.No, base, bad, state)
		e.refusesAs("receipt "+path.name, exitcode.Usage, base, other, state)
		e.passes("receipt "+path.name, 0, append(base, "--policy", e.witnessed)...)
	}
	latestR, latestE := e.receipt(last, "latest")
	oldR, oldE := e.receipt(0, "old")
	olderR, olderE := e.receipt(0, "older")
	e.must("ledger", "append", "--dir", e.writer, "--policy", e.witnessed, e.record())
	vk := assertion{"--vkey", e.vkey, e.otherVKey, rules.VKeyMismatch}
	state := func() string { return e.stored(e.writer) }
	for _, path := range []struct {
		name, receipt, entry string
		witnessed            bool
	}{
		{"witnessed, latest entry", latestR, latestE, true},
		{"witnessed, old entry", oldR, oldE, true},
		{"witnessed, older tree", olderR, olderE, true},
		{"no checkpoint", plainR, plainE, false},
	} {
		label := "verify-receipt " + path.name
		base := []string{"ledger", "verify-receipt", "--entry", path.entry, path.receipt}
		e.refuses(label, base, vk, state) // a policy names its log by key: --vkey alone
		e.refusesAs(label, exitcode.No, with(base, []string{"--vkey", e.vkey}), bad, state)
		e.refusesAs(label, exitcode.Usage, with(base, []string{"--vkey", e.vkey}), other, state)
		want := 0
		if !path.witnessed {
			want = 1 // the right policy, but no witness cosigned its tree
		}
		e.passes(label, want, append(base, "--vkey", e.vkey, "--policy", e.witnessed)...)
		e.passes(label+", no policy", 0, append(base, "--vkey", e.vkey)...)
	}
}

// receipt writes a receipt for entry index of the writer's log and the
// entry's bytes, as name.receipt and name.entry.
func (e *trustEnv) receipt(index int64, name string) (receipt, entry string) {
	receipt, entry = e.path(name+".receipt"), e.path(name+".entry")
	e.must("ledger", "receipt", "--dir", e.writer, "--index", fmt.Sprint(index), "--out", receipt)
	e.must("ledger", "entry", "--dir", e.writer, "--index", fmt.Sprint(index), "--out", entry)
	return receipt, entry
}

// size is the size of the latest signed checkpoint of dir's authority log.
func (e *trustEnv) size(dir string) int64 {
	e.t.Helper()
	return int64(e.json(e.must("--json", "ledger", "checkpoint", "--dir", dir))["size"].(float64))
}
