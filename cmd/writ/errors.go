package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/humanize"
	"github.com/writ-ledger/writ/internal/progress"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/publish"
	"github.com/writ-ledger/writ/ledger/repair"
	"github.com/writ-ledger/writ/ledger/witness"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
	"github.com/writ-ledger/writ/transfer"
)

// Exit codes, as README.md states them: 0 to 3, and exitBusy for what
// those four do not cover: the input is good but another process holds
// it now (sysexits' EX_TEMPFAIL, as a retry-or-wait signal for scripts).
const (
	exitOK       = 0
	exitNo       = 1
	exitUsage    = 2
	exitInternal = 3
	exitBusy     = 4
)

// exitError carries an exit code, the message for stderr, and hints.
type exitError struct {
	code   int
	err    error
	hints  []string
	silent bool // the result was already printed; print nothing more
	// flag and rule, when set, say which operator's assertion the error
	// refuses (trustRefusal): a verdict of no, naming both.
	flag, rule string
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// inputErr marks err as bad input (exit 2), with optional hints.
func inputErr(err error, hints ...string) error {
	return &exitError{code: exitUsage, err: err, hints: hints}
}

// noErr marks err as a verdict of no (exit 1), with optional hints.
func noErr(err error, hints ...string) error {
	return &exitError{code: exitNo, err: err, hints: hints}
}

// openErr gives an error from opening a log its exit code: 1 for a
// damaged store (tamper evidence), 4 when another process holds it, 2 for
// anything else (no ledger there, unreadable).
// lockedHint is the hint for ledger.ErrLocked, wherever it surfaces.
const lockedHint = "another writ process has this log open: an append, import or verify, a running `writ admission serve` (which holds its decision log, and reads its authority log after each change), or a `writ ledger serve` reading it (a second at a time); retry when it is done, or stop the server"

func openErr(err error) error {
	switch {
	case errors.Is(err, ledger.ErrTampered):
		return noErr(err)
	case errors.Is(err, ledger.ErrLocked):
		return &exitError{code: exitBusy, err: err, hints: []string{lockedHint}}
	}
	return inputErr(err)
}

// keyErr marks an error loading or making a private key as bad input
// (exit 2), with a hint for each kind of PKCS#11 token failure. The
// error names the URI without its PIN (package sign's errors do).
func keyErr(err error) error {
	var hint string
	switch {
	case errors.Is(err, sign.ErrTokenURI):
		hint = "a key in a token is pkcs11:token=LABEL;object=LABEL (RFC 7512), with ?pin-source=FILE for a file holding the PIN, and &module-path=/abs/module.so unless $WRIT_PKCS11_MODULE gives the module"
	case errors.Is(err, sign.ErrTokenModule):
		hint = "give the token vendor's PKCS#11 library as an absolute path: module-path= in the URI's query, or $WRIT_PKCS11_MODULE (SoftHSM2 on Debian: /usr/lib/softhsm/libsofthsm2.so)"
	case errors.Is(err, sign.ErrTokenNotFound):
		hint = "token= is the token's label: list them with the token's tool (softhsm2-util --show-slots, pkcs11-tool --module MODULE --list-token-slots)"
	case errors.Is(err, sign.ErrTokenPIN):
		hint = "the pin-source file must hold the user PIN alone (one trailing newline at most); a token locks its PIN after a few wrong tries"
	case errors.Is(err, sign.ErrTokenObject):
		hint = "object= is the key's label: list the token's objects (pkcs11-tool --module MODULE --login --list-objects), or make one with writ key generate --out 'pkcs11:token=T;object=O' --pub FILE"
	case errors.Is(err, sign.ErrToken) && errors.Is(err, sign.ErrExists):
		hint = "choose another object= label: writ never replaces a key in a token"
	default:
		return inputErr(err)
	}
	return inputErr(err, hint)
}

// classify picks the exit code for an error that no command marked: bad
// input for malformed records, keys, files and passphrases; a verdict of no
// for refusals and failed verification; internal for anything else.
func classify(err error) int {
	for _, target := range []error{
		delegation.ErrRefused, delegation.ErrUnauthorized, ledger.ErrTampered,
		formats.ErrCheckpointSignature, transfer.ErrDigestMismatch, sign.ErrBadSignature,
		formats.ErrQuorum, publish.ErrWitnessAhead,
	} {
		if errors.Is(err, target) {
			return exitNo
		}
	}
	for _, target := range []error{
		schemas.ErrMalformed, schemas.ErrInvalid, sign.ErrMalformedEnvelope, sign.ErrInvalidKey,
		sign.ErrKeyFilePermissions, sign.ErrWrongPassphrase, sign.ErrNoIdentity, sign.ErrExists, fs.ErrNotExist,
		fs.ErrPermission, ledger.ErrNotALog, formats.ErrMalformedCheckpoint, transfer.ErrDirtyBuild,
		transfer.ErrUnknownBuild, ledger.ErrWrongKey, ledger.ErrBatchTooLarge, formats.ErrPolicy, formats.ErrPolicyLog,
		// Every failure of a key in a PKCS#11 token: sign.ErrTokenModule,
		// ErrTokenNotFound, ErrTokenPIN, ErrTokenObject and ErrTokenURI
		// wrap sign.ErrToken.
		sign.ErrToken,
	} {
		if errors.Is(err, target) {
			return exitUsage
		}
	}
	if strings.HasPrefix(err.Error(), "Required flag") { // urfave/cli: "Required flag(s) ... not set"
		return exitUsage
	}
	if strings.HasPrefix(err.Error(), "No help topic for") { // urfave/cli: writ help NOSUCH
		return exitUsage
	}
	return exitInternal
}

// report prints err as `writ: error: ...` and `writ: hint: ...` lines
// and returns the exit code. Under --json (asJSON) it prints one JSON
// object on stderr instead (see errorJSON).
func report(stderr io.Writer, err error, asJSON bool) int {
	if err == nil {
		return exitOK
	}
	progress.Clear() // a bar cut short by the failure
	code := classify(err)
	ee := exitOf(err)
	if ee != nil {
		code = ee.code
		if ee.silent {
			return code
		}
	}
	// A ledger or witness state in use by another process is neither a
	// verdict, nor bad input, nor an internal error, whichever command met
	// it: the input cannot be used now; retry.
	locked := errors.Is(err, ledger.ErrLocked)
	if locked || errors.Is(err, witness.ErrLocked) {
		code = exitBusy
	}
	msg := err.Error()
	if code == exitInternal {
		msg = "internal error: " + msg
	}
	trustHint := ""
	if flag, rule, ok := trustRefusal(err); ok {
		// An assertion the operator gave does not hold: a verdict of no,
		// whatever the command made of the error, naming the flag.
		code, msg = exitNo, flag+": "+msg
		if r, found := rules.Lookup(rule); found {
			trustHint = r.ReportAct
		}
	}
	var inc *ledger.InconsistencyError
	if !errors.As(err, &inc) {
		inc = nil
	}
	// A damaged log store is a verdict of no whichever command met it,
	// with its rule's next act.
	var hints []string
	if ee != nil {
		hints = append(hints, ee.hints...)
	}
	var se *ledger.StoreError
	if errors.As(err, &se) {
		code, msg = exitNo, err.Error()
		hints = append(hints, repair.NextAct(se))
	}
	if trustHint != "" {
		hints = append(hints, trustHint)
	}
	if asJSON {
		if hints == nil {
			hints = []string{}
		}
		if locked && len(hints) == 0 {
			hints = append(hints, lockedHint)
		}
		out := errorJSON{Error: msg, Exit: code, Rule: ruleOf(err), Hints: hints}
		if inc != nil {
			ev := inc.Evidence()
			out.Evidence = &ev
		}
		b, _ := json.Marshal(out)
		fmt.Fprintf(stderr, "%s\n", b)
		return code
	}
	fmt.Fprintf(stderr, "writ: error: %s\n", humanize.OneLine(msg))
	for _, h := range hints {
		fmt.Fprintf(stderr, "writ: hint: %s\n", h)
	}
	if locked && len(hints) == 0 {
		fmt.Fprintf(stderr, "writ: hint: %s\n", lockedHint)
	}
	if inc != nil {
		fmt.Fprintf(stderr, "writ: hint: keep the evidence: with --json the error carries both checkpoints (as signed notes where writ had them) and the proof, to check elsewhere\n")
	}
	return code
}

// errorJSON is what every command prints on stderr, one line, when it
// fails under --json: the message, the exit code (1 a verdict of no, 2
// bad usage or input, 3 internal), the stable rule id of a refused record
// ("" when none applies) and the next acts, in order.
type errorJSON struct {
	Error string   `json:"error"`
	Exit  int      `json:"exit"`
	Rule  string   `json:"rule"`
	Hints []string `json:"hints"`
	// Evidence, for a log that is not an extension of a checkpoint trusted
	// before (a fork or a rollback): both checkpoints, as signed notes
	// where writ had them, and the failed consistency proof.
	Evidence *ledger.Evidence `json:"evidence,omitempty"`
}

// trustRefusal reports whether err refuses an assertion the operator
// gave (a *ledger.TrustError, a witness quorum missed), with the flag
// that gives it and the rule id. An exitError may name the flag itself
// (a fleet file's key).
func trustRefusal(err error) (flag, rule string, ok bool) {
	var ee *exitError
	if errors.As(err, &ee) && ee.flag != "" {
		return ee.flag, ee.rule, true
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

// ruleOf returns the rule id a refused record, a refused trust assertion
// or a damaged log store carries, or "".
func ruleOf(err error) string {
	if _, rule, ok := trustRefusal(err); ok {
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
	return ""
}
