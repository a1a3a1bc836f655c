package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/schemas"
)

// TestWriterService runs `writ ledger serve --write` as a process and
// submits to it with `writ ledger append --to`: the output is a local
// append's (index, kind, digest per record), a duplicate is refused with
// a local append's exit code, rule and message (naming the file), the
// ledger is held (a local append is busy, exit 4), SIGTERM drains and
// exits 0, and the ledger then verifies holding what was acknowledged.
// Plain HTTP is refused on an address that is not loopback.
func TestWriterService(t *testing.T) {
	t.Parallel() // a quarter minute waiting for a lock
	w := newCrashWorld(t, "example.com/writer-service")
	srv := startServer(t, w.dir, "ledger", "serve", "--write", "--dir", "W", "--listen", "127.0.0.1:0", "--addr-file", "addr")
	url := "http://" + waitAddr(t, filepath.Join(w.dir, "addr"))
	waitReady(t, &http.Client{}, url)
	names, recs := w.batch(2)
	// A local append waits for the ledger (ledgerdir.WriterLockWait, 15 s)
	// and gives up busy: the service holds it while it runs.
	local := exec.Command("writ", "ledger", "append", "--dir", "W", names[0])
	local.Dir, local.Env = w.dir, append(os.Environ(), "WRIT_PASSPHRASE="+floodPassphrase)
	localOut := make(chan string, 1)
	go func() {
		out, err := local.CombinedOutput()
		localOut <- fmt.Sprintf("%v\n%s", err, out)
	}()
	paths := make([]string, len(names))
	for i, n := range names {
		paths[i] = filepath.Join(w.dir, n)
	}
	code, out, errOut := runWrit(append([]string{"ledger", "append", "--to", url, "--vkey", w.vkey.String()}, paths...)...)
	if code != 0 {
		t.Fatalf("append --to: exit %d\n%s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(recs) {
		t.Fatalf("append --to printed %d lines for %d records:\n%s", len(lines), len(recs), out)
	}
	for i, line := range lines {
		if !strings.HasPrefix(line, fmt.Sprint(2+i)+" ") || !strings.HasSuffix(line, " "+schemas.SHA256Digest(recs[i])) {
			t.Fatalf("line %d: %q, want index %d and the record's digest", i, line, 2+i)
		}
	}
	code, _, errOut = runWrit(append([]string{"--json", "ledger", "append", "--to", url, "--vkey", w.vkey.String()}, paths[1])...)
	var f struct {
		Error, Rule string
		Exit        int
	}
	if json.Unmarshal([]byte(errOut), &f); code != 1 || f.Exit != 1 || f.Rule != "duplicate-record" ||
		!strings.HasPrefix(f.Error, "nothing appended: "+paths[1]+": record 1 of 1: refused as entry") {
		t.Fatalf("a duplicate: exit %d, %s", code, errOut)
	}
	wrong, err := formats.NewLogKey("example.com/writer-service", testkit.Key(t, 99).Public())
	if err != nil {
		t.Fatal(err)
	}
	newNames, _ := w.batch(1)
	code, _, errOut = runWrit("--json", "ledger", "append", "--to", url, "--vkey", wrong.String(), filepath.Join(w.dir, newNames[3]))
	if json.Unmarshal([]byte(errOut), &f); code != 1 || f.Rule != "vkey-mismatch" || !strings.HasPrefix(f.Error, "--vkey: ") {
		t.Fatalf("a wrong --vkey: exit %d, %s", code, errOut)
	}
	if code, _, errOut := runWrit("ledger", "append", "--to", url, paths[0]); code != 2 || !strings.Contains(errOut, "--vkey") {
		t.Fatalf("--to without --vkey: exit %d, %s", code, errOut)
	}
	// SIGHUP has nothing to reload without TLS: the service goes on.
	srv.Process.Signal(syscall.SIGHUP)
	time.Sleep(200 * time.Millisecond)
	waitReady(t, &http.Client{}, url)
	if out := <-localOut; local.ProcessState.ExitCode() != 4 {
		t.Fatalf("a local append while the service holds the ledger: %s, want exit 4 (busy)", out)
	}
	srv.Process.Signal(syscall.SIGTERM)
	if err := srv.Wait(); err != nil {
		t.Fatalf("the service after SIGTERM: %v, want exit 0", err)
	}
	if got := storedEntries(t, filepath.Join(w.dir, "W", "authority")); len(got) != 2+len(recs) {
		t.Fatalf("the ledger holds %d entries after the service stopped, want %d", len(got), 2+len(recs))
	}
	writIn(t, w.dir, "ledger", "verify", "--dir", "W")
	cmd := exec.Command("writ", "ledger", "serve", "--write", "--dir", "W", "--listen", "0.0.0.0:0")
	cmd.Dir, cmd.Env = w.dir, append(os.Environ(), "WRIT_PASSPHRASE="+floodPassphrase)
	out2, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out2), "plain HTTP only on a loopback address") {
		t.Fatalf("plain HTTP on 0.0.0.0: %v\n%s", err, out2)
	}
}

