package ledger_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
)

// The sentinels a caller branches on are reachable with errors.Is.

func TestErrClosed(t *testing.T) {
	l, err := ledger.Create(filepath.Join(t.TempDir(), "log"), "example.com/closed", testkit.Key(t, 40), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append([][]byte{[]byte("late")}); !errors.Is(err, ledger.ErrClosed) {
		t.Fatalf("append after Close: %v, want ErrClosed", err)
	}
}

func TestErrNoRunnerKey(t *testing.T) {
	dir := t.TempDir()
	if err := openDecisions(dir, ledgerdir.KeyParams{}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"runner.key", "runner.pub", "runner.protection"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	if err := openDecisions(dir, ledgerdir.KeyParams{}); !errors.Is(err, ledger.ErrNoRunnerKey) {
		t.Fatalf("a decision log without its runner key: %v, want ErrNoRunnerKey", err)
	}
}
