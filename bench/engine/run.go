package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// running are the services started, and stops the servers: fail ends
// them, so that none outlives the benchmark.
var (
	running []*exec.Cmd
	stops   []func() error
)

func stopAll() {
	for _, cmd := range running {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
	}
	for _, stop := range stops {
		stop()
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/engine:", err)
		stopAll()
		os.Exit(1)
	}
}

// stop stops a service with SIGTERM, which must exit 0.
func stop(cmd *exec.Cmd) {
	cmd.Process.Signal(syscall.SIGTERM)
	check(cmd.Wait())
}

// run runs name args in dir with more environment, and returns its
// stdout; a failure fails the benchmark with its stderr.
func run(dir string, env []string, name string, args ...string) []byte {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "WRIT_PASSPHRASE=bench"), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		check(fmt.Errorf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, errb.Bytes()))
	}
	return out.Bytes()
}

// copyLedger copies the ledger to a new directory named name.
func (b *bench) copyLedger(name string) string {
	return copyDir(b.ledger, filepath.Join(b.work, name))
}

func copyDir(from, to string) string {
	run("", nil, "cp", "-a", from, to)
	return to
}

// waitCheckpoint waits up to 5 minutes for the checkpoint file to name
// a tree of size entries.
func waitCheckpoint(file string, size int64) {
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		data, _ := os.ReadFile(file)
		if lines := strings.Split(string(data), "\n"); len(lines) > 1 && lines[1] == strconv.FormatInt(size, 10) {
			return
		}
	}
	check(fmt.Errorf("%s did not reach %d entries within 5 minutes", file, size))
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}
