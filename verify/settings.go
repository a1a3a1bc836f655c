package verify

import (
	"strconv"
	"strings"

	"github.com/writ-ledger/writ/schemas"
)

// SettingError is a runner setting whose value is out of its range
// (Config.Check, Trust.Check): Setting names it as the command line spells
// its flag ("machine", "max-ledger-age", ...), Value is the value as
// given (quoted when it is text), Want what it must be.
type SettingError struct {
	Setting, Value, Want string
}

func (e *SettingError) Error() string { return e.Setting + " " + e.Value + ": " + e.Want }

// Check returns a *SettingError for the first of c's settings out of
// range: a Machine name schemas does not accept, a negative MaxLedgerAge,
// a ControlWorkspace ("" for none) that is not an absolute path without
// whitespace.
func (c *Config) Check() error {
	switch ws := c.ControlWorkspace; {
	case !schemas.ValidMachine(c.Machine):
		return &SettingError{"machine", strconv.Quote(c.Machine), "letters, digits, '.', '_', '-', starting with a letter or digit"}
	case c.MaxLedgerAge < 0:
		return &SettingError{"max-ledger-age", c.MaxLedgerAge.String(), "must not be negative (0 means no limit)"}
	case ws != "" && (!strings.HasPrefix(ws, "/") || strings.ContainsAny(ws, " \t\n")):
		return &SettingError{"control-workspace", strconv.Quote(ws), "an absolute path, without whitespace (a brief token never contains any)"}
	}
	return nil
}

// Check returns a *SettingError when t's TrustRoot is given ("" for none)
// and is not a record digest (sha256: and 64 hex digits).
func (t *Trust) Check() error {
	if t.TrustRoot != "" && !schemas.ValidDigest(t.TrustRoot) {
		return &SettingError{"trust-root", strconv.Quote(t.TrustRoot), "want the root record's digest, sha256: and 64 hex digits"}
	}
	return nil
}
