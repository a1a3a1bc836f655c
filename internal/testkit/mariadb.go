package testkit

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql" // the MySQL protocol for database/sql
)

// RequireMariaDBEnv is the environment variable that, set to "1", makes
// MariaDBForTest fail the test instead of skipping it when MariaDB is not
// installed. CI sets it.
const RequireMariaDBEnv = "WRIT_REQUIRE_MARIADB"

// errNoMariaDB is wrapped by StartMariaDB's error when mariadbd or
// mariadb-install-db is not installed.
var errNoMariaDB = errors.New("MariaDB is not installed (Debian: apt-get install -y mariadb-server)")

// MariaDBStartTimeout bounds how long StartMariaDB waits for the server
// to take connections.
const MariaDBStartTimeout = 60 * time.Second

// MariaDB is a real MariaDB server (Debian's mariadbd) a test started:
// its own data directory in a temporary directory, listening on
// 127.0.0.1 only, its grant tables skipped (any user name connects, with
// every privilege: a server for one test, on loopback). Its methods may
// be called from any goroutine.
type MariaDB struct {
	// Port is the TCP port it listens on, on 127.0.0.1; a restart keeps it.
	Port int
	dir  string
	bin  string
	mu   sync.Mutex
	proc *daemon // nil while stopped
}

// mariadbBinaries finds mariadbd and mariadb-install-db (on PATH, or in
// /usr/sbin and /usr/bin, where Debian puts them).
func mariadbBinaries() (server, install string, err error) {
	find := func(name string) string {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
		for _, d := range []string{"/usr/sbin", "/usr/bin"} {
			if fi, err := os.Stat(filepath.Join(d, name)); err == nil && fi.Mode()&0o111 != 0 {
				return filepath.Join(d, name)
			}
		}
		return ""
	}
	server, install = find("mariadbd"), find("mariadb-install-db")
	if server == "" || install == "" {
		return "", "", fmt.Errorf("testkit: %w", errNoMariaDB)
	}
	return server, install, nil
}

// StartMariaDB makes a data directory in a new temporary directory
// (mariadb-install-db), starts mariadbd on it on a free port of
// 127.0.0.1, and returns once it takes connections. Stop stops it and
// removes the directory. The error wraps errNoMariaDB when MariaDB is not
// installed.
func StartMariaDB() (*MariaDB, error) {
	server, install, err := mariadbBinaries()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "writ-mariadb-")
	if err != nil {
		return nil, fmt.Errorf("testkit: mariadb temp dir: %w", err)
	}
	// Temporary tables in a directory of its own: in the shared /tmp, a
	// file left by a killed server of another run, named by pid, stopped
	// the install once.
	if err := os.Mkdir(filepath.Join(dir, "tmp"), 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("testkit: mariadb temp dir: %w", err)
	}
	installCmd := exec.Command(install, "--no-defaults", "--datadir="+filepath.Join(dir, "data"), "--skip-test-db",
		"--auth-root-authentication-method=normal")
	installCmd.Env = append(os.Environ(), "TMPDIR="+filepath.Join(dir, "tmp"))
	out, err := installCmd.CombinedOutput()
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("testkit: mariadb-install-db: %v\n%s", err, out)
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	m := &MariaDB{Port: port, dir: dir, bin: server}
	if err := m.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return m, nil
}

// Start starts the server again on its data directory and port, after
// Kill or Stop (a database restart); it returns once it takes
// connections.
func (m *MariaDB) Start() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.proc != nil {
		return errors.New("testkit: mariadb is running")
	}
	args := []string{"--no-defaults", "--datadir=" + filepath.Join(m.dir, "data"), "--socket=" + filepath.Join(m.dir, "sock"),
		"--pid-file=" + filepath.Join(m.dir, "mariadbd.pid"), "--port=" + strconv.Itoa(m.Port), "--bind-address=127.0.0.1",
		"--skip-grant-tables", "--skip-name-resolve", "--innodb-buffer-pool-size=64M", "--max-connections=512",
		"--log-error=" + filepath.Join(m.dir, "error.log"), "--tmpdir=" + filepath.Join(m.dir, "tmp")}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root") // mariadbd refuses to run as root without it
	}
	p, err := startDaemon("mariadbd", m.bin, args, nil)
	if err != nil {
		return err
	}
	if err := p.waitFor(m.ping, MariaDBStartTimeout); err != nil {
		b, _ := os.ReadFile(filepath.Join(m.dir, "error.log"))
		return fmt.Errorf("%w\nerror.log:\n%s", err, b)
	}
	m.proc = p
	return nil
}

// ping says whether the server takes a connection.
func (m *MariaDB) ping() bool {
	db, err := sql.Open("mysql", m.DSN(""))
	if err != nil {
		return false
	}
	defer db.Close()
	return db.Ping() == nil
}

// DSN is the go-sql-driver/mysql DSN of database name on the server
// ("" for none).
func (m *MariaDB) DSN(name string) string {
	return fmt.Sprintf("root@tcp(127.0.0.1:%d)/%s", m.Port, name)
}

// CreateDatabase creates the database name and returns its DSN.
func (m *MariaDB) CreateDatabase(name string) (string, error) {
	db, err := sql.Open("mysql", m.DSN(""))
	if err != nil {
		return "", err
	}
	defer db.Close()
	if _, err := db.Exec("CREATE DATABASE `" + name + "`"); err != nil {
		return "", fmt.Errorf("testkit: creating database %s: %w", name, err)
	}
	return m.DSN(name), nil
}

// Kill stops the server with SIGKILL, as a crash does.
func (m *MariaDB) Kill() { m.halt(syscall.SIGKILL) }

// halt stops the server with sig and waits for it to exit.
func (m *MariaDB) halt(sig syscall.Signal) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.proc == nil {
		return nil
	}
	p := m.proc
	m.proc = nil
	if sig == syscall.SIGKILL {
		p.cmd.Process.Kill()
		<-p.exited
		return nil
	}
	return p.stop()
}

// Stop stops the server (SIGTERM) and removes its directory; it reports
// a server that had exited by itself or did not exit cleanly.
func (m *MariaDB) Stop() error {
	err := m.halt(syscall.SIGTERM)
	os.RemoveAll(m.dir)
	return err
}

// MariaDBForTest starts MariaDB as StartMariaDB does; t.Cleanup stops it
// and reports a failed stop with t.Error. Without MariaDB installed it
// skips the test, or fails it when the environment sets
// WRIT_REQUIRE_MARIADB=1.
func MariaDBForTest(t testing.TB) *MariaDB {
	t.Helper()
	m, err := StartMariaDB()
	requireOrSkip(t, err, errNoMariaDB, RequireMariaDBEnv)
	t.Cleanup(func() {
		if err := m.Stop(); err != nil {
			t.Error(err)
		}
	})
	return m
}
