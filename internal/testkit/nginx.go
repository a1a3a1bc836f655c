package testkit

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
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
	"testing"
	"time"
)

// RequireNginxEnv is the environment variable that, set to "1", makes
// Nginx fail the test instead of skipping it when no nginx binary is
// installed. CI sets it.
const RequireNginxEnv = "WRIT_REQUIRE_NGINX"

// errNoNginx is returned (wrapped) by NginxBinary and StartNginx when no
// nginx binary is found on PATH nor at /usr/sbin/nginx.
var errNoNginx = errors.New("nginx is not installed (Debian: apt-get install -y nginx)")

// NginxStartTimeout bounds how long StartNginx waits for one nginx
// process to answer HTTP before giving up on it.
const NginxStartTimeout = 15 * time.Second

// readyPath is served only by the generated config, with a per-start random
// token: StartNginx knows it reached its nginx, not whoever took the port.
const readyPath = "/.testkit-ready"

// NginxBinary returns the absolute path of the nginx binary: the one on
// PATH, else /usr/sbin/nginx (not on a non-root user's PATH on Debian).
// The error wraps errNoNginx when neither exists.
func NginxBinary() (string, error) {
	if p, err := exec.LookPath("nginx"); err == nil {
		return filepath.Abs(p)
	}
	const sbin = "/usr/sbin/nginx"
	if fi, err := os.Stat(sbin); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
		return sbin, nil
	}
	return "", fmt.Errorf("testkit: %w", errNoNginx)
}

// StartNginx runs a real nginx serving the directory root over plain
// HTTP on 127.0.0.1, laid out as a C2SP tlog-tiles log, and returns its
// base URL ("http://127.0.0.1:PORT", no trailing slash) and a stop
// function.
//
// nginx runs in the foreground (daemon off) with its own master and
// worker processes, as the current user (with `user root;` when that user
// is root, so workers can read a root-only root), from a config in a
// fresh temporary directory that also holds its pid file, error.log,
// access.log and every temp path. Responses:
//   - /checkpoint: Content-Type "text/plain; charset=utf-8",
//     Cache-Control "no-cache";
//   - /tile/... and /writ/...: Content-Type application/octet-stream,
//     Cache-Control "public, max-age=31536000, immutable" (on 2xx/3xx
//     only: a 404 is never cached);
//   - anything else: application/octet-stream, no Cache-Control;
//   - gzip for bodies of 20 bytes or more when the client accepts it.
//
// The kernel picks a free port; if nginx fails to bind it, StartNginx
// tries another, 4 tries in all. It returns once nginx answers HTTP, or
// an error quoting nginx's error log (at the latest after
// NginxStartTimeout); the error wraps errNoNginx without nginx.
//
// stop sends SIGTERM, waits up to 10 s (then kills), removes the
// temporary directory and returns an error if nginx had exited on its
// own or did not exit cleanly; calling it again returns the same error.
func StartNginx(root string) (url string, stop func() error, err error) {
	bin, err := NginxBinary()
	if err != nil {
		return "", nil, err
	}
	root, err = filepath.Abs(root)
	if err != nil {
		return "", nil, fmt.Errorf("testkit: nginx root: %w", err)
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		if err == nil {
			err = errors.New("not a directory")
		}
		return "", nil, fmt.Errorf("testkit: nginx root %s is not a directory (%w)", root, err)
	}
	if err := confSafe(root); err != nil {
		return "", nil, err
	}
	return startTries(func() (string, func() error, bool, error) { return startNginxOnce(bin, root) })
}

// startTries makes up to 4 tries of once, another only after a try that
// failed to bind its port, and returns the first success or every
// error.
func startTries(once func() (url string, stop func() error, bindFailed bool, err error)) (string, func() error, error) {
	var errs []error
	for try := 0; try < 4; try++ {
		url, stop, bindFailed, err := once()
		if err == nil {
			return url, stop, nil
		}
		errs = append(errs, err)
		if !bindFailed {
			break
		}
	}
	return "", nil, errors.Join(errs...)
}

// Nginx starts nginx on root as StartNginx does and returns its base URL
// ("http://127.0.0.1:PORT"); t.Cleanup stops it and reports a failed
// stop with t.Error. Without nginx installed it skips the test, or fails
// it when the environment sets WRIT_REQUIRE_NGINX=1; any other start
// error fails the test.
func Nginx(t testing.TB, root string) string {
	t.Helper()
	url, stop, err := StartNginx(root)
	return forTest(t, url, stop, err)
}

