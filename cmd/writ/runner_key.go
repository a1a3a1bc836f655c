package main

import (
	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/runnerkey"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
)

// runnerKeyParams returns how the runner key of the ledger at dir is
// made or unlocked, as runnerkey.Params decides from the flags
// (runnerkey.ChoiceOf) and the command's secrets, and prints its note.
func runnerKeyParams(c *cli.Context, dir string) (ledgerdir.KeyParams, error) {
	kp, note, err := runnerkey.Params(dir, runnerkey.ChoiceOf(c), secretsOf(c))
	if note != "" {
		diag(c, levelNote, "%s", note)
	}
	return kp, err
}
