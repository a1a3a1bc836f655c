package main

import (
	"github.com/urfave/cli/v2"

	"github.com/writ-ledger/writ/internal/progress"
	"github.com/writ-ledger/writ/ledger"
)

// progressFor is progress.For on the command's stderr, nil under --json
// (stderr then carries JSON objects only).
func progressFor(c *cli.Context, what, unit string) ledger.Progress {
	if wantJSON(c) {
		return nil
	}
	return progress.For(c.App.ErrWriter, what, unit)
}
