package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// shBlock finds README.md's shell blocks: ```sh, with an optional tag
// ("token": needs SoftHSM2), up to the closing fence.
var shBlock = regexp.MustCompile("(?ms)^```sh( [a-z]+)?\n(.*?)^```\n")

// TestReadme runs every ```sh block of README.md, in order, in one bash
// (set -euo pipefail), from the checkout, as a new user pastes them: with
// a fresh HOME (so ~/writ-tour is new) and GOPATH, the Go caches and
// settings of this machine, and no network needed. Then it checks that
// the tour showed what README says it shows. A block tagged token needs
// SoftHSM2: without it the block is left out, said in the log, unless
// WRIT_REQUIRE_SOFTHSM is set (as CI sets it), which fails instead.
func TestReadme(t *testing.T) {
	if raceBuild {
		t.Skip("the README's tour runs writ as a user installs it, not this race-instrumented test binary: the plain go test ./... step runs it")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, hsmErr := os.Stat("/usr/lib/softhsm/libsofthsm2.so")
	_, utilErr := exec.LookPath("softhsm2-util")
	haveHSM := hsmErr == nil && utilErr == nil
	script := []string{"set -euo pipefail", "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT"}
	blocks := shBlock.FindAllSubmatch(readme, -1)
	if len(blocks) < 10 {
		t.Fatalf("README.md has %d sh blocks; the tour has more", len(blocks))
	}
	for _, b := range blocks {
		if strings.TrimSpace(string(b[1])) == "token" && !haveHSM {
			if os.Getenv("WRIT_REQUIRE_SOFTHSM") != "" {
				t.Fatal("SoftHSM2 is required (WRIT_REQUIRE_SOFTHSM) and not installed: the README's token block cannot run")
			}
			t.Log("SoftHSM2 is not installed: the README's token block is left out")
			continue
		}
		script = append(script, string(b[2]))
	}
	home := t.TempDir()
	env := []string{"HOME=" + home, "GOPATH=" + filepath.Join(home, "go"), "GOPROXY=off", "TZ=UTC"}
	for _, k := range []string{"GOENV", "GOMODCACHE", "GOCACHE"} {
		out, err := exec.Command("go", "env", k).Output()
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, k+"="+strings.TrimSpace(string(out)))
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH", "LANG", "GOFLAGS", "GOTOOLCHAIN", "TMPDIR":
			env = append(env, kv)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", strings.Join(script, "\n"))
	cmd.Dir, cmd.Env = "../..", env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // a server a block left running
	if err != nil {
		t.Fatalf("the README's blocks failed: %v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{
		"exceeds-parent",             // the wider re-delegation, refused by delegate --ledger
		"refused: exit 1",            // ... and the quarantined machine's dispatch
		"verdict: admitted",          // the signed dispatch under enforce
		"verdict: admitted-unsigned", // the unsigned one under off
		"rule: quarantined",
		"\nyes\n  1. delegation at index 3", // authority explain: the lead's delegation to the operator
		"under delegation sha256:",          // inspect --ledger
		"matching decisions listed",         // audit --list
		"valid: the entry is in the tree",   // verify-receipt
		"writ: monitor: ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the tour's output lacks %q:\n%s", want, text)
		}
	}
	if haveHSM && !strings.Contains(text, "binary agent v1.0.1 ") {
		t.Errorf("the token block did not pin:\n%s", text)
	}
}
