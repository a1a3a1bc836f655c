package testkit

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/mod/sumdb/note"
)

// RequireLitewitnessEnv is the environment variable that, set to "1",
// makes Litewitness fail the test instead of skipping it when litewitness
// cannot be built here. CI sets it.
const RequireLitewitnessEnv = "WRIT_REQUIRE_LITEWITNESS"

// The torchwood commands BuildLitewitness builds, at the version go.mod
// pins (its tool lines keep their dependencies in go.sum).
const (
	LitewitnessPackage = "filippo.io/torchwood/cmd/litewitness"
	WitnessctlPackage  = "filippo.io/torchwood/cmd/witnessctl"
)

// errNoLitewitness is returned (wrapped, with the go command's output) by
// BuildLitewitness when the go command cannot build litewitness and
// witnessctl: no go command, or modules that cannot be downloaded. Both
// are pure Go (SQLite through modernc.org/sqlite, no cgo).
var errNoLitewitness = errors.New("litewitness could not be built")

// LitewitnessStartTimeout bounds how long StartLitewitness waits for one
// litewitness process to answer HTTP.
const LitewitnessStartTimeout = 15 * time.Second

// LitewitnessBinaries are the paths of a built litewitness and witnessctl.
type LitewitnessBinaries struct {
	Litewitness, Witnessctl string
}

// BuildLitewitness builds LitewitnessPackage and WitnessctlPackage into
// dir with `go build`, run from the root of the module of the current
// directory (go env GOMOD), so at the version its go.mod requires. The
// error wraps errNoLitewitness.
func BuildLitewitness(dir string) (LitewitnessBinaries, error) {
	var b LitewitnessBinaries
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	if err == nil && (root == "." || strings.TrimSpace(string(gomod)) == os.DevNull) {
		err = errors.New("not in a module")
	}
	if err != nil {
		return b, fmt.Errorf("testkit: %w: no module root from `go env GOMOD` (%w)", errNoLitewitness, err)
	}
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), LitewitnessPackage, WitnessctlPackage)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return b, fmt.Errorf("testkit: %w: go build in %s: %v\n%s", errNoLitewitness, root, err, out)
	}
	return LitewitnessBinaries{Litewitness: filepath.Join(dir, "litewitness"), Witnessctl: filepath.Join(dir, "witnessctl")}, nil
}

// ServeSSHAgent serves the ssh-agent protocol on a new UNIX socket, from
// golang.org/x/crypto/ssh/agent's in-memory keyring holding keys, each
// connection in its own goroutine. It returns the socket's path (in a new
// short temporary directory: socket paths are limited to 108 bytes) and a
// stop function that closes the socket and every connection and removes
// the directory.
func ServeSSHAgent(keys ...ed25519.PrivateKey) (sock string, stop func(), err error) {
	ring := agent.NewKeyring()
	for _, k := range keys {
		if err := ring.Add(agent.AddedKey{PrivateKey: k, Comment: "writ test key"}); err != nil {
			return "", nil, fmt.Errorf("testkit: agent key: %w", err)
		}
	}
	dir, err := os.MkdirTemp("", "writ-agent-")
	if err != nil {
		return "", nil, err
	}
	sock = filepath.Join(dir, "agent.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("testkit: agent socket: %w", err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				agent.ServeAgent(ring, c) // returns when the client hangs up
				c.Close()
			}()
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			l.Close()
			mu.Lock()
			for _, c := range conns {
				c.Close()
			}
			mu.Unlock()
			wg.Wait()
			os.RemoveAll(dir)
		})
	}
	return sock, stop, nil
}

// LitewitnessConfig configures StartLitewitness.
type LitewitnessConfig struct {
	// Name is the witness's name (-name), the key name of its
	// cosignature lines.
	Name string
	// Key is the witness's Ed25519 key, served by an in-process ssh-agent
	// (ServeSSHAgent); litewitness selects it by its SSH SHA256
	// fingerprint (-key).
	Key ed25519.PrivateKey
	// Logs are the signed-note verifier keys of the logs it witnesses,
	// each added as witnessctl does (AddLog) before it starts.
	Logs []string
}

