package testkit

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// daemon is a server process a test starts: its output, kept for error
// messages, and its exit.
type daemon struct {
	name    string
	cmd     *exec.Cmd
	out     lockedBuffer
	exited  chan struct{}
	waitErr error // set before exited is closed
}

// startDaemon starts name (a server binary) with args and env added to
// the environment.
func startDaemon(name, bin string, args, env []string) (*daemon, error) {
	d := &daemon{name: name, exited: make(chan struct{})}
	d.cmd = exec.Command(bin, args...)
	d.cmd.Env = append(os.Environ(), env...)
	d.cmd.Stdout, d.cmd.Stderr = &d.out, &d.out
	if err := d.cmd.Start(); err != nil {
		return nil, fmt.Errorf("testkit: starting %s: %w", bin, err)
	}
	go func() { d.waitErr = d.cmd.Wait(); close(d.exited) }()
	return d, nil
}

// waitFor polls ready every 25 ms until it says yes, the process exits or
// timeout passes (the process is then stopped); the error carries the
// process's output.
func (d *daemon) waitFor(ready func() bool, timeout time.Duration) error {
	for deadline := time.Now().Add(timeout); ; time.Sleep(25 * time.Millisecond) {
		select {
		case <-d.exited:
			return fmt.Errorf("testkit: %s exited before serving (%v)\n%s", d.name, d.waitErr, d.out.String())
		default:
		}
		if ready() {
			return nil
		} else if time.Now().After(deadline) {
			d.terminate(syscall.SIGTERM)
			return fmt.Errorf("testkit: %s did not serve within %v\n%s", d.name, timeout, d.out.String())
		}
	}
}

// terminate sends sig and waits up to 20 s for the process to exit, then
// kills it; it says whether it had to.
func (d *daemon) terminate(sig syscall.Signal) (killed bool) {
	d.cmd.Process.Signal(sig)
	select {
	case <-d.exited:
		return false
	case <-time.After(20 * time.Second):
		d.cmd.Process.Kill()
		<-d.exited
		return true
	}
}

// stop stops the process with SIGTERM, saying so when it had exited by
// itself, ignored SIGTERM, or exited with an error.
func (d *daemon) stop() error {
	select {
	case <-d.exited:
		return fmt.Errorf("testkit: %s had exited by itself (%v)\n%s", d.name, d.waitErr, d.out.String())
	default:
	}
	if d.terminate(syscall.SIGTERM) {
		return fmt.Errorf("testkit: %s ignored SIGTERM for 20 s; killed\n%s", d.name, d.out.String())
	} else if d.waitErr != nil {
		return fmt.Errorf("testkit: %s: %v\n%s", d.name, d.waitErr, d.out.String())
	}
	return nil
}

// requireOrSkip skips the test when err is errMissing (a tool or server that is
// not installed), or fails it when the environment sets env to "1"; any
// other error fails it.
func requireOrSkip(t testing.TB, err, errMissing error, env string) {
	t.Helper()
	if errors.Is(err, errMissing) {
		if os.Getenv(env) == "1" {
			t.Fatalf("%v; %s=1 requires it", err, env)
		}
		t.Skipf("skipping: %v; set %s=1 to fail instead", err, env)
	}
	if err != nil {
		t.Fatal(err)
	}
}
