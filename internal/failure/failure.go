// Package failure says what a failed writ command line says: the exit
// code an error gets (Classify, or the one it carries), the operator's
// assertion it refuses (TrustRefusal), its rule id (Rule), the next acts
// printed after it, and the report on stderr, as `writ: error:` and
// `writ: hint:` lines or, under --json, as one JSON object (Report).
//
// The codes are package exitcode's: 0 success, 1 a verdict of no, 2 bad
// usage or input, 3 internal error, 4 busy.
package failure

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/fileio"
	"github.com/writ-ledger/writ/internal/humanize"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/publish"
	"github.com/writ-ledger/writ/ledger/repair"
	"github.com/writ-ledger/writ/ledger/witness"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
	"github.com/writ-ledger/writ/transfer"
	"github.com/writ-ledger/writ/verify/runner"
)

// LockedHint is the next act for ledger.ErrLocked, wherever it surfaces.
const LockedHint = "another writ process has this log open: an append, import or verify, a running `writ admission serve` (which holds its decision log, and reads its authority log after each change), a `writ ledger serve` reading it (a second at a time), or a `writ ledger serve --write` holding it (submit to it with `writ ledger append --to URL`); retry when it is done, or stop the server"

// evidenceHint follows, in text, the error of a log that is not an
// extension of a checkpoint trusted before.
const evidenceHint = "keep the evidence: with --json the error carries both checkpoints (as signed notes where writ had them) and the proof, to check elsewhere"

// noTargets are the errors that are a verdict of no (exitcode.No)
// whichever command met them: refusals and failed verification.
var noTargets = []error{
	delegation.ErrRefused, delegation.ErrUnauthorized, ledger.ErrTampered,
	formats.ErrCheckpointSignature, transfer.ErrDigestMismatch, sign.ErrBadSignature,
	formats.ErrQuorum, publish.ErrWitnessAhead,
}

// usageTargets are the errors that are bad input (exitcode.Usage)
// whichever command met them: malformed records, keys, files and
// passphrases.
var usageTargets = []error{
	schemas.ErrMalformed, schemas.ErrInvalid, sign.ErrMalformedEnvelope, sign.ErrInvalidKey,
	sign.ErrKeyFilePermissions, sign.ErrWrongPassphrase, sign.ErrNoIdentity, sign.ErrExists, fs.ErrNotExist,
	fs.ErrPermission, ledger.ErrNotALog, formats.ErrMalformedCheckpoint, transfer.ErrDirtyBuild,
	transfer.ErrUnknownBuild, ledger.ErrWrongKey, ledger.ErrBatchTooLarge, formats.ErrPolicy, formats.ErrPolicyLog,
	sign.ErrNotKeyFile, runner.ErrMachineChanged,
	// Every failure of a key in a PKCS#11 token: sign.ErrTokenModule,
	// ErrTokenNotFound, ErrTokenPIN, ErrTokenObject and ErrTokenURI
	// wrap sign.ErrToken.
	sign.ErrToken,
}

// Classify returns the exit code for an error that no command marked:
// exitcode.No for refusals and failed verification (noTargets),
// exitcode.Usage for malformed input (usageTargets) and urfave/cli's
// usage errors, exitcode.Internal for anything else. It does not look
// at an exit code err carries (Describe does).
func Classify(err error) int {
	for _, target := range noTargets {
		if errors.Is(err, target) {
			return exitcode.No
		}
	}
	for _, target := range usageTargets {
		if errors.Is(err, target) {
			return exitcode.Usage
		}
	}
	if strings.HasPrefix(err.Error(), "Required flag") { // urfave/cli: "Required flag(s) ... not set"
		return exitcode.Usage
	}
	if strings.HasPrefix(err.Error(), "No help topic for") { // urfave/cli: writ help NOSUCH
		return exitcode.Usage
	}
	return exitcode.Internal
}

// TrustRefusal reports whether err refuses an assertion the operator
// gave, with the flag that gives it and the rule id: the Flag and Rule
// of an exit error err carries (exitcode.Of; a fleet file's key), a
// *ledger.TrustError (--trust-root for rules.RootUntrusted, else
// --decisions-vkey for the decision log, else --vkey), or a witness
// quorum missed (formats.ErrQuorum: --policy, rules.LedgerUnwitnessed).
func TrustRefusal(err error) (flag, rule string, ok bool) {
	if xe := exitcode.Of(err); xe != nil && xe.Flag != "" {
		return xe.Flag, xe.Rule, true
	}
	var te *ledger.TrustError
	switch {
	case errors.As(err, &te):
		switch {
		case te.Rule == rules.RootUntrusted:
			flag = "--trust-root"
		case te.Log == "decisions":
			flag = "--decisions-vkey"
		default:
			flag = "--vkey"
		}
		return flag, te.Rule, true
	case errors.Is(err, formats.ErrQuorum):
		return "--policy", rules.LedgerUnwitnessed, true
	}
	return "", "", false
}

