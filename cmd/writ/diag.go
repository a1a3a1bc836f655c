package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/writ-ledger/writ/internal/diagnostic"
)

// Diagnostic levels (package diagnostic's).
const (
	levelNote    = diagnostic.Note
	levelWarning = diagnostic.Warning
	levelInfo    = diagnostic.Info
)

// diag writes one diagnostic line on stderr: "writ: LEVEL: message"
// ("writ: message" for info), or under --json one diagnostic.JSON object.
func diag(c *cli.Context, level, format string, args ...any) {
	diagnostic.Write(c.App.ErrWriter, wantJSON(c), level, fmt.Sprintf(format, args...))
}