// LitewitnessProcess is a running litewitness (StartLitewitness).
type LitewitnessProcess struct {
	// URL is its base URL, "http://127.0.0.1:PORT": its tlog-witness
	// submission prefix (it serves POST /add-checkpoint at the root).
	URL string
	// VKey is the verifier key litewitness shows on its index page (its
	// cosignature/v1 vkey, torchwood's own encoding).
	VKey string
	// DB is the path of its SQLite database.
	DB string

	bins    LitewitnessBinaries
	cmd     *exec.Cmd
	stderr  *lockedBuffer
	exited  chan struct{}
	waitErr error
	stop    func() error
}

// StartLitewitness runs bins.Litewitness with a fresh SQLite database in
// dir, cfg.Logs added to it with bins.Witnessctl (add-log, then add-key:
// the rows `log` (origin, size 0, the empty tree's hash) and `key`
// (origin, vkey)), its key in an in-process ssh-agent, listening on
// 127.0.0.1 on a port the kernel picked a moment before (4 tries when the
// port was taken meanwhile). It returns once GET / answers 200 with the
// witness's name, or an error quoting litewitness's log (at the latest
// after LitewitnessStartTimeout).
func StartLitewitness(dir string, bins LitewitnessBinaries, cfg LitewitnessConfig) (*LitewitnessProcess, error) {
	db := filepath.Join(dir, "litewitness.db")
	p := &LitewitnessProcess{DB: db, bins: bins}
	for _, vkey := range cfg.Logs {
		if err := p.AddLog(vkey); err != nil {
			return nil, err
		}
	}
	sock, stopAgent, err := ServeSSHAgent(cfg.Key)
	if err != nil {
		return nil, err
	}
	pub, err := ssh.NewPublicKey(cfg.Key.Public())
	if err != nil {
		stopAgent()
		return nil, fmt.Errorf("testkit: ssh public key: %w", err)
	}
	for try := 0; ; try++ {
		retry, err := p.startOnce(cfg.Name, ssh.FingerprintSHA256(pub), sock)
		if err == nil {
			stopProc := p.stop
			p.stop = func() error { defer stopAgent(); return stopProc() }
			return p, nil
		}
		if !retry || try == 3 {
			stopAgent()
			return nil, err
		}
	}
}

