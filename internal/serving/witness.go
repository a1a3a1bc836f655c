package serving

import (
	"errors"

	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/witness"
)

// CheckWitnessLogs checks the logs witness serve is given (--log), before
// its key is unlocked: each must be an Ed25519 signed-note verifier key,
// else bad usage (*exitcode.Error, exit 2) naming the first that is not.
func CheckWitnessLogs(logs []string) error {
	for _, l := range logs {
		if _, err := formats.NewVerifier(l); err != nil {
			return exitcode.Usagef("--log %q: not an Ed25519 signed-note verifier key (<origin>+<8 hex>+<base64>): %v", l, err)
		}
	}
	return nil
}

// OpenWitness opens the witness witness serve runs (witness.New). Its
// errors are *exitcode.Error with the next act as a hint: busy (exit 4)
// when another witness holds cfg.Dir (witness.ErrLocked), a verdict of no
// (exit 1) for a state file it will not start from
// (witness.ErrCorruptState), bad input (exit 2) for the others.
func OpenWitness(cfg witness.Config) (*witness.Witness, error) {
	w, err := witness.New(cfg)
	switch {
	case errors.Is(err, witness.ErrLocked):
		return nil, &exitcode.Error{Code: exitcode.Busy, Err: err, Hints: []string{"another writ witness serve has this directory; stop it, or give another --dir"}}
	case errors.Is(err, witness.ErrCorruptState):
		return nil, &exitcode.Error{Code: exitcode.No, Err: err, Hints: []string{"the witness does not start without the state it cosigned from: restore the file, or investigate; never delete it to get going"}}
	case err != nil:
		return nil, exitcode.Input(err)
	}
	return w, nil
}
