package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"filippo.io/age"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
)

func check(err error) {
	if err != nil {
		fail("%v", err)
	}
}

// running are the services started and not stopped yet: fail kills
// them, so that no service outlives the benchmark.
var running = map[*exec.Cmd]bool{}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench/service: "+format+"\n", args...)
	for cmd := range running {
		cmd.Process.Kill()
	}
	os.Exit(1)
}

// benchUnlock unlocks mkledger's checkpoint key (passphrase "bench").
func benchUnlock() ledgerdir.Unlock {
	return ledgerdir.Unlock{Identities: func() ([]age.Identity, error) {
		id, err := age.NewScryptIdentity("bench")
		return []age.Identity{id}, err
	}}
}

// run runs name args in dir (the current one when ""), and returns its
// stdout; a failure fails the benchmark with its stderr.
func run(dir, name string, args ...string) []byte {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "WRIT_PASSPHRASE=bench")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		fail("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, errb.Bytes())
	}
	return out.Bytes()
}

// copyDir copies the ledger directory from to a new directory to.
func copyDir(from, to string) string {
	run("", "cp", "-a", from, to)
	return to
}

// waitAddr waits up to 60 s for a server's address file.
func waitAddr(file string) string {
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(file); err == nil && bytes.HasSuffix(b, []byte("\n")) {
			return strings.TrimSpace(string(b))
		}
	}
	fail("no address in %s within 60 s", file)
	return ""
}

// waitReady waits up to 10 minutes for the service's /readyz (a state
// that must be replayed takes a while).
func waitReady(url string) {
	for deadline := time.Now().Add(10 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(url + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
	}
	fail("%s not ready within 10 minutes", url)
}

// vmHWM is a live process's peak RSS, in KiB.
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	check(err)
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			n, err := strconv.ParseInt(f[1], 10, 64)
			check(err)
			return n
		}
	}
	fail("no VmHWM for process %d", pid)
	return 0
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
