// Package clicmd holds writ commands whose code lives outside package
// main (which only registers them): `writ inspect`. It also holds the
// one way every writ command prints its result (Emit), so that commands
// here and in package main print alike.
package clicmd

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/cliflags"
	"github.com/writ-ledger/writ/internal/jsonobject"
)

// Emit prints one result: v as one JSON object with --json, else the
// human lines. Errors are the writer's.
func Emit(c *cli.Context, v any, human ...string) error {
	if cliflags.WantJSON(c) {
		if OnEmit != nil {
			OnEmit(cliflags.CmdPath(c), v)
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

// EmitSorted prints result v as Emit does, its top-level keys sorted.
func EmitSorted(c *cli.Context, v any, human ...string) error {
	b, err := jsonobject.Sorted(v)
	if err != nil {
		return err
	}
	return Emit(c, json.RawMessage(b), human...)
}

// OnEmit, when set (by the tests only), sees every JSON result with the
// command that printed it: the tests check each result's fields against
// the ones `writ COMMAND --help` documents.
var OnEmit func(command string, v any)
