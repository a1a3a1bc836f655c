package ledger_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/writ-ledger/writ/ledger"
)

// TestWalkDamagedBlock: a data block that does not read back ends
// Badger's iteration early; Walk (what an export reads) then names the
// damaged table in a *StoreError, as Verify does, rather than reporting
// an entry missing.
func TestWalkDamagedBlock(t *testing.T) {
	dir, _ := newLog(t, 3000)
	table, b := firstTable(t, dir)
	b[200] ^= 0xff // inside the first data block (blocks are 4 KiB; the table far more)
	if err := os.WriteFile(table, b, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(dir, nil)
	if err != nil {
		t.Fatalf("open: %v (the damage is meant for a block an open does not read)", err)
	}
	defer l.Close()
	for name, run := range map[string]func() error{
		"Walk":   func() error { return l.Walk(l.Size(), func(int64, []byte, []byte) error { return nil }) },
		"Verify": func() error { _, err := l.Verify(nil, nil); return err },
	} {
		err := run()
		var se *ledger.StoreError
		if !errors.As(err, &se) || se.File != filepath.Base(table) || !errors.Is(err, ledger.ErrStoreDamaged) {
			t.Errorf("%s: %v, want a *StoreError naming %s", name, err, filepath.Base(table))
		}
	}
}
