package serving

import (
	"errors"
	"testing"

	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/witness"
)

func TestCheckWitnessLogs(t *testing.T) {
	vkey, err := formats.VerifierKey("example.com/log", testkit.Key(t, 50).Public())
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckWitnessLogs([]string{vkey}); err != nil {
		t.Errorf("a verifier key: %v", err)
	}
	err = CheckWitnessLogs([]string{vkey, "example.com/log"})
	var xe *exitcode.Error
	if !errors.As(err, &xe) || xe.Code != exitcode.Usage || err.Error() != `--log "example.com/log": not an Ed25519 signed-note verifier key (<origin>+<8 hex>+<base64>): malformed verifier id` {
		t.Errorf("not a verifier key: %v", err)
	}
}

func TestOpenWitness(t *testing.T) {
	vkey, err := formats.VerifierKey("example.com/log", testkit.Key(t, 50).Public())
	if err != nil {
		t.Fatal(err)
	}
	cfg := witness.Config{Name: "witness.example/w1", Key: testkit.Key(t, 60), Dir: t.TempDir(), Logs: []string{vkey}}
	w, err := OpenWitness(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	bad := cfg
	bad.Name = "no name"
	for _, tc := range []struct {
		name  string
		cfg   witness.Config
		code  int
		is    error
		hints int
	}{
		{"locked", cfg, exitcode.Busy, witness.ErrLocked, 1},
		{"bad name", bad, exitcode.Usage, witness.ErrConfig, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := OpenWitness(tc.cfg)
			var xe *exitcode.Error
			if !errors.As(err, &xe) || xe.Code != tc.code || !errors.Is(err, tc.is) || len(xe.Hints) != tc.hints {
				t.Errorf("OpenWitness: %v, want exit %d wrapping %v with %d hints", err, tc.code, tc.is, tc.hints)
			}
		})
	}
}
