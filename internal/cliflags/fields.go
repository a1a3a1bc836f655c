package cliflags

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/schemas"
)

// CommaList splits each of values on commas and trims the spaces around
// each part, for the flags whose help documents a comma-separated list
// (--action, and --refuse of admit and admission serve). Every other
// repeatable flag takes its value whole (DisableSliceFlagSeparator). An
// empty part is kept, so that the record's or the rule's check refuses
// "instruct,,pin" by name instead of reading it as two actions.
func CommaList(values []string) []string {
	var out []string
	for _, v := range values {
		for _, s := range strings.Split(v, ",") {
			out = append(out, strings.TrimSpace(s))
		}
	}
	return out
}

// HasFlag reports whether cmd takes a flag called name (any of its names).
func HasFlag(cmd *cli.Command, name string) bool {
	for _, f := range cmd.Flags {
		if slices.Contains(f.Names(), name) {
			return true
		}
	}
	return false
}

// fieldFlags names the flag behind a record field where the names differ
// by more than '_' for '-' and a plural 's': the delegation's key is the
// delegate's (--to), not the signer's (--key).
var fieldFlags = map[string]string{"delegation.key": "to"}

// FieldFlag names the flag of cmd that gave the field a
// *schemas.FieldError in err breaks (a record a signing command built):
// err wrapped as "--FLAG: err", so the operator sees which value to
// change ("--machine: delegation.machines: pattern 0 "a,b": ..."). The
// flag is the one fieldFlags names, else the field with '-' for '_' and
// '.', else its top-level part, else that part without a plural 's'. err
// is returned unchanged when it holds no FieldError, cmd is nil, or cmd
// takes none of those flags.
func FieldFlag(cmd *cli.Command, err error) error {
	var fe *schemas.FieldError
	if !errors.As(err, &fe) || cmd == nil {
		return err
	}
	top, _, _ := strings.Cut(fe.Field, ".")
	dashed := strings.NewReplacer("_", "-", ".", "-")
	for _, name := range []string{fieldFlags[string(fe.Kind)+"."+top], dashed.Replace(fe.Field), dashed.Replace(top), strings.TrimSuffix(dashed.Replace(top), "s")} {
		if name != "" && HasFlag(cmd, name) {
			return fmt.Errorf("--%s: %w", name, err)
		}
	}
	return err
}

// One returns the one value of the repeatable flag name ("" when values,
// its values, is empty): a flag such as --key, repeatable everywhere but
// taking one value in some commands, where a second value is refused
// rather than silently replacing the first. More than one is bad usage
// (an *exitcode.Error, exit 2) saying how many were given and why (the
// command's reason that it takes one).
func One(values []string, name, why string) (string, error) {
	switch len(values) {
	case 0:
		return "", nil
	case 1:
		return values[0], nil
	default:
		return "", exitcode.Usagef("--%s given %d times: %s; give one --%s", name, len(values), why, name)
	}
}
