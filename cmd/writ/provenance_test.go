package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/transfer"
)

const provBuilder = "https://github.com/slsa-framework/slsa-github-generator/.github/workflows/builder_go_slsa3.yml@refs/tags/v2.1.0"

// provenanceFile writes, in dir, a builder's attestation of the test
// agent (testkit.Provenance) and returns its name.
func provenanceFile(t *testing.T, dir, name string, key *ecdsa.PrivateKey, digest, commit, builder string) string {
	env, err := testkit.Provenance(key, digest, commit, builder)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, name), env, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	return name
}

// TestPinProvenance: writ pin --provenance on real Go binaries with
// their build metadata: an attestation that vouches for the binary is
// recorded in the answer; one for another digest, by another builder,
// from another commit, or for a binary of a modified tree is refused
// (exit 1) under its own rule with the evidence; the check runs with no
// network at all (unshare -n).
func TestPinProvenance(t *testing.T) {
	dir := t.TempDir()
	for name, o := range map[string]testkit.BuildOptions{"agent": {}, "agent-dirty": {Dirty: true}} {
		if err := copyFile(testkit.BuildAgent(t, o), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	writIn(t, dir, "key", "generate", "--out", "rel", "--work-factor", "10")
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	pub, _ := cryptoutils.MarshalPublicKeyToPEM(&key.PublicKey)
	if err := os.WriteFile(filepath.Join(dir, "builder.pub"), pub, 0o644); err != nil {
		t.Fatal(err)
	}
	info := func(name string) (string, string) {
		in, err := transfer.Inspect(filepath.Join(dir, name), "sha256")
		if err != nil {
			t.Fatal(err)
		}
		return in.Digest, in.Build.Revision
	}
	digest, rev := info("agent")
	dirtyDigest, dirtyRev := info("agent-dirty")
	pin := func(bin, env string, more ...string) (string, int) {
		args := append([]string{"--json", "pin", "--key", "rel.key", "--artifact", "agent", "--version", "1.0.0", "--out", "agent.pin",
			"--provenance", env, "--provenance-key", "builder.pub"}, more...)
		cmd := exec.Command("writ", append(args, bin)...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "WRIT_PASSPHRASE="+floodPassphrase)
		out, _ := cmd.CombinedOutput()
		os.Remove(filepath.Join(dir, "agent.pin"))
		return string(out), cmd.ProcessState.ExitCode()
	}
	good := provenanceFile(t, dir, "good.json", key, digest, rev, provBuilder)
	out, code := pin("agent", good, "--builder", provBuilder)
	if code != 0 || !strings.Contains(out, `"builder":"`+provBuilder+`"`) || !strings.Contains(out, `"commit":"`+rev+`"`) {
		t.Fatalf("a provenance that vouches for the binary: exit %d\n%s", code, out)
	}
	for _, c := range []struct {
		name, bin, env string
		more           []string
		rule, evidence string
	}{
		{"another binary's", "agent", provenanceFile(t, dir, "subject.json", key, dirtyDigest, rev, provBuilder), nil, rules.ProvenanceSubject, "expected " + digest},
		{"another builder's", "agent", provenanceFile(t, dir, "builder.json", key, digest, rev, "https://ci.example/evil"), []string{"--builder", provBuilder},
			rules.ProvenanceBuilder, "found https://ci.example/evil"},
		{"another commit's", "agent", provenanceFile(t, dir, "commit.json", key, digest, strings.Repeat("e", 40), provBuilder), nil, rules.ProvenanceSource, "expected " + rev},
		{"a modified tree's", "agent-dirty", provenanceFile(t, dir, "dirty.json", key, dirtyDigest, dirtyRev, provBuilder), []string{"--allow-dirty"}, rules.ProvenanceDirty, ""},
		{"another key's", "agent", provenanceFile(t, dir, "key.json", mustKey(t), digest, rev, provBuilder), nil, rules.ProvenanceSignature, ""},
	} {
		out, code := pin(c.bin, c.env, c.more...)
		if code != 1 || !strings.Contains(out, `"rule":"`+c.rule+`"`) || !strings.Contains(out, c.evidence) {
			t.Errorf("%s provenance: exit %d\n%s\nwant 1, rule %s, %q", c.name, code, out, c.rule, c.evidence)
		}
	}
	// No socket: the same pin in a network namespace of its own.
	cmd := exec.Command("unshare", "-n", "writ", "pin", "--key", "rel.key", "--artifact", "agent", "--version", "1.0.0", "--out", "agent.pin",
		"--provenance", good, "--provenance-key", "builder.pub", "agent")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "WRIT_PASSPHRASE="+floodPassphrase)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pin --provenance with no network: %v\n%s", err, out)
	}
	// A real keyless Sigstore bundle of GitHub's SLSA generator, under
	// the public-good trusted root, with no network: its certificate,
	// SCT and log entry verify offline, and the file it attests (an
	// empty one, not a Go binary) records no source revision to compare
	// with the provenance's commit.
	gen := "../../provenance/testdata/slsa-github-generator/"
	for from, to := range map[string]string{"binary-linux-amd64-workflow_dispatch.intoto.build.slsa": "gha.slsa", "trusted-root-public-good.json": "root.json"} {
		if err := copyFile(gen+from, filepath.Join(dir, to)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "empty"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command("unshare", "-n", "writ", "--json", "pin", "--key", "rel.key", "--artifact", "agent", "--version", "1.0.0", "--out", "agent.pin",
		"--allow-unknown-build", "--provenance", "gha.slsa", "--provenance-root", "root.json", "empty")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "WRIT_PASSPHRASE="+floodPassphrase)
	out2, _ := cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(out2), `"rule":"`+rules.ProvenanceSource+`"`) ||
		!strings.Contains(string(out2), "expected 4d329c75e7ec1725f7c9ce917a8799d408d06be3, found none") {
		t.Errorf("the generator's bundle for an empty file: exit %d\n%s\nwant 1, %s", cmd.ProcessState.ExitCode(), out2, rules.ProvenanceSource)
	}
	if out, code := pin("agent", "gha.slsa", "--provenance-root", "root.json"); code != 2 || !strings.Contains(out, "one of them") {
		t.Errorf("a key and a trusted root: exit %d\n%s\nwant 2", code, out)
	}
	// A delegation binds a keyless builder to its trusted root, the
	// certificate's issuer and identity, and the source repository: the
	// generator certifies every repository that calls it alike.
	ghaID := "https://github.com/slsa-framework/slsa-github-generator/.github/workflows/builder_container-based_slsa3.yml@refs/tags/v2.1.0"
	keyless := ghaID + "=root.json https://token.actions.githubusercontent.com " + ghaID
	run := func(args ...string) (string, int) {
		cmd := exec.Command("writ", args...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "WRIT_PASSPHRASE="+floodPassphrase)
		out, _ := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode()
	}
	del := func(out string, builder string) (string, int) {
		return run("delegate", "--key", "rel.key", "--to", "rel.pub", "--action", "pin", "--artifact", "agent", "--builder", builder, "--not-after", "24h", "--out", out)
	}
	if out, code := del("nosource.del", keyless); code != 2 || !strings.Contains(out, "names its source repository") {
		t.Errorf("a keyless builder without its source: exit %d\n%s\nwant 2", code, out)
	}
	if out, code := del("source.del", keyless+" source=github.com/Our-Org/agent"); code != 0 {
		t.Errorf("a keyless builder with its source: exit %d\n%s", code, out)
	}
	if out, code := del("badsource.del", keyless+" source=github.com"); code != 2 || !strings.Contains(out, "source=REPO") {
		t.Errorf("a source that is no repository: exit %d\n%s\nwant 2", code, out)
	}
}

