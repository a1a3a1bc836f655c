package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/transfer"
)

const cosignBuilder = "https://ci.example/release-builder"

// cosignAttest has cosign itself (testkit.CosignModule) attest bin with
// an SLSA provenance v1 predicate naming builder and commit, signed with
// dir's cosign.key, offline (no transparency log): a Sigstore bundle
// when bundle, else a bare DSSE envelope. It returns the file's name.
func cosignAttest(t *testing.T, cosign, dir, name, bin, builder, commit string, bundle bool) string {
	t.Helper()
	pred := fmt.Sprintf(`{"buildDefinition":{"buildType":"https://ci.example/build/v1","externalParameters":{"ref":"refs/heads/main"},`+
		`"resolvedDependencies":[{"uri":"git+https://example.com/agent@refs/heads/main","digest":{"gitCommit":%q}}]},`+
		`"runDetails":{"builder":{"id":%q}}}`, commit, builder)
	if err := os.WriteFile(filepath.Join(dir, name+".pred.json"), []byte(pred), 0o644); err != nil {
		t.Fatal(err)
	}
	out := name + ".intoto.json"
	args := []string{"attest-blob", "--key", "cosign.key", "--predicate", name + ".pred.json", "--type", "slsaprovenance1",
		"--use-signing-config=false", "--tlog-upload=false", "--yes"}
	if bundle {
		out = name + ".sigstore.json"
		args = append(args, "--bundle", out)
	} else {
		args = append(args, "--new-bundle-format=false", "--output-signature", out) // the DSSE envelope (--output-attestation writes the bare statement)
	}
	cmd := exec.Command(cosign, append(args, bin)...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "COSIGN_PASSWORD=writ-test")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cosign attest-blob: %v\n%s", err, b)
	}
	return out
}

// TestCosignAttestations: attestations cosign itself makes (cosign
// attest-blob --type slsaprovenance1 --key, offline), as a bare DSSE
// envelope and as a Sigstore bundle, of real Go binaries: writ pin
// checks them with no network (unshare -n) and says the key's digest; a
// delegation binding the builder to cosign's key takes the pin into the
// ledger; one of another binary, naming another builder, of another
// commit, or of a dirty build is refused under its rule.
func TestCosignAttestations(t *testing.T) {
	cosign := testkit.Cosign(t)
	dir := t.TempDir()
	for name, o := range map[string]testkit.BuildOptions{"agent": {}, "agent-dirty": {Dirty: true}} {
		if err := copyFile(testkit.BuildAgent(t, o), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	gen := exec.Command(cosign, "generate-key-pair")
	gen.Dir, gen.Env = dir, append(os.Environ(), "COSIGN_PASSWORD=writ-test")
	if b, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("cosign generate-key-pair: %v\n%s", err, b)
	}
	for _, args := range [][]string{
		{"key", "generate", "--out", "root", "--work-factor", "10"},
		{"key", "generate", "--out", "rel", "--work-factor", "10"},
		{"root", "sign", "--key", "root.key", "--pub", "root.pub", "--threshold", "1", "--expires", "8760h", "--out", "root.cose"},
		{"ledger", "init", "--dir", "L", "--root", "root.cose", "--origin", "example.com/cosign", "--work-factor", "10"},
		{"delegate", "--key", "root.key", "--to", "rel.pub", "--action", "pin", "--artifact", "agent", "--builder", cosignBuilder + "=cosign.pub",
			"--not-after", "720h", "--out", "rel.del"},
		{"ledger", "append", "--dir", "L", "rel.del"},
	} {
		writIn(t, dir, args...)
	}
	rev := func(bin string) string {
		in, err := transfer.Inspect(filepath.Join(dir, bin), "sha256")
		if err != nil {
			t.Fatal(err)
		}
		return in.Build.Revision
	}
	version := "1.0.0"
	pin := func(bin, att string, more ...string) (string, int) {
		os.Remove(filepath.Join(dir, "agent.pin"))
		args := append([]string{"-n", "writ", "--json", "pin", "--key", "rel.key", "--artifact", "agent", "--version", version, "--out", "agent.pin",
			"--provenance", att, "--provenance-key", "cosign.pub"}, more...)
		cmd := exec.Command("unshare", append(args, bin)...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "WRIT_PASSPHRASE="+floodPassphrase)
		out, _ := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode()
	}
	for _, bundle := range []bool{false, true} {
		kind := map[bool]string{false: "envelope", true: "bundle"}[bundle]
		version = map[bool]string{false: "1.0.0", true: "1.0.1"}[bundle]
		good := cosignAttest(t, cosign, dir, kind+"-good", "agent", cosignBuilder, rev("agent"), bundle)
		out, code := pin("agent", good, "--builder", cosignBuilder)
		if code != 0 || !strings.Contains(out, `"builder":"`+cosignBuilder+`"`) || !strings.Contains(out, `"commit":"`+rev("agent")+`"`) {
			t.Fatalf("cosign's %s: exit %d\n%s", kind, code, out)
		}
		writIn(t, dir, "ledger", "append", "--dir", "L", "agent.pin")
		for _, c := range []struct {
			name, bin, att string
			more           []string
			rule           string
		}{
			{"another binary's", "agent", cosignAttest(t, cosign, dir, kind+"-subject", "agent-dirty", cosignBuilder, rev("agent"), bundle), nil, rules.ProvenanceSubject},
			{"another builder's", "agent", cosignAttest(t, cosign, dir, kind+"-builder", "agent", "https://ci.example/evil", rev("agent"), bundle),
				[]string{"--builder", cosignBuilder}, rules.ProvenanceBuilder},
			{"another commit's", "agent", cosignAttest(t, cosign, dir, kind+"-commit", "agent", cosignBuilder, strings.Repeat("e", 40), bundle), nil, rules.ProvenanceSource},
			{"a dirty build's", "agent-dirty", cosignAttest(t, cosign, dir, kind+"-dirty", "agent-dirty", cosignBuilder, rev("agent-dirty"), bundle),
				[]string{"--allow-dirty"}, rules.ProvenanceDirty},
		} {
			if out, code := pin(c.bin, c.att, c.more...); code != 1 || !strings.Contains(out, `"rule":"`+c.rule+`"`) {
				t.Errorf("cosign's %s, %s: exit %d\n%s\nwant 1, %s", kind, c.name, code, out, c.rule)
			}
		}
	}
}
