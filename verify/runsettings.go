package verify

import (
	"fmt"
	"time"

	"github.com/writ-ledger/writ/internal/fileio"
	"github.com/writ-ledger/writ/policy"
	"github.com/writ-ledger/writ/transfer"
)

// Settings are a runner's settings as its operator gives them (writ
// admit's and writ admission serve's flags), before they are checked.
type Settings struct {
	Machine          string        // this runner's machine name
	Mode             string        // "off", "warn" or "enforce" (ParseMode)
	MaxLedgerAge     time.Duration // 0 for no limit
	Refuse           []string      // rule ids refused in every mode (ParseRefuse)
	RequireReceipt   bool
	ControlWorkspace string // an absolute path, or "" for none
	PolicyFile       string // the admission policy's file (package policy), or "" for none
}

// Config checks s and returns the runner's Config, for this platform
// (transfer.Platform) and the clock time.Now. The first setting out of
// range is the error, each naming the setting as its flag is spelled
// (so that "--" and the error is the message): a *SettingError
// (Config.Check), ParseMode's error ("mode ..."), or ParseRefuse's after
// "refuse ", or a policy file that does not read or compile ("policy-cel
// FILE: ...", wrapping policy.ErrPolicy).
func (s Settings) Config() (Config, error) {
	cfg := Config{
		Machine: s.Machine, Platform: transfer.Platform(), Now: time.Now,
		MaxLedgerAge: s.MaxLedgerAge, RequireReceipt: s.RequireReceipt, ControlWorkspace: s.ControlWorkspace,
	}
	if err := cfg.Check(); err != nil {
		return Config{}, err
	}
	var err error
	if cfg.Mode, err = ParseMode(s.Mode); err != nil {
		return Config{}, err
	}
	if cfg.AlwaysRefuse, err = ParseRefuse(s.Refuse); err != nil {
		return Config{}, fmt.Errorf("refuse %w", err)
	}
	if s.PolicyFile != "" {
		data, err := fileio.ReadWhole(nil, s.PolicyFile, policy.MaxFileSize)
		if err == nil {
			cfg.Policy, err = policy.Parse(data)
		}
		if err != nil {
			return Config{}, fmt.Errorf("policy-cel %s: %w", s.PolicyFile, err)
		}
	}
	return cfg, nil
}
