package admission_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/writ-ledger/writ/admission"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
	"github.com/writ-ledger/writ/transfer"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/runner"
)

// agentPath is a real Go binary with build metadata (testkit.BuildAgent),
// built once for the package.
var agentPath string

func TestMain(m *testing.M) {
	var remove func()
	agentPath, remove = testkit.AgentForMain("writ-admission-agent-")
	code := m.Run()
	remove()
	os.Exit(code)
}

// ledgerRunner is a real runner: a ledger on disk whose authority log holds a
// root, an operator who may instruct stream "demo" on runner-*, a release
// engineer and the pin of the test agent, judged at testkit.Epoch.
type ledgerRunner struct {
	dir string
	kp  ledgerdir.KeyParams
}

func epoch() time.Time { return testkit.Epoch }

// newRunner builds the ledger in dir. It returns errors rather than
// taking a *testing.T so that the examples can use it too.
func newRunner(dir string) (*ledgerRunner, error) {
	root, op, rel, logKey := key(1), key(10), key(11), key(50)
	id, err := age.GenerateX25519Identity()
	if err != nil {
		return nil, err
	}
	pin, err := transfer.NewPin(agentPath, transfer.PinOptions{Artifact: "agent", Version: "1.0.0", Platform: transfer.Platform(),
		IssuedAt: testkit.Epoch.Add(-time.Hour), Expires: testkit.Epoch.Add(30 * 24 * time.Hour)})
	if err != nil {
		return nil, err
	}
	var entries [][]byte
	for _, r := range []struct {
		rec schemas.Record
		by  *sign.PrivateKey
	}{
		{testkit.Root(1, root), root},
		{testkit.Delegation(op, []string{"instruct"}, "demo", "runner-*"), root},
		{testkit.Delegation(rel, []string{"pin"}, "", ""), root},
		{pin, rel},
	} {
		env, err := seal(r.rec, r.by)
		if err != nil {
			return nil, err
		}
		entries = append(entries, env)
	}
	l, err := ledger.CreateWithHistory(filepath.Join(dir, ledgerdir.AuthorityDir), "example.com/admission", logKey, epoch)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	if _, err := l.Append(entries); err != nil {
		return nil, err
	}
	kp := ledgerdir.KeyParams{Recipients: []age.Recipient{id.Recipient()}, Identities: []age.Identity{id}, Rand: rand.Reader}
	return &ledgerRunner{dir: dir, kp: kp}, nil
}

// key is the Ed25519 key whose seed is n repeated (as testkit.Key).
func key(n byte) *sign.PrivateKey {
	s, err := signature.LoadED25519Signer(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{n}, ed25519.SeedSize)))
	if err != nil {
		panic(err)
	}
	k, err := sign.NewPrivateKey(s)
	if err != nil {
		panic(err)
	}
	return k
}

// seal encodes rec and signs it with k.
func seal(rec schemas.Record, k *sign.PrivateKey) ([]byte, error) {
	payload, err := schemas.Encode(rec)
	if err != nil {
		return nil, err
	}
	return sign.Sign(rec.Kind(), payload, k)
}

// instruction is the n-th instruction for stream demo on runner-1,
// signed by the operator (key 10).
func instruction(n int) []byte {
	env, err := seal(testkit.Instruction(fmt.Sprintf("%032x", n)), key(10))
	if err != nil {
		panic(err)
	}
	return env
}

// open opens the runner on machine runner-1 in mode, its clock at Epoch.
func (r *ledgerRunner) open(mode verify.Mode) (*runner.Runner, error) {
	return runner.Open(r.dir, verify.Trust{}, r.kp,
		verify.Config{Machine: "runner-1", Mode: mode, Platform: transfer.Platform(), Now: epoch})
}

// serve serves a on a new socket in dir until the returned function is
// called, which stops the server and returns what Serve returned.
func serve(dir string, a admission.Admitter) (socket string, stop func() error, err error) {
	socket = filepath.Join(dir, "s.sock")
	ln, err := admission.Listen(socket)
	if err != nil {
		return "", nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- (&admission.Server{Runner: a}).Serve(ctx, ln) }()
	return socket, func() error { cancel(); return <-done }, nil
}

// started is newRunner, open and serve for a test: the server stops and
// the runner closes when the test ends. wrap, when not nil, stands
// between the server and the runner.
func started(t *testing.T, mode verify.Mode, wrap func(*runner.Runner) admission.Admitter) (*ledgerRunner, *runner.Runner, string) {
	t.Helper()
	r, err := newRunner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	vr, err := r.open(mode)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { vr.Close() })
	var a admission.Admitter = vr
	if wrap != nil {
		a = wrap(vr)
	}
	socket, stop, err := serve(t.TempDir(), a)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return r, vr, socket
}
