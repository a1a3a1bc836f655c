package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
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

// procStatus is a field of a live process's /proc/PID/status given in
// kB (VmHWM: its peak RSS; RssAnon, RssFile), in KiB.
func procStatus(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	check(err)
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field+":" {
			n, err := strconv.ParseInt(f[1], 10, 64)
			check(err)
			return n
		}
	}
	fail("no %s for process %d", field, pid)
	return 0
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// cpuBound prints the CPU time a record took in process and through the
// service (the service's and its submitters', which share this machine's
// cores), the rate that CPU alone allows the service (all cores busy for
// the whole run) against the in-process rate, and what the HTTP exchange
// alone costs (floor).
func cpuBound(n int, inRate float64, inCPU time.Duration, svc serviceRun, floor time.Duration) {
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(n) }
	total := per(svc.serviceCPU) + per(svc.clientCPU)
	most := float64(runtime.NumCPU()) * 1e6 / total
	fmt.Printf("CPU a record: in process %.0f µs; service %.0f µs + submitters %.0f µs = %.0f µs\n",
		per(inCPU), per(svc.serviceCPU), per(svc.clientCPU), total)
	fmt.Printf("  all %d cores busy, that allows the service %.0f records/s: %.2f of the in-process rate\n",
		runtime.NumCPU(), most, most/inRate)
	us := float64(floor.Nanoseconds()) / 1e3
	fmt.Printf("  an HTTP POST of a record and a 1 KiB answer alone, both sides: %.0f µs; in process + it = %.0f µs would allow %.2f\n",
		us, per(inCPU)+us, float64(runtime.NumCPU())*1e6/(per(inCPU)+us)/inRate)
}

// selfCPU is this process's user and system CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	check(syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procCPU is a live process's user and system CPU time so far
// (/proc/PID/stat, in clock ticks of 10 ms).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	check(err)
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // fields from the third (state) on
	utime, err := strconv.ParseInt(f[11], 10, 64)
	check(err)
	stime, err := strconv.ParseInt(f[12], 10, 64)
	check(err)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// httpFloor is the CPU time, client's and server's, of one POST of rec
// and a 1 KiB answer over HTTP on loopback, from 64 submitters in this
// process to a handler that does nothing else: what carrying a record to
// a service and its answer back costs before the service does anything.
func httpFloor(recs [][]byte) time.Duration {
	answer := bytes.Repeat([]byte("x"), 1024)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(answer)
	}))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	cpu0 := selfCPU()
	drive(recs, func(rec []byte) error {
		resp, err := client.Post(srv.URL, "application/octet-stream", bytes.NewReader(rec))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	})
	return (selfCPU() - cpu0) / time.Duration(len(recs))
}