// forTest is what Nginx and NginxProxy do with a start's result.
func forTest(t testing.TB, url string, stop func() error, err error) string {
	t.Helper()
	requireOrSkip(t, err, errNoNginx, RequireNginxEnv)
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	})
	return url
}

// confSafe rejects a path that cannot be written as a quoted nginx config
// string: nginx expands $ in root and has no escape for it.
func confSafe(p string) error {
	if strings.ContainsAny(p, "\"\\$'\x00\n\r") {
		return fmt.Errorf("testkit: nginx cannot be configured with path %q (quote, backslash, $ or newline)", p)
	}
	return nil
}

// startNginxOnce makes one try on one free port. bindFailed says the
// error was nginx failing to bind that port, worth another try.
func startNginxOnce(bin, root string) (url string, stop func() error, bindFailed bool, err error) {
	return startNginxWith(bin, "http", func(dir string, port int, token string) string { return nginxConf(dir, root, port, token) })
}

// startNginxWith makes one try on one free port with the config conf
// writes (for dir, the port and the ready token), nginx answering on
// scheme.
func startNginxWith(bin, scheme string, conf func(dir string, port int, token string) string) (url string, stop func() error, bindFailed bool, err error) {
	dir, err := os.MkdirTemp("", "writ-nginx-")
	if err != nil {
		return "", nil, false, fmt.Errorf("testkit: nginx temp dir: %w", err)
	}
	fail := func(bind bool, err error) (string, func() error, bool, error) {
		os.RemoveAll(dir)
		return "", nil, bind, err
	}
	port, err := freePort()
	if err == nil {
		err = confSafe(dir)
	}
	if err != nil {
		return fail(false, err)
	}
	tok := make([]byte, 16)
	rand.Read(tok)
	token := hex.EncodeToString(tok)
	confFile := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confFile, []byte(conf(dir, port, token)), 0o600); err != nil {
		return fail(false, fmt.Errorf("testkit: nginx config: %w", err))
	}
	errorLog := filepath.Join(dir, "error.log")
	d, err := startDaemon("nginx", bin, []string{"-p", dir + "/", "-c", confFile, "-e", errorLog}, nil)
	if err != nil {
		return fail(false, err)
	}
	p := &nginxProc{daemon: d, errorLog: errorLog}
	url = fmt.Sprintf("%s://127.0.0.1:%d", scheme, port)
	if err := p.waitReady(url, token); err != nil {
		return fail(strings.Contains(err.Error(), "Address already in use"), err)
	}
	var once sync.Once
	var stopErr error
	stop = func() error {
		once.Do(func() {
			defer os.RemoveAll(dir)
			stopErr = p.stop(url)
		})
		return stopErr
	}
	return url, stop, false, nil
}

// nginxProc is one running nginx master (its output and exit) and its
// error log. Stopping it sends SIGTERM to the master, which stops its
// workers; SIGKILL would leave the workers running, so it is only the
// last resort (daemon.terminate).
type nginxProc struct {
	*daemon
	errorLog string
}

// withLogs adds nginx's error log to err, for an error message.
func (p *nginxProc) withLogs(err error) error {
	b, _ := os.ReadFile(p.errorLog)
	return fmt.Errorf("%w\nnginx error.log:\n%s", err, b)
}

// waitReady waits until nginx serves readyPath with token at url, or
// fails: nginx exited, or did not answer within NginxStartTimeout (then
// it is stopped). The error carries nginx's logs.
func (p *nginxProc) waitReady(url, token string) error {
	// The proxy's certificate is the test's own: the token proves it is
	// this nginx.
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	defer client.CloseIdleConnections()
	if err := p.waitFor(func() bool { return ready(client, url, token) }, NginxStartTimeout); err != nil {
		return p.withLogs(fmt.Errorf("%w (on %s)", err, url))
	}
	return nil
}

// stop stops nginx, saying so when it had exited by itself, ignored
// SIGTERM, or exited with an error.
func (p *nginxProc) stop(url string) error {
	if err := p.daemon.stop(); err != nil {
		return p.withLogs(fmt.Errorf("%w (on %s)", err, url))
	}
	return nil
}

