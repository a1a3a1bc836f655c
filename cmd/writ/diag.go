package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/writ-ledger/writ/internal/humanize"
)

// Diagnostic levels: a note says how something was done, a warning that
// a result holds although something is wrong or risky, info what a
// long-running command is doing now.
const (
	levelNote    = "note"
	levelWarning = "warning"
	levelInfo    = "info"
)

// diagnosticJSON is a diagnostic under --json: one object per line on
// stderr, told apart from a failure ({"error": ...}) by its "level".
type diagnosticJSON struct {
	Level   string `json:"level"`
	Message string `json:"message"`
}

// diag writes one diagnostic line on stderr: "writ: LEVEL: message"
// ("writ: message" for info), or under --json one diagnosticJSON object.
func diag(c *cli.Context, level, format string, args ...any) {
	writeDiag(c.App.ErrWriter, wantJSON(c), level, fmt.Sprintf(format, args...))
}

func writeDiag(w io.Writer, asJSON bool, level, msg string) {
	clearProgress()
	msg = humanize.OneLine(msg)
	if asJSON {
		b, _ := json.Marshal(diagnosticJSON{Level: level, Message: msg})
		fmt.Fprintf(w, "%s\n", b)
		return
	}
	if level == levelInfo {
		fmt.Fprintf(w, "writ: %s\n", msg)
		return
	}
	fmt.Fprintf(w, "writ: %s: %s\n", level, msg)
}
