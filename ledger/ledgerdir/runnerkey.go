package ledgerdir

import (
	"github.com/writ-ledger/writ/ledger/keys"
	"github.com/writ-ledger/writ/sign"
)

// The runner key (its protection, the files, the statement) is package
// keys'; OpenDecisions makes or unlocks it through these, with the
// runner's part of KeyParams.

func (kp KeyParams) runner() keys.RunnerParams {
	return keys.RunnerParams{Protection: kp.Protection, Recipients: kp.Recipients, Identities: kp.Identities, Rand: kp.Rand, TokenKey: kp.TokenKey, PIN: kp.PIN}
}

func newRunnerKey(dir string, kp KeyParams) (*sign.PrivateKey, error) {
	return keys.NewRunner(dir, kp.runner())
}

func loadRunnerKey(dir string, kp KeyParams) (*sign.PrivateKey, error) {
	return keys.LoadRunner(dir, kp.runner())
}

func removeRunnerKey(dir string) { keys.RemoveRunner(dir) }
