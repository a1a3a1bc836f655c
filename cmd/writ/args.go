package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/sign"
)

// vkeyValue returns the verifier key given with --NAME ("" if none), or
// bad usage if it is not a signed-note verifier key.
func vkeyValue(c *cli.Context, name string) (string, error) {
	v := c.String(name)
	if v == "" {
		return "", nil
	}
	if _, err := formats.NewVerifier(v); errors.Is(err, sign.ErrInvalidKey) {
		return "", usageErr("--%s: %v", name, err)
	} else if err != nil {
		return "", usageErr("--%s: not a signed-note verifier key (<origin>+<8 hex>+<base64>): %v", name, err)
	}
	return v, nil
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
