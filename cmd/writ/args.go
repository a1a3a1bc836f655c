package main

import (
	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/cliflags"
	"github.com/writ-ledger/writ/ledger/formats"
)

// logKeyValue is cliflags.LogKey: the verifier key given with --NAME,
// parsed (nil if none), or bad usage if it is not one.
func logKeyValue(c *cli.Context, name string) (*formats.LogKey, error) {
	k, err := cliflags.LogKey(c, name)
	return k, err
}

// wantArgs is cliflags.WantArgs: exactly n positional arguments (n < 0:
// at least one), described by what, else bad usage.
func wantArgs(c *cli.Context, n int, what string) error { return cliflags.WantArgs(c, n, what) }
