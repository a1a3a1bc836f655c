package main

// Output: one result a command prints, as JSON under --json or as lines
// for people; diagnostics and errors go to stderr (diag.go, errors.go).

import (
	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/clicmd"
	"github.com/writ-ledger/writ/internal/cliflags"
)

// emit is clicmd.Emit: v as one JSON object with --json, else the human
// lines.
func emit(c *cli.Context, v any, human ...string) error { return clicmd.Emit(c, v, human...) }

// wantJSON is cliflags.WantJSON: --json given before or after the
// command name.
func wantJSON(c *cli.Context) bool { return cliflags.WantJSON(c) }
