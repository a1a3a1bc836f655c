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

// vkeyValue is logKeyValue's text form ("" if none), for the options
// that keep a key as text (an audit's, a repair's).
func vkeyValue(c *cli.Context, name string) (string, error) {
	k, err := logKeyValue(c, name)
	if k == nil {
		return "", err
	}
	return k.String(), nil
}

// wantArgs is cliflags.WantArgs: exactly n positional arguments (n < 0:
// at least one), described by what, else bad usage.
func wantArgs(c *cli.Context, n int, what string) error { return cliflags.WantArgs(c, n, what) }
