package cliflags

import (
	"errors"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/sign"
)

// WantJSON reports whether --json was given to the command of c or to
// any command above it: `writ --json CMD` and `writ CMD --json` are the
// same.
func WantJSON(c *cli.Context) bool {
	for _, x := range c.Lineage() {
		if x.Bool("json") {
			return true
		}
	}
	return false
}

// CmdPath returns the full name of the command of c, its groups first,
// without the application's name: "ledger append".
func CmdPath(c *cli.Context) string {
	var names []string
	for _, x := range c.Lineage() {
		if x.Command != nil && x.Command.Name != "" && x.Command.Name != c.App.Name && (len(names) == 0 || names[0] != x.Command.Name) {
			names = append([]string{x.Command.Name}, names...)
		}
	}
	return strings.Join(names, " ")
}

// WantArgs checks that the command of c got exactly n positional
// arguments (n < 0: at least one), which what describes ("one FILE").
// Flags written after the arguments were moved before them
// (Interspersed), so a word here that looks like a flag came after "--"
// and is an argument. Else it is bad usage: "CMD takes WHAT".
func WantArgs(c *cli.Context, n int, what string) error {
	if (n >= 0 && c.NArg() == n) || (n < 0 && c.NArg() > 0) {
		return nil
	}
	return exitcode.Usagef("%s takes %s", CmdPath(c), what)
}

// LogKey returns the signed-note verifier key given with --NAME, parsed
// (formats.ParseLogKey), or nil when the flag is empty. A value that is
// not a verifier key is bad usage naming the flag: the key's own error
// for an invalid key (sign.ErrInvalidKey), else what one looks like.
func LogKey(c *cli.Context, name string) (*formats.LogKey, error) {
	v := c.String(name)
	if v == "" {
		return nil, nil
	}
	k, err := formats.ParseLogKey(v)
	if errors.Is(err, sign.ErrInvalidKey) {
		return nil, exitcode.Usagef("--%s: %v", name, err)
	} else if err != nil {
		return nil, exitcode.Usagef("--%s: not a signed-note verifier key (<origin>+<8 hex>+<base64>): %v", name, err)
	}
	return k, nil
}

// ParseTime reads the value s of --FLAG: an RFC 3339 time, or a Go
// duration from now (which may be negative, "-1h"). Anything else is bad
// usage saying both forms.
func ParseTime(flag, s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(d), nil
	}
	return time.Time{}, exitcode.Usagef("--%s %q: want an RFC 3339 time (2026-11-29T10:00:00Z) or a duration from now (720h later, -720h earlier)", flag, s)
}
