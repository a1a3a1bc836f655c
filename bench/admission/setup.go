package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

const passphrase = "bench passphrase"

// bench is the world the benchmark runs in: a writ binary, a ledger with
// a three-link delegation chain (root → lead → team → operator) and two
// pinned agents, provisioned files, and the operator's key.
type bench struct {
	work, writ, ledger   string
	bigAgent, smallAgent string
	provDir              string
	provision            []schemas.Provision
	operator             *sign.PrivateKey
	workFactor           int
	bigBytes, smallBytes int64
}

// run runs the writ binary with args in the work directory.
func (b *bench) run(args ...string) string {
	cmd := exec.Command(b.writ, args...)
	cmd.Dir = b.work
	cmd.Env = append(os.Environ(), "WRIT_PASSPHRASE="+passphrase)
	out, err := cmd.CombinedOutput()
	if err != nil {
		fail("writ %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func setup(work string, agentMiB, files, fileKiB, workFactor int) *bench {
	b := &bench{work: work, writ: filepath.Join(work, "writ"), ledger: filepath.Join(work, "L"), workFactor: workFactor}
	build := exec.Command("go", "build", "-o", b.writ, "./cmd/writ")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fail("building writ: %v", err)
	}
	mk := func(name string) string {
		d := filepath.Join(work, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			fail("%v", err)
		}
		return d
	}
	var err error
	pad := agentMiB<<20 - 2<<20 // the stand-in agent itself is about 2 MiB
	if pad < 0 {
		pad = 0
	}
	if b.bigAgent, err = testkit.BuildAgentIn(mk("big"), testkit.BuildOptions{PadBytes: pad}); err != nil {
		fail("building the large agent: %v", err)
	}
	if b.smallAgent, err = testkit.BuildAgentIn(mk("small"), testkit.BuildOptions{}); err != nil {
		fail("building the small agent: %v", err)
	}
	b.bigBytes, b.smallBytes = size(b.bigAgent), size(b.smallAgent)

	wf := fmt.Sprint(workFactor)
	for _, k := range []string{"root", "lead", "team", "op", "rel"} {
		b.run("key", "generate", "--out", k, "--work-factor", wf)
	}
	b.run("root", "sign", "--key", "root.key", "--pub", "root.pub", "--threshold", "1", "--expires", "8760h", "--out", "root.cose")
	b.run("ledger", "init", "--dir", b.ledger, "--root", "root.cose", "--origin", "bench.example/admission", "--work-factor", wf)
	// One end for every delegation: a re-delegation must end within its
	// parent's window, and "720h" read a second later would not.
	notAfter := time.Now().Add(720 * time.Hour).UTC().Format(time.RFC3339)
	// The chain: root delegates to lead (may re-delegate twice), lead to
	// team (once more), team to the operator who signs instructions.
	b.run("delegate", "--key", "root.key", "--to", "lead.pub", "--action", "instruct,delegate", "--stream", "bench/*", "--machine", "runner-*", "--depth", "2", "--not-after", notAfter, "--out", "lead.del")
	b.run("delegate", "--key", "lead.key", "--to", "team.pub", "--action", "instruct,delegate", "--stream", "bench/*", "--machine", "runner-*", "--depth", "1", "--not-after", notAfter, "--out", "team.del")
	b.run("delegate", "--key", "team.key", "--to", "op.pub", "--action", "instruct", "--stream", "bench/*", "--machine", "runner-*", "--not-after", notAfter, "--out", "op.del")
	b.run("delegate", "--key", "root.key", "--to", "rel.pub", "--action", "pin", "--artifact", "agent*", "--not-after", notAfter, "--out", "rel.del")
	b.run("pin", "--key", "rel.key", "--artifact", "agent", "--version", "1.0.0", "--out", "big.pin", b.bigAgent)
	b.run("pin", "--key", "rel.key", "--artifact", "agent-small", "--version", "1.0.0", "--out", "small.pin", b.smallAgent)
	b.run("ledger", "append", "--dir", b.ledger, "lead.del", "team.del", "op.del", "rel.del", "big.pin", "small.pin")

	b.provDir = mk("prov")
	for i := range files {
		body := make([]byte, fileKiB<<10)
		rand.Read(body)
		name := fmt.Sprintf("f%02d.dat", i)
		if err := os.WriteFile(filepath.Join(b.provDir, name), body, 0o644); err != nil {
			fail("%v", err)
		}
		b.provision = append(b.provision, schemas.Provision{Dest: ".provision/" + name, Digest: schemas.SHA256Digest(body), Size: uint64(len(body))})
	}
	id, err := sign.ScryptIdentity([]byte(passphrase))
	if err != nil {
		fail("%v", err)
	}
	if b.operator, err = sign.LoadPrivateKey(filepath.Join(work, "op.key"), id); err != nil {
		fail("loading the operator key: %v", err)
	}
	return b
}

// dispatch returns a new signed instruction (a fresh id: each is admitted
// once) for the named agent, provisioning every file.
func (b *bench) dispatch(agent string) []byte {
	id := make([]byte, 16)
	rand.Read(id)
	now := time.Now()
	rec := &schemas.Instruction{V: schemas.SchemaVersion, ID: hex.EncodeToString(id), Stream: "bench/s", Machine: "runner-1",
		Agent: schemas.ArtifactRef{Name: agent}, Provision: b.provision, Transport: "ssh",
		IssuedAt: now.Unix(), NotBefore: now.Unix(), Expires: now.Add(time.Hour).Unix()}
	payload, err := schemas.Encode(rec)
	if err != nil {
		fail("encoding an instruction: %v", err)
	}
	env, err := sign.Sign(schemas.KindInstruction, payload, b.operator)
	if err != nil {
		fail("signing an instruction: %v", err)
	}
	return env
}

func size(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		fail("%v", err)
	}
	return fi.Size()
}