// ready says whether url serves readyPath with token.
func ready(c *http.Client, url, token string) bool {
	resp, err := c.Get(url + readyPath)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	return resp.StatusCode == http.StatusOK && strings.TrimSpace(string(b)) == token
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("testkit: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// nginxConf is the config StartNginx documents; dir holds every file
// nginx writes.
func nginxConf(dir, root string, port int, token string) string {
	user := "" // as root, workers would run as nobody and could not read root
	if os.Geteuid() == 0 {
		user = "user root root;\n"
	}
	return fmt.Sprintf(`# generated by writ internal/testkit.StartNginx
daemon off;
master_process on;
worker_processes auto;
%[1]spid "%[2]s/nginx.pid";
error_log "%[2]s/error.log" notice;
events { worker_connections 1024; }
http {
    access_log "%[2]s/access.log";
    client_body_temp_path "%[2]s/client_body";
    proxy_temp_path "%[2]s/proxy";
    fastcgi_temp_path "%[2]s/fastcgi";
    uwsgi_temp_path "%[2]s/uwsgi";
    scgi_temp_path "%[2]s/scgi";
    server_tokens off; sendfile on; tcp_nopush on;
    types { }
    default_type application/octet-stream;
    gzip on; gzip_vary on; gzip_types application/octet-stream text/plain;
    server {
        listen 127.0.0.1:%[3]d;
        server_name localhost;
        root "%[4]s";
        location = /checkpoint {
            default_type "text/plain; charset=utf-8";
            add_header Cache-Control "no-cache";
        }
        location /tile/ { %[5]s }
        location /writ/ { %[5]s }
        location = %[6]s { access_log off; default_type text/plain; return 200 "%[7]s\n"; }
    }
}
`, user, dir, port, root,
		`add_header Cache-Control "public, max-age=31536000, immutable";`, readyPath, token)
}

// StartNginxProxy starts Debian's nginx as a TLS-terminating reverse
// proxy, as README documents it in front of `writ ledger serve --write`:
// it listens for HTTPS on 127.0.0.1 (a free port) with the certificate
// chain certFile and key keyFile (PEM), passes every request to upstream
// (http://127.0.0.1:PORT) over HTTP/1.1 keep-alive connections with
// X-Real-IP and X-Forwarded-For set, bodies up to 2 MiB. It returns the
// proxy's https:// URL; stop as for StartNginx.
func StartNginxProxy(upstream, certFile, keyFile string) (url string, stop func() error, err error) {
	bin, err := NginxBinary()
	if err != nil {
		return "", nil, err
	}
	for _, p := range []string{upstream, certFile, keyFile} {
		if err := confSafe(p); err != nil {
			return "", nil, err
		}
	}
	return startTries(func() (string, func() error, bool, error) {
		return startNginxWith(bin, "https", func(dir string, port int, token string) string {
			user := "" // as root, workers would run as nobody and could not use dir
			if os.Geteuid() == 0 {
				user = "user root root;\n"
			}
			return user + nginxProxyConf(dir, upstream, certFile, keyFile, port, token)
		})
	})
}

// nginxProxyConf is the config StartNginxProxy documents.
func nginxProxyConf(dir, upstream, certFile, keyFile string, port int, token string) string {
	return fmt.Sprintf(`# generated by writ internal/testkit.StartNginxProxy
daemon off;
master_process on;
worker_processes 1;
pid "%[1]s/nginx.pid";
error_log "%[1]s/error.log" notice;
events { worker_connections 1024; }
http {
    access_log "%[1]s/access.log";
    client_body_temp_path "%[1]s/client_body";
    proxy_temp_path "%[1]s/proxy";
    fastcgi_temp_path "%[1]s/fastcgi";
    uwsgi_temp_path "%[1]s/uwsgi";
    scgi_temp_path "%[1]s/scgi";
    server_tokens off;
    upstream writ { server %[2]s; keepalive 16; }
    server {
        listen 127.0.0.1:%[3]d ssl;
        server_name localhost;
        ssl_certificate "%[4]s";
        ssl_certificate_key "%[5]s";
        client_max_body_size 2m;
        location / {
            proxy_pass http://writ;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            proxy_set_header X-Real-IP $remote_addr;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        }
        location = %[6]s { access_log off; default_type text/plain; return 200 "%[7]s\n"; }
    }
}
`, dir, strings.TrimPrefix(upstream, "http://"), port, certFile, keyFile, readyPath, token)
}

// NginxProxy is StartNginxProxy for a test: t.Cleanup stops it; without
// nginx it skips the test, or fails it under WRIT_REQUIRE_NGINX=1 (as
// Nginx does).
func NginxProxy(t testing.TB, upstream, certFile, keyFile string) string {
	t.Helper()
	url, stop, err := StartNginxProxy(upstream, certFile, keyFile)
	return forTest(t, url, stop, err)
}