// Rule returns the rule id a refused trust assertion (TrustRefusal), a
// damaged log store (*ledger.StoreError), a denial (*delegation.Denial),
// a refused record (*delegation.RecordError) or a writer service's
// refusal (an error with a RuleID method, logservice.Refusal) carries, in
// that order; "" when none does.
func Rule(err error) string {
	if _, rule, ok := TrustRefusal(err); ok {
		return rule
	}
	var se *ledger.StoreError
	if errors.As(err, &se) {
		return se.Rule()
	}
	var d *delegation.Denial
	if errors.As(err, &d) {
		return d.Rule
	}
	var re *delegation.RecordError
	if errors.As(err, &re) {
		return re.Rule
	}
	var ruled interface{ RuleID() string } // a refusal a service sent (logservice.Refusal)
	if errors.As(err, &ruled) {
		return ruled.RuleID()
	}
	return ""
}

// Failure is what every command prints on stderr, one line, when it
// fails under --json: the message, the exit code (1 a verdict of no, 2
// bad usage or input, 3 internal, 4 busy), the stable rule id of a
// refused record ("" when none applies) and the next acts, in order.
type Failure struct {
	Error string   `json:"error"`
	Exit  int      `json:"exit"`
	Rule  string   `json:"rule"`
	Hints []string `json:"hints"`
	// Evidence, for a log that is not an extension of a checkpoint trusted
	// before (a fork or a rollback): both checkpoints, as signed notes
	// where writ had them, and the failed consistency proof.
	Evidence *ledger.Evidence `json:"evidence,omitempty"`
	// EvidenceLines are evidence to keep as text (signed checkpoints of
	// a split view or a fork met by a sync), printed as `writ: evidence:`
	// lines.
	EvidenceLines []string `json:"evidence_lines,omitempty"`
	// Silent: the command printed its result already; Report prints
	// nothing.
	Silent bool `json:"-"`
}

// Describe returns what the command line says of err, which must not be
// nil: its exit code (the one it carries, else Classify's; 4 when a
// ledger or witness state is locked; 1 for a refused trust assertion or
// a damaged store), its message ("internal error: " first for exit 3;
// the flag first for a refused trust assertion), its rule and hints: the
// discarding of an output cut short first (fileio.PartialOutputError),
// then the ones it carries, a damaged store's next act (repair.NextAct),
// the refused assertion's rule's ReportAct, else LockedHint for a lock.
func Describe(err error) Failure {
	code := Classify(err)
	xe := exitcode.Of(err)
	var hints, evidence []string
	if xe != nil {
		code, evidence = xe.Code, xe.Evidence
		if xe.Silent {
			return Failure{Error: err.Error(), Exit: code, Silent: true}
		}
		hints = append(hints, xe.Hints...)
	}
	if pe := (*fileio.PartialOutputError)(nil); errors.As(err, &pe) {
		hints = append([]string{pe.Hint()}, hints...) // bytes already out: said first, before the error's own hints
	}
	// A ledger or witness state in use by another process is neither a
	// verdict, nor bad input, nor an internal error, whichever command met
	// it: the input cannot be used now; retry.
	locked := errors.Is(err, ledger.ErrLocked)
	if locked || errors.Is(err, witness.ErrLocked) {
		code = exitcode.Busy
	}
	msg := err.Error()
	if code == exitcode.Internal {
		msg = "internal error: " + msg
	}
	trustHint := ""
	if flag, rule, ok := TrustRefusal(err); ok {
		// An assertion the operator gave does not hold: a verdict of no,
		// whatever the command made of the error, naming the flag.
		code, msg = exitcode.No, flag+": "+msg
		if r, found := rules.Lookup(rule); found {
			trustHint = r.ReportAct
		}
	}
	// A damaged log store is a verdict of no whichever command met it,
	// with its rule's next act.
	var se *ledger.StoreError
	if errors.As(err, &se) {
		code, msg = exitcode.No, err.Error()
		hints = append(hints, repair.NextAct(se))
	}
	if trustHint != "" {
		hints = append(hints, trustHint)
	}
	if locked && len(hints) == 0 {
		hints = append(hints, LockedHint)
	}
	f := Failure{Error: msg, Exit: code, Rule: Rule(err), Hints: hints, EvidenceLines: evidence}
	if f.Hints == nil {
		f.Hints = []string{}
	}
	var inc *ledger.InconsistencyError
	if errors.As(err, &inc) {
		ev := inc.Evidence()
		f.Evidence = &ev
	}
	return f
}

// Report writes err on w and returns its exit code (Describe's; 0 for a
// nil err, with nothing written): under --json (asJSON) the Failure as
// one JSON object on one line, else `writ: error: MESSAGE` (escaped onto
// one line) and a `writ: hint: HINT` line for each hint, and one saying
// to keep the evidence when the Failure has some. A silent error writes
// nothing.
func Report(w io.Writer, err error, asJSON bool) int {
	if err == nil {
		return exitcode.OK
	}
	f := Describe(err)
	switch {
	case f.Silent:
	case asJSON:
		b, _ := json.Marshal(f)
		fmt.Fprintf(w, "%s\n", b)
	default:
		fmt.Fprintf(w, "writ: error: %s\n", humanize.OneLine(f.Error))
		for _, h := range f.Hints {
			fmt.Fprintf(w, "writ: hint: %s\n", h)
		}
		for _, e := range f.EvidenceLines {
			fmt.Fprintf(w, "writ: evidence: %s\n", e)
		}
		if f.Evidence != nil {
			fmt.Fprintf(w, "writ: hint: %s\n", evidenceHint)
		}
	}
	return f.Exit
}
