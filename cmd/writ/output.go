package main

// Output: one result a command prints, as JSON under --json or as lines
// for people; diagnostics and errors go to stderr (diag.go, errors.go).

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/cliflags"
)

// emit prints one result: v as one JSON object with --json, else the human
// lines.
func emit(c *cli.Context, v any, human ...string) error {
	if wantJSON(c) {
		if onEmit != nil {
			onEmit(cmdPath(c), v)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return err
		}
		_, err := c.App.Writer.Write(buf.Bytes())
		return err
	}
	for _, line := range human {
		if _, err := fmt.Fprintln(c.App.Writer, line); err != nil {
			return err
		}
	}
	return nil
}

// onEmit, when set (by the tests only), sees every JSON result with the
// command that printed it: the tests check each result's fields against
// the ones `writ COMMAND --help` documents.
var onEmit func(command string, v any)

// wantJSON is cliflags.WantJSON: --json given before or after the
// command name.
func wantJSON(c *cli.Context) bool { return cliflags.WantJSON(c) }

// cmdPath is cliflags.CmdPath: the command's full name, such as "ledger
// append".
func cmdPath(c *cli.Context) string { return cliflags.CmdPath(c) }