// TestWriterServiceTLS: with --tls-cert and --tls-key the service speaks
// HTTPS only, `append --to https://...` works with the certificate's CA
// trusted (SSL_CERT_FILE), and SIGHUP makes it serve a renewed
// certificate to the next connections without a restart.
func TestWriterServiceTLS(t *testing.T) {
	w := newCrashWorld(t, "example.com/writer-tls")
	certFile, keyFile := filepath.Join(w.dir, "cert.pem"), filepath.Join(w.dir, "key.pem")
	first := writeCert(t, certFile, keyFile, 1)
	srv := startServer(t, w.dir, "ledger", "serve", "--write", "--dir", "W", "--listen", "127.0.0.1:0", "--addr-file", "addr",
		"--tls-cert", certFile, "--tls-key", keyFile)
	addr := waitAddr(t, filepath.Join(w.dir, "addr"))
	pool := x509.NewCertPool()
	pool.AddCert(first)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	waitReady(t, hc, "https://"+addr)
	if resp, err := http.Get("http://" + addr + "/healthz"); err == nil && resp.StatusCode == 200 {
		t.Fatal("the HTTPS service answered plain HTTP")
	}
	names, _ := w.batch(1)
	// A certificate this host does not trust: nothing sent, exit 2.
	untrusted := exec.Command("writ", append([]string{"ledger", "append", "--to", "https://" + addr, "--vkey", w.vkey.String()}, names...)...)
	untrusted.Dir = w.dir
	if out, _ := untrusted.CombinedOutput(); untrusted.ProcessState.ExitCode() != 2 || !strings.Contains(string(out), "SSL_CERT_FILE") {
		t.Fatalf("append --to a service whose certificate is not trusted: exit %d\n%s", untrusted.ProcessState.ExitCode(), out)
	}
	cmd := exec.Command("writ", append([]string{"ledger", "append", "--to", "https://" + addr, "--vkey", w.vkey.String()}, names...)...)
	cmd.Dir, cmd.Env = w.dir, append(os.Environ(), "SSL_CERT_FILE="+certFile)
	if out, err := cmd.CombinedOutput(); err != nil || len(strings.Split(strings.TrimSpace(string(out)), "\n")) != len(names) {
		t.Fatalf("append --to https: %v\n%s", err, out)
	}
	second := writeCert(t, certFile, keyFile, 2)
	srv.Process.Signal(syscall.SIGHUP)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		serial := c.ConnectionState().PeerCertificates[0].SerialNumber
		c.Close()
		if serial.Cmp(second.SerialNumber) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after SIGHUP the service still serves certificate %v, want %v", serial, second.SerialNumber)
		}
	}
	// With --client-ca only clients with a certificate from it are served.
	srv.Process.Signal(syscall.SIGTERM)
	if err := srv.Wait(); err != nil {
		t.Fatalf("the service after SIGTERM: %v", err)
	}
	clientCert, clientKey := filepath.Join(w.dir, "client.pem"), filepath.Join(w.dir, "client-key.pem")
	writeCert(t, clientCert, clientKey, 3)
	startServer(t, w.dir, "ledger", "serve", "--write", "--dir", "W", "--listen", "127.0.0.1:0", "--addr-file", "addr2",
		"--tls-cert", certFile, "--tls-key", keyFile, "--client-ca", clientCert)
	addr = waitAddr(t, filepath.Join(w.dir, "addr2"))
	pair, err := tls.LoadX509KeyPair(clientCert, clientKey)
	if err != nil {
		t.Fatal(err)
	}
	pool.AddCert(second)
	waitReady(t, &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}}}}, "https://"+addr)
	for i, creds := range [][]string{nil, {"--client-cert", clientCert, "--client-key", clientKey}} {
		names, _ := w.batch(1)
		args := append([]string{"ledger", "append", "--to", "https://" + addr, "--vkey", w.vkey.String()}, creds...)
		cmd := exec.Command("writ", append(args, names...)...)
		cmd.Dir, cmd.Env = w.dir, append(os.Environ(), "SSL_CERT_FILE="+certFile)
		out, _ := cmd.CombinedOutput()
		// Without a certificate the handshake fails: the server's alert
		// (exit 2, nothing sent), or under TLS 1.3 a reset or broken pipe
		// on the client's first write (exit 4, no answer).
		if got, want := cmd.ProcessState.ExitCode(), []int{2, 0}[i]; got != want && !(i == 0 && got == 4) {
			t.Fatalf("append --to a service with --client-ca, client certificate %v: exit %d, want %d\n%s", creds != nil, got, want, out)
		}
	}
}

