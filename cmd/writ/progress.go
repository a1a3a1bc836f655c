package main

import (
	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/progress"
	ledgerprogress "github.com/writ-ledger/writ/ledger/progress"
)

// progressFor is progress.For on the command's stderr, nil under --json
// (stderr then carries JSON objects only).
func progressFor(c *cli.Context, what, unit string) ledgerprogress.Func {
	if wantJSON(c) {
		return nil
	}
	return progress.For(c.App.ErrWriter, what, unit)
}