func mustKey(t *testing.T) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestProvenanceInLedger: a pin carries its provenance into the ledger,
// where every reader checks it again; a release engineer whose
// delegation demands provenance from a builder (writ delegate
// --builder ID=KEY) has a pin without it, from another builder, or
// naming the builder but signed by another key (its own), refused at
// append under provenance-builder; a re-delegation that drops the demand
// exceeds its parent, one that keeps it (the key by its digest) does not.
func TestProvenanceInLedger(t *testing.T) {
	dir := t.TempDir()
	if err := copyFile(testkit.BuildAgent(t, testkit.BuildOptions{}), filepath.Join(dir, "agent")); err != nil {
		t.Fatal(err)
	}
	key, own := mustKey(t), mustKey(t)
	for name, k := range map[string]*ecdsa.PrivateKey{"builder.pub": key, "own.pub": own} {
		pub, _ := cryptoutils.MarshalPublicKeyToPEM(&k.PublicKey)
		if err := os.WriteFile(filepath.Join(dir, name), pub, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"key", "generate", "--out", "root", "--work-factor", "10"},
		{"key", "generate", "--out", "rel", "--work-factor", "10"},
		{"key", "generate", "--out", "rel2", "--work-factor", "10"},
		{"root", "sign", "--key", "root.key", "--pub", "root.pub", "--threshold", "1", "--expires", "8760h", "--out", "root.cose"},
		{"ledger", "init", "--dir", "L", "--root", "root.cose", "--origin", "example.com/provenance", "--work-factor", "10"},
		{"delegate", "--key", "root.key", "--to", "rel.pub", "--action", "pin", "--action", "delegate", "--depth", "1", "--artifact", "agent",
			"--builder", provBuilder + "=builder.pub", "--not-after", "720h", "--out", "rel.del"},
		{"ledger", "append", "--dir", "L", "rel.del"},
	} {
		writIn(t, dir, args...)
	}
	in, err := transfer.Inspect(filepath.Join(dir, "agent"), "sha256")
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, int) {
		cmd := exec.Command("writ", args...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "WRIT_PASSPHRASE="+floodPassphrase)
		out, _ := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode()
	}
	pinWith := func(version, out string, more ...string) {
		writIn(t, dir, append([]string{"pin", "--key", "rel.key", "--artifact", "agent", "--version", version, "--out", out}, append(more, "agent")...)...)
	}
	pinWith("1.0.0", "good.pin", "--provenance", provenanceFile(t, dir, "good.json", key, in.Digest, in.Build.Revision, provBuilder), "--provenance-key", "builder.pub")
	writIn(t, dir, "ledger", "append", "--dir", "L", "good.pin")
	pinWith("1.0.1", "bare.pin")
	pinWith("1.0.2", "other.pin", "--provenance", provenanceFile(t, dir, "other.json", key, in.Digest, in.Build.Revision, "https://ci.example/other"), "--provenance-key", "builder.pub")
	pinWith("1.0.3", "forged.pin", "--provenance", provenanceFile(t, dir, "forged.json", own, in.Digest, in.Build.Revision, provBuilder), "--provenance-key", "own.pub")
	for _, f := range []string{"bare.pin", "other.pin", "forged.pin"} {
		if out, code := run("--json", "ledger", "append", "--dir", "L", f); code != 1 || !strings.Contains(out, `"rule":"`+rules.ProvenanceBuilder+`"`) {
			t.Errorf("ledger append %s: exit %d\n%s\nwant 1, %s", f, code, out, rules.ProvenanceBuilder)
		}
	}
	writIn(t, dir, "delegate", "--key", "rel.key", "--to", "rel2.pub", "--action", "pin", "--artifact", "agent", "--not-after", "240h", "--out", "rel2.del")
	if out, code := run("--json", "ledger", "append", "--dir", "L", "rel2.del"); code != 1 || !strings.Contains(out, `"rule":"exceeds-parent"`) || !strings.Contains(out, "builders") {
		t.Errorf("a re-delegation without the builders: exit %d\n%s\nwant 1, exceeds-parent", code, out)
	}
	pinned := writIn(t, dir, "--json", "pin", "--key", "rel.key", "--artifact", "agent", "--version", "1.0.4", "--out", "p4.pin",
		"--provenance", "good.json", "--provenance-key", "builder.pub", "agent")
	digest := regexp.MustCompile(`"key":"(sha256:[0-9a-f]{64})"`).FindStringSubmatch(pinned)
	if digest == nil {
		t.Fatalf("writ pin --json names no provenance key digest:\n%s", pinned)
	}
	writIn(t, dir, "delegate", "--key", "rel.key", "--to", "rel2.pub", "--action", "pin", "--artifact", "agent", "--builder", provBuilder+"="+digest[1],
		"--not-after", "240h", "--out", "rel3.del")
	writIn(t, dir, "ledger", "append", "--dir", "L", "rel3.del")
	// A runner's replica replays the pin's provenance too, and a verdict
	// names the provenance it relied on.
	writIn(t, dir, "ledger", "verify", "--dir", "L")
	for _, args := range [][]string{
		{"key", "generate", "--out", "op", "--work-factor", "10"},
		{"delegate", "--key", "root.key", "--to", "op.pub", "--action", "instruct", "--stream", "deploy", "--machine", "runner-1", "--not-after", "720h", "--out", "op.del"},
		{"ledger", "append", "--dir", "L", "op.del"},
		{"instruct", "--key", "op.key", "--stream", "deploy", "--machine", "runner-1", "--agent", "agent", "--out", "d.cose"},
	} {
		writIn(t, dir, args...)
	}
	out := writIn(t, dir, "--json", "admit", "--ledger", "L", "--machine", "runner-1", "--mode", "enforce", "--work-factor", "10", "--agent-binary", "agent", "d.cose")
	if !strings.Contains(out, `"verdict":"admitted"`) || !strings.Contains(out, `"provenance":[{"subject":"agent","builder":"`+provBuilder+`","builder_key":"`+digest[1]+`"`) {
		t.Errorf("the admission of an agent pinned with provenance:\n%s", out)
	}
	// A runner's own policy refuses what every built-in check admits, in
	// every mode, naming its rule.
	policy := `{"rules": [{"id": "policy-deploy-from-ci", "reason": "deploy runs only agents built by the CI", ` +
		`"refuse": "instruction.stream == 'deploy' && agent.provenance.builder != 'https://ci.example/release'"}]}`
	if err := os.WriteFile(filepath.Join(dir, "policy.json"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	writIn(t, dir, "instruct", "--key", "op.key", "--stream", "deploy", "--machine", "runner-1", "--agent", "agent", "--out", "d2.cose")
	out, code := run("--json", "admit", "--ledger", "L", "--machine", "runner-1", "--mode", "off", "--work-factor", "10", "--agent-binary", "agent", "--policy-cel", "policy.json", "d2.cose")
	if code != 1 || !strings.Contains(out, `"verdict":"refused"`) || !strings.Contains(out, `"rule":"policy-refused"`) || !strings.Contains(out, `"policy_rule":"policy-deploy-from-ci"`) {
		t.Errorf("an admission the policy refuses: exit %d\n%s", code, out)
	}
	if out, code := run("admit", "--ledger", "L", "--machine", "runner-1", "--agent-binary", "agent", "--policy-cel", "d2.cose", "d2.cose"); code != 2 || !strings.Contains(out, "policy-cel d2.cose") {
		t.Errorf("a policy file that is not one: exit %d\n%s\nwant 2", code, out)
	}
	// An operator's delegation may demand provenance for what its
	// instructions run: from another key than the pin's, refused.
	for _, args := range [][]string{
		{"key", "generate", "--out", "op2", "--work-factor", "10"},
		{"delegate", "--key", "root.key", "--to", "op2.pub", "--action", "instruct", "--stream", "deploy", "--machine", "runner-1",
			"--builder", provBuilder + "=own.pub", "--not-after", "720h", "--out", "op2.del"},
		{"ledger", "append", "--dir", "L", "op2.del"},
		{"instruct", "--key", "op2.key", "--stream", "deploy", "--machine", "runner-1", "--agent", "agent", "--out", "d3.cose"},
	} {
		writIn(t, dir, args...)
	}
	out, code = run("--json", "admit", "--ledger", "L", "--machine", "runner-1", "--mode", "enforce", "--work-factor", "10", "--agent-binary", "agent", "d3.cose")
	if code != 1 || !strings.Contains(out, `"rule":"`+rules.ProvenanceRequired+`"`) {
		t.Errorf("an instruction whose delegation demands provenance from another key: exit %d\n%s\nwant 1, %s", code, out, rules.ProvenanceRequired)
	}
	// The audit lists who built what is pinned, and counts the
	// admissions that relied on it (the refused one is not one).
	out = writIn(t, dir, "--json", "audit", "--ledger", "L")
	if !strings.Contains(out, `"pins_with_provenance":1,"pins_without_provenance":0,"admitted_relying_on_provenance":1,"admitted_without_provenance":0`) ||
		!strings.Contains(out, `"builder":"`+provBuilder+`","builder_key":"`+digest[1]+`"`) {
		t.Errorf("the audit's provenance:\n%s", out)
	}
	if out := writIn(t, dir, "audit", "--ledger", "L"); !strings.Contains(out, "pins with build provenance: 1, without: 0") ||
		!strings.Contains(out, "admissions that ran a binary pinned with provenance: 1, without: 0") || !strings.Contains(out, "built by "+provBuilder+" (key "+digest[1]+")") {
		t.Errorf("the text audit's provenance:\n%s", out)
	}
}