// startOnce makes one try on one free port; retry says litewitness could
// not bind it.
func (p *LitewitnessProcess) startOnce(name, fingerprint, sock string) (retry bool, err error) {
	port, err := freePort()
	if err != nil {
		return false, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	p.URL = "http://" + addr
	p.stderr = &lockedBuffer{}
	p.exited = make(chan struct{})
	p.cmd = exec.Command(p.bins.Litewitness, "-name", name, "-db", p.DB, "-ssh-agent", sock, "-key", fingerprint, "-listen", addr)
	p.cmd.Stdout, p.cmd.Stderr = p.stderr, p.stderr
	if err := p.cmd.Start(); err != nil {
		return false, fmt.Errorf("testkit: starting litewitness: %w", err)
	}
	go func() { p.waitErr = p.cmd.Wait(); close(p.exited) }()
	var once sync.Once
	var stopErr error
	p.stop = func() error {
		once.Do(func() { stopErr = p.terminate() })
		return stopErr
	}
	client := &http.Client{Timeout: time.Second}
	defer client.CloseIdleConnections()
	deadline := time.Now().Add(LitewitnessStartTimeout)
	for {
		select {
		case <-p.exited:
			l := p.stderr.String()
			return strings.Contains(l, "address already in use"),
				fmt.Errorf("testkit: litewitness exited before serving (%v) on %s\n%s", p.waitErr, addr, l)
		default:
		}
		if vkey, ok := litewitnessIndex(client, p.URL, name); ok {
			p.VKey = vkey
			return false, nil
		}
		if time.Now().After(deadline) {
			p.stop()
			return false, fmt.Errorf("testkit: litewitness did not answer on %s within %v\n%s", addr, LitewitnessStartTimeout, p.stderr.String())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// litewitnessIndex reads litewitness's index page: "# litewitness NAME",
// then its verifier key on a line of its own.
func litewitnessIndex(c *http.Client, url, name string) (vkey string, ok bool) {
	resp, err := c.Get(url + "/")
	if err != nil {
		return "", false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_, rest, found := strings.Cut(string(b), "# litewitness "+name+"\n\n")
	if resp.StatusCode != http.StatusOK || !found {
		return "", false
	}
	vkey, _, _ = strings.Cut(rest, "\n")
	return vkey, true
}

// terminate sends SIGINT (litewitness shuts its server down on it and
// exits 0), waits up to 10 s, then kills it. It reports an exit litewitness
// made by itself before, a kill, or a non-zero exit.
func (p *LitewitnessProcess) terminate() error {
	select {
	case <-p.exited:
		return fmt.Errorf("testkit: litewitness on %s had exited by itself (%v)\n%s", p.URL, p.waitErr, p.stderr.String())
	default:
	}
	p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("testkit: litewitness on %s ignored SIGINT for 10s; killed\n%s", p.URL, p.stderr.String())
	}
	if p.waitErr != nil {
		return fmt.Errorf("testkit: litewitness on %s: %v\n%s", p.URL, p.waitErr, p.stderr.String())
	}
	return nil
}

// Stop stops litewitness and its ssh-agent (see terminate); calling it
// again returns the same error.
func (p *LitewitnessProcess) Stop() error { return p.stop() }

// AddLog adds the log of the signed-note verifier key vkey, whose key
// name is its origin, to the database as `witnessctl add-log` and
// `witnessctl add-key` do; litewitness reads the database on every
// request, so it may be running.
func (p *LitewitnessProcess) AddLog(vkey string) error {
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return fmt.Errorf("testkit: litewitness log key %q: %w", vkey, err)
	}
	if _, err := p.witnessctl("add-log", "-db", p.DB, "-origin", v.Name()); err != nil {
		return err
	}
	_, err = p.witnessctl("add-key", "-db", p.DB, "-origin", v.Name(), "-key", vkey)
	return err
}

// LitewitnessLog is one log in litewitness's database, as `witnessctl
// list-logs` prints it: the size and root hash (base64) it last cosigned
// (0 and the empty tree's hash before any) and the log's keys.
type LitewitnessLog struct {
	Origin   string   `json:"origin"`
	Size     int64    `json:"size"`
	RootHash string   `json:"root_hash"`
	Keys     []string `json:"keys"`
}

// ListLogs returns the logs in litewitness's database (`witnessctl
// list-logs`), ordered by origin.
func (p *LitewitnessProcess) ListLogs() ([]LitewitnessLog, error) {
	out, err := p.witnessctl("list-logs", "-db", p.DB)
	if err != nil {
		return nil, err
	}
	var logs []LitewitnessLog
	for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		if line == "" {
			continue
		}
		var l LitewitnessLog
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			return nil, fmt.Errorf("testkit: witnessctl list-logs printed %q: %w", line, err)
		}
		logs = append(logs, l)
	}
	return logs, nil
}

// witnessctl runs witnessctl with args and returns its standard output.
func (p *LitewitnessProcess) witnessctl(args ...string) ([]byte, error) {
	cmd := exec.Command(p.bins.Witnessctl, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("testkit: witnessctl %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, nil
}

// Litewitness builds litewitness (BuildLitewitness) and starts it
// (StartLitewitness) for the test, stopping it at cleanup (an error then
// fails the test). When it cannot be built here the test is skipped, or
// fails if RequireLitewitnessEnv is "1"; any other error fails it.
func Litewitness(t testing.TB, cfg LitewitnessConfig) *LitewitnessProcess {
	t.Helper()
	bins, err := BuildLitewitness(t.TempDir())
	requireOrSkip(t, err, errNoLitewitness, RequireLitewitnessEnv)
	p, err := StartLitewitness(t.TempDir(), bins, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Error(err)
		}
	})
	return p
}

// lockedBuffer is a bytes.Buffer safe for a process's output and readers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