// TestWriterServiceBehindNginx: behind Debian's nginx terminating TLS
// (README's setup: the service on loopback, plain HTTP), `append --to`
// submits through the proxy with the same output, and a replica syncs
// from the read API through it.
func TestWriterServiceBehindNginx(t *testing.T) {
	w := newCrashWorld(t, "example.com/writer-proxy")
	startServer(t, w.dir, "ledger", "serve", "--write", "--dir", "W", "--listen", "127.0.0.1:0", "--addr-file", "addr")
	upstream := "http://" + waitAddr(t, filepath.Join(w.dir, "addr"))
	waitReady(t, &http.Client{}, upstream)
	certFile, keyFile := filepath.Join(w.dir, "proxy.pem"), filepath.Join(w.dir, "proxy-key.pem")
	writeCert(t, certFile, keyFile, 7)
	proxy := testkit.NginxProxy(t, upstream, certFile, keyFile)
	names, recs := w.batch(2)
	env := append(os.Environ(), "SSL_CERT_FILE="+certFile, "WRIT_PASSPHRASE="+floodPassphrase)
	cmd := exec.Command("writ", append([]string{"ledger", "append", "--to", proxy, "--vkey", w.vkey.String()}, names...)...)
	cmd.Dir, cmd.Env = w.dir, env
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), schemas.SHA256Digest(recs[len(recs)-1])) {
		t.Fatalf("append --to through nginx: %v\n%s", err, out)
	}
	cmd = exec.Command("writ", "--json", "ledger", "sync", "--dir", "R", "--from", proxy, "--vkey", w.vkey.String())
	cmd.Dir, cmd.Env = w.dir, env
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), fmt.Sprintf(`"after":%d`, 2+len(recs))) {
		t.Fatalf("sync through nginx: %v\n%s", err, out)
	}
}

// waitReady waits up to 20 s for url's /readyz to say 200.
func waitReady(t *testing.T, hc *http.Client, url string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if resp, err := hc.Get(url + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
	}
	t.Fatalf("%s/readyz not 200 within 20 s", url)
}

// writeCert writes a self-signed certificate for 127.0.0.1 with serial
// number serial, and its key, as PEM files, and returns it.
func writeCert(t *testing.T, certFile, keyFile string, serial int64) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "writ test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}
