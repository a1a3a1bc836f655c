package testvectors

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/runner"
)

// AdmissionFile is the name of the admission vector file under data/.
const AdmissionFile = "admission.json"

// Admission is the admission vector file (data/admission.json): ledgers,
// and the dispatches a runner judges against them with the verdict and
// rule it must reach. See the package doc, "Admission vectors".
type Admission struct {
	Description string `json:"description"`
	// T0 is the vectors' fixed instant, Unix seconds: every authority
	// record is issued at T0 - 3600, the authority log accepts its one
	// batch at T0, and runners judge at T0 + 3600 unless a case's
	// runner.now says otherwise.
	T0      int64             `json:"t0"`
	Ledgers []AdmissionLedger `json:"ledgers"`
	Cases   []AdmissionCase   `json:"cases"`
}

// AdmissionLedger is one authority ledger, portable: the bytes `writ
// ledger export` writes.
type AdmissionLedger struct {
	Name    string `json:"name"`
	Comment string `json:"comment"`
	// Export is a writ ledger export (ledger/replica.Export: a CBOR sequence,
	// RFC 8742, with one "authority" section carrying its checkpoint
	// history), base64 in the JSON.
	Export []byte `json:"export"`
	// AuthorityVKey is the signed-note verifier key
	// (<origin>+<key hash, 8 hex>+<base64 key>) the authority log's
	// checkpoints must verify under: the key a runner trusts from outside
	// the ledger (`writ admit --vkey`).
	AuthorityVKey string `json:"authority_vkey"`
	// TrustRoot is "sha256:" and the 64 hex digits of SHA-256 over the
	// authority log's entry 0 (the first root record, as signed): the root
	// a runner trusts (`--trust-root`).
	TrustRoot string `json:"trust_root"`
}

// AdmissionCase is one dispatch, the runner that judges it, and the
// verdict it must reach.
type AdmissionCase struct {
	Name    string `json:"name"`
	Comment string `json:"comment"`
	// Ledger names the AdmissionLedger the runner holds.
	Ledger string `json:"ledger"`
	// Dispatch is the bytes the control plane sent, hex: a signed
	// instruction (tagged COSE_Sign1), a bare instruction, or anything.
	Dispatch string `json:"dispatch"`
	// Files are the files the runner sees, by file name, contents base64.
	// A runner writes them to one directory.
	Files map[string][]byte `json:"files"`
	// AgentBinary names the file of Files the runner would execute as the
	// agent (`writ admit --agent-binary`).
	AgentBinary string          `json:"agent_binary"`
	Runner      AdmissionRunner `json:"runner"`
	Expect      AdmissionExpect `json:"expect"`
}

// AdmissionRunner is the runner's configuration for a case. Every other
// setting is at its default: no decision history (no admitted ids, work
// claims or high-water marks), no maximum ledger age, no witness policy,
// no receipt required, no control workspace (R30), no --refuse rules, no
// engine binary and no provision directory.
type AdmissionRunner struct {
	// Mode is the enforcement mode: "off", "warn" or "enforce".
	Mode string `json:"mode"`
	// Machine is this runner's machine name.
	Machine string `json:"machine"`
	// Platform is the GOOS/GOARCH pins are looked up for.
	Platform string `json:"platform"`
	// Now is the runner's clock for the whole admission, in Unix seconds
	// (UTC).
	Now int64 `json:"now"`
}

// AdmissionExpect is the outcome a runner must reach: one of the four
// verdicts (admitted, admitted-unsigned, would-refuse, refused) and the
// rule id that decides it (package verify's vocabulary).
type AdmissionExpect struct {
	Verdict string `json:"verdict"`
	Rule    string `json:"rule"`
	// Failed is every rule id the dispatch fails, in the order writ's
	// checks report them (verify.Verdict.Failed); empty when the rule is
	// ok. Most cases fail one check; a precedence case fails more, and
	// its Rule is the one package verify's precedence picks.
	Failed []string `json:"failed"`
}

// LoadAdmissionLedger is the reference procedure for a ledger: it writes
// the export to dir, imports it into dir/ledger as `writ ledger import`
// does (runner.ImportLedger: every checkpoint verified under
// AuthorityVKey, every entry replayed at the time the log accepted it,
// the first root's digest TrustRoot), then opens the authority log and
// loads it under AuthorityVKey (verify.LoadAuthority). The caller closes
// the returned log.
func LoadAdmissionLedger(l AdmissionLedger, dir string) (*verify.Authority, *ledger.Log, error) {
	path := filepath.Join(dir, l.Name+".export")
	if err := os.WriteFile(path, l.Export, 0o600); err != nil {
		return nil, nil, err
	}
	key, err := formats.ParseLogKey(l.AuthorityVKey) // the vector's text, parsed once
	if err != nil {
		return nil, nil, fmt.Errorf("ledger %s: authority_vkey: %w", l.Name, err)
	}
	into := filepath.Join(dir, "ledger-"+l.Name)
	if _, err := runner.ImportLedger(into, path, map[string]*formats.LogKey{"authority": key}, l.TrustRoot); err != nil {
		return nil, nil, fmt.Errorf("ledger %s: import: %w", l.Name, err)
	}
	log, err := ledger.OpenReadOnly(filepath.Join(into, ledgerdir.AuthorityDir))
	if err != nil {
		return nil, nil, err
	}
	auth, err := verify.LoadAuthority(log, key)
	if err != nil {
		log.Close()
		return nil, nil, fmt.Errorf("ledger %s: %w", l.Name, err)
	}
	return auth, log, nil
}

// AdmitCase is the reference procedure for a case: it writes the case's
// files to dir and judges the dispatch with verify.Admit against st (the
// case's ledger, LoadAdmissionLedger), under the case's mode, machine,
// platform and clock.
func AdmitCase(st *delegation.State, c AdmissionCase, dir string) (*verify.Verdict, error) {
	cfg, d, err := prepareCase(c, dir)
	if err != nil {
		return nil, err
	}
	return verify.Admit(st, cfg, d), nil
}

// prepareCase writes c's files to dir and returns its runner's
// configuration and its dispatch.
func prepareCase(c AdmissionCase, dir string) (verify.Config, verify.Dispatch, error) {
	raw, err := hex.DecodeString(c.Dispatch)
	if err != nil {
		return verify.Config{}, verify.Dispatch{}, fmt.Errorf("case %s: dispatch: %w", c.Name, err)
	}
	for name, data := range c.Files {
		if name != filepath.Base(name) || name == "." || name == ".." {
			return verify.Config{}, verify.Dispatch{}, fmt.Errorf("case %s: file name %q", c.Name, name)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o755); err != nil {
			return verify.Config{}, verify.Dispatch{}, err
		}
	}
	mode, err := verify.ParseMode(c.Runner.Mode)
	if err != nil {
		return verify.Config{}, verify.Dispatch{}, fmt.Errorf("case %s: %w", c.Name, err)
	}
	now := time.Unix(c.Runner.Now, 0).UTC()
	cfg := verify.Config{Machine: c.Runner.Machine, Mode: mode, Platform: c.Runner.Platform, Now: func() time.Time { return now }}
	d := verify.Dispatch{Raw: raw}
	if c.AgentBinary != "" {
		d.AgentBinary = filepath.Join(dir, c.AgentBinary)
	}
	return cfg, d, nil
}
