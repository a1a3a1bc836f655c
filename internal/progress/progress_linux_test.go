package progress

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair: the terminal side is what a
// command's stderr would be on an operator's screen.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("no pseudo-terminal on this machine: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

// TestProgressOnTerminal: on a terminal, by default, a bar appears only
// once the work has run for Delay, shows the count and the time
// left, and is cleared when the work ends; off a terminal nothing is
// drawn.
func TestProgressOnTerminal(t *testing.T) {
	t.Setenv("WRIT_PROGRESS", "")
	master, tty := openPTY(t)
	p := For(tty, "verifying", "entries")
	if p == nil {
		t.Fatal("no progress on a terminal")
	}
	p(10, 100_000) // before the delay: nothing
	time.Sleep(Delay + 100*time.Millisecond)
	p(50_000, 100_000)
	p(100_000, 100_000)
	tty.Close()
	var out bytes.Buffer
	buf := make([]byte, 4096)
	master.SetReadDeadline(time.Now().Add(2 * time.Second))
	for {
		n, err := master.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			break // the terminal side is closed and all is read
		}
	}
	got := out.String()
	for _, want := range []string{"verifying", "50%", "(50000/100000", "entries/s"} {
		if !strings.Contains(got, want) {
			t.Errorf("the terminal shows %q; want %q in it", got, want)
		}
	}
	if !regexp.MustCompile(`\r {20,}\r$`).MatchString(got) {
		t.Errorf("the bar is not cleared at the end: %q", got)
	}
	if strings.Contains(got, "(10/") {
		t.Errorf("a frame before the delay: %q", got)
	}

	var notTTY bytes.Buffer
	if p := For(&notTTY, "verifying", "entries"); p != nil {
		t.Error("a bar for a stderr that is not a terminal")
	}
}
