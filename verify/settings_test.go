package verify

import (
	"errors"
	"testing"
	"time"
)

// TestSettingsCheck: each setting out of range is named with its value.
func TestSettingsCheck(t *testing.T) {
	good := Config{Machine: "runner-1"}
	if err := good.Check(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Machine: "-x"}, `machine "-x": letters, digits, '.', '_', '-', starting with a letter or digit`},
		{Config{Machine: "m", MaxLedgerAge: -time.Second}, "max-ledger-age -1s: must not be negative (0 means no limit)"},
		{Config{Machine: "m", ControlWorkspace: "rel/ws"}, `control-workspace "rel/ws": an absolute path, without whitespace (a brief token never contains any)`},
		{Config{Machine: "m", ControlWorkspace: "/a b"}, `control-workspace "/a b": an absolute path, without whitespace (a brief token never contains any)`},
	} {
		var se *SettingError
		if err := tc.cfg.Check(); !errors.As(err, &se) || err.Error() != tc.want {
			t.Errorf("%+v: %v, want %s", tc.cfg, err, tc.want)
		}
	}
	if err := (&Trust{TrustRoot: "sha256:00"}).Check(); err == nil || err.Error() != `trust-root "sha256:00": want the root record's digest, sha256: and 64 hex digits` {
		t.Errorf("trust root: %v", err)
	}
	if err := (&Trust{}).Check(); err != nil {
		t.Errorf("no trust root: %v", err)
	}
}
