package replica

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
)

// TestExportDir: ExportDir exports the logs OpenExport names, says their
// names, sizes and the bytes written (exactly what Export writes), and a
// directory with no ledger is a *ledgerdir.OpenError.
func TestExportDir(t *testing.T) {
	w := newWriter(t, "example.com/exportdir", 1, 3)
	w.auth.Close()
	w.decis.Close()
	for _, tc := range []struct {
		authorityOnly bool
		logs          []string
		sizes         []int64
	}{
		{false, []string{ledgerdir.AuthorityLog, ledgerdir.DecisionsLog}, []int64{3, 3}},
		{true, []string{ledgerdir.AuthorityLog}, []int64{3}},
	} {
		var b bytes.Buffer
		got, err := ExportDir(&b, ledgerdir.Dir(w.dir), tc.authorityOnly, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Logs, tc.logs) || !slices.Equal(got.Sizes, tc.sizes) || got.Bytes != b.Len() || b.Len() == 0 {
			t.Fatalf("authority only %v: %+v (%d bytes written), want logs %v sizes %v", tc.authorityOnly, got, b.Len(), tc.logs, tc.sizes)
		}
		// The same bytes as Export of the same logs.
		names, logs, err := ledgerdir.Dir(w.dir).OpenExport(tc.authorityOnly)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		err = Export(&want, names, logs)
		for _, l := range logs {
			l.Close()
		}
		if err != nil || !bytes.Equal(want.Bytes(), b.Bytes()) {
			t.Fatalf("authority only %v: ExportDir's bytes differ from Export's (%v)", tc.authorityOnly, err)
		}
	}
	_, err := ExportDir(&bytes.Buffer{}, ledgerdir.Dir(filepath.Join(t.TempDir(), "none")), false, nil)
	var oe *ledgerdir.OpenError
	if !errors.As(err, &oe) || errors.Is(err, ledger.ErrTampered) {
		t.Fatalf("no ledger: %v, want a *ledgerdir.OpenError", err)
	}
}
