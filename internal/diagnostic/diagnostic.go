// Package diagnostic writes writ's diagnostics on stderr: one line
// "writ: LEVEL: message" ("writ: message" for info), or under --json one
// JSON object {"level": LEVEL, "message": message}, told apart from a
// failure ({"error": ...}) by its "level". The message is escaped onto
// one line (humanize.OneLine), and a progress bar on screen is cleared
// first.
package diagnostic

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/writ-ledger/writ/internal/humanize"
	"github.com/writ-ledger/writ/internal/progress"
)

// Diagnostic levels: a note says how something was done, a warning that
// a result holds although something is wrong or risky, info what a
// long-running command is doing now.
const (
	Note    = "note"
	Warning = "warning"
	Info    = "info"
)

// JSON is a diagnostic under --json: one object per line on stderr.
type JSON struct {
	Level   string `json:"level"`
	Message string `json:"message"`
}

// Write writes one diagnostic of level (Note, Warning or Info) to w, as
// a line for people, or as one JSON object when asJSON.
func Write(w io.Writer, asJSON bool, level, msg string) {
	progress.Clear()
	msg = humanize.OneLine(msg)
	if asJSON {
		b, _ := json.Marshal(JSON{Level: level, Message: msg})
		fmt.Fprintf(w, "%s\n", b)
		return
	}
	if level == Info {
		fmt.Fprintf(w, "writ: %s\n", msg)
		return
	}
	fmt.Fprintf(w, "writ: %s: %s\n", level, msg)
}
