package verify

import (
	"errors"
	"testing"
	"time"

	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/transfer"
)

func TestSettingsConfig(t *testing.T) {
	good := Settings{Machine: "runner-1", Mode: "enforce", MaxLedgerAge: time.Hour, Refuse: []string{rules.Replay},
		RequireReceipt: true, ControlWorkspace: "/work"}
	cfg, err := good.Config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Machine != "runner-1" || cfg.Mode != ModeEnforce || cfg.MaxLedgerAge != time.Hour || !cfg.AlwaysRefuse[rules.Replay] ||
		len(cfg.AlwaysRefuse) != 1 || !cfg.RequireReceipt || cfg.ControlWorkspace != "/work" || cfg.Platform != transfer.Platform() || cfg.Now == nil {
		t.Errorf("Config: %+v", cfg)
	}
	for _, tc := range []struct {
		name    string
		edit    func(*Settings)
		want    string
		setting bool // a *SettingError
	}{
		{"machine", func(s *Settings) { s.Machine = "" }, `machine "": letters, digits, '.', '_', '-', starting with a letter or digit`, true},
		{"age", func(s *Settings) { s.MaxLedgerAge = -time.Second }, "max-ledger-age -1s: must not be negative (0 means no limit)", true},
		{"mode", func(s *Settings) { s.Mode = "strict" }, `mode "strict": must be off, warn or enforce`, false},
		{"refuse ok", func(s *Settings) { s.Refuse = []string{rules.OK} }, `refuse "ok" is the rule of a verdict with no failure; name a rule that can fail (see writ admit --rules)`, false},
		{"refuse unknown", func(s *Settings) { s.Refuse = []string{"nope"} }, `refuse "nope" is not a rule id (see writ admit --rules)`, false},
		{"machine first", func(s *Settings) { s.Machine, s.Mode = "", "strict" }, `machine "": letters, digits, '.', '_', '-', starting with a letter or digit`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := good
			tc.edit(&s)
			_, err := s.Config()
			var se *SettingError
			if err == nil || err.Error() != tc.want || errors.As(err, &se) != tc.setting {
				t.Errorf("Config: %v, want %q (a *SettingError: %v)", err, tc.want, tc.setting)
			}
		})
	}
}
