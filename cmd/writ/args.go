package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/sign"
)

// logKeyValue returns the verifier key given with --NAME, parsed (nil if
// none), or bad usage if it is not a signed-note verifier key.
func logKeyValue(c *cli.Context, name string) (*formats.LogKey, error) {
	v := c.String(name)
	if v == "" {
		return nil, nil
	}
	k, err := formats.ParseLogKey(v)
	if errors.Is(err, sign.ErrInvalidKey) {
		return nil, usageErr("--%s: %v", name, err)
	} else if err != nil {
		return nil, usageErr("--%s: not a signed-note verifier key (<origin>+<8 hex>+<base64>): %v", name, err)
	}
	return k, nil
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

// wantArgs checks that the command got exactly n positional arguments
// (n < 0: at least one), described by what. Flags written after the
// arguments were moved before them (cliflags.Interspersed), so a word here that
// looks like a flag came after "--" and is an argument.
func wantArgs(c *cli.Context, n int, what string) error {
	if (n >= 0 && c.NArg() == n) || (n < 0 && c.NArg() > 0) {
		return nil
	}
	return &exitError{code: exitUsage, err: fmt.Errorf("%s takes %s", cmdPath(c), what)}
}
