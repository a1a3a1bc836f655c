package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/rules"
)

// TestTrustOnEveryPath: every command that takes an operator's trust
// assertion (--vkey, --trust-root, --policy, a fleet file's key) refuses a
// wrong one on each of its paths, including those that fetch or replay
// nothing: a replica created, up to date, taking a refreshed checkpoint,
// growing; an import creating, repeating, growing; an audit with and
// without its state file; a fleet audit with a fresh and a warm cache; an
// admission on a new and a used runner. Each refusal exits 1 under the
// assertion's rule and names the flag, and changes nothing stored; the
// right values pass on the same path.
func TestTrustOnEveryPath(t *testing.T) {
	e := newTrustEnv(t)
	as := []assertion{
		{"--vkey", e.vkey, e.otherVKey, rules.VKeyMismatch},
		{"--trust-root", e.root, e.otherRoot, rules.RootUntrusted},
		{"--policy", e.goodPolicy, e.badPolicy, rules.LedgerUnwitnessed},
	}
	t.Run("sync", func(t *testing.T) { e.t = t; e.syncPaths(as) })
	t.Run("import", func(t *testing.T) { e.t = t; e.importPaths(as) })
	t.Run("audit", func(t *testing.T) { e.t = t; e.auditPaths(as) })
	t.Run("fleet", func(t *testing.T) { e.t = t; e.fleetPaths(as) })
	t.Run("admit", func(t *testing.T) { e.t = t; e.admitPaths(as) })
}

// syncPaths: `writ ledger sync` on a new replica, one up to date, one
// offered a refreshed checkpoint of its tree, and one offered new entries.
func (e *trustEnv) syncPaths(as []assertion) {
	r := e.path("R")
	state := func() string { return e.stored(r) }
	base := []string{"ledger", "sync", "--dir", r, "--from", e.url}
	for _, path := range []struct {
		name  string
		setup func()
	}{
		{"fresh", func() {}},
		{"up to date", func() {}},
		{"refreshed checkpoint", e.refresh},
		{"growing", e.grow},
	} {
		path.setup()
		for _, a := range as {
			e.refuses("sync "+path.name, with(base, rights(as, a.flag)), a, state)
		}
		e.passes("sync "+path.name, 0, append(base, rights(as, "")...)...)
	}
}

// importPaths: `writ ledger import` into no replica, of the export the
// replica already holds, and of a larger one.
func (e *trustEnv) importPaths(as []assertion) {
	l := e.path("L")
	state := func() string { return e.stored(l) }
	export := func() string {
		p := e.path(fmt.Sprintf("e%d.export", e.grown))
		if _, err := os.Stat(p); err == nil {
			return p // the export the replica already holds
		}
		e.must("ledger", "export", "--dir", e.writer, "--out", p, "--authority-only")
		return p
	}
	for _, path := range []struct {
		name  string
		setup func()
	}{{"fresh", func() {}}, {"up to date", func() {}}, {"growing", e.grow}} {
		path.setup()
		x := export()
		base := []string{"ledger", "import", "--dir", l, x}
		for _, a := range as {
			e.refuses("import "+path.name, with(base, rights(as, a.flag)), a, state)
		}
		e.passes("import "+path.name, 0, append(base, rights(as, "")...)...)
	}
}

// auditPaths: `writ audit --ledger` with a new state file and with the
// state an earlier audit left.
func (e *trustEnv) auditPaths(as []assertion) {
	st := e.path("auditor.json")
	state := func() string { return fileState(st) + e.stored(e.writer) }
	base := []string{"audit", "--ledger", e.writer, "--state", st}
	for _, path := range []string{"fresh state", "warm state"} {
		for _, a := range as {
			e.refuses("audit "+path, with(base, rights(as, a.flag)), a, state)
		}
		e.passes("audit "+path, 0, append(base, rights(as, "")...)...)
	}
}

// fleetPaths: `writ audit --fleet` with a new cache, a cache up to date
// and a cache the log grew past. The fleet names no runner, so the right
// values end in nothing-verified, never ok; a wrong one is refused first.
func (e *trustEnv) fleetPaths(as []assertion) {
	cache := e.path("cache")
	state := func() string { return e.stored(filepath.Join(cache, "authority")) }
	good := e.file("good.fleet", fmt.Sprintf("authority %s %s\n", e.url, e.vkey))
	bad := e.file("bad.fleet", fmt.Sprintf("authority %s %s\n", e.url, e.otherVKey))
	fas := []assertion{{"--fleet", good, bad, rules.VKeyMismatch}, as[1], as[2]}
	base := []string{"audit", "--cache", cache}
	for _, path := range []struct {
		name  string
		setup func()
	}{{"fresh cache", func() {}}, {"warm cache", func() {}}, {"warm cache, log grown", e.grow}} {
		path.setup()
		for _, a := range fas {
			e.refuses("fleet "+path.name, with(base, rights(fas, a.flag)), a, state)
		}
		e.refuses("fleet "+path.name, append(base, rights(fas[1:], "")...), assertion{"--fleet", "", good, rules.NothingVerified}, func() string { return "" })
	}
}

// admitPaths: `writ admit` on a runner with no decision log yet and on
// one that has decided before (a replica synced from the writer). A
// refused admission is recorded, by design; the authority log is not
// changed.
func (e *trustEnv) admitPaths(as []assertion) {
	r := e.path("runner")
	e.must("ledger", "sync", "--dir", r, "--from", e.url, "--vkey", e.vkey)
	agent := e.file("agent", "#!/bin/sh\n")
	u := e.path("u.cbor")
	e.must("instruct", "--unsigned", "--stream", "s", "--machine", "m1", "--agent", "agent", "--out", u)
	state := func() string { return e.stored(r, "authority") }
	base := []string{"--json", "admit", "--ledger", r, "--machine", "m1", "--mode", "off", "--agent-binary", agent, u}
	for _, path := range []string{"new runner", "used runner"} {
		for _, a := range as {
			before := state()
			right := rights(as, a.flag)
			if a.flag == "--vkey" {
				// A policy names its log by key: one given with another
				// --vkey is bad input (exit 2) before any verdict.
				right = rights(as[1:2], "")
			}
			code, out, errs := e.writ(with(base, append(right, a.flag, a.wrong))...)
			var v struct{ Verdict, Rule, Reason string }
			json.Unmarshal([]byte(strings.TrimSpace(out)), &v)
			if code != 1 || v.Verdict != "refused" || v.Rule != a.rule {
				e.t.Errorf("admit %s, wrong %s: exit %d, %+v; want refused under %s\n%s", path, a.flag, code, v, a.rule, errs)
			}
			if state() != before {
				e.t.Errorf("admit %s, wrong %s: the authority log changed", path, a.flag)
			}
		}
		e.passes("admit "+path, 0, append(base, rights(as, "")...)...)
		// A new instruction (a new id) for the next path: an id is
		// admitted once.
		os.Remove(u)
		e.must("instruct", "--unsigned", "--stream", "s", "--machine", "m1", "--agent", "agent", "--out", u)
	}
	if _, err := os.Stat(filepath.Join(r, "decisions")); err != nil {
		e.t.Errorf("the runner has no decision log after admitting: %v", err)
	}
}

// with returns base followed by more, in a new slice.
func with(base, more []string) []string {
	return append(base[:len(base):len(base)], more...)
}
