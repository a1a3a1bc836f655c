package replica

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/schemas"
)

// clockLog is a log with a checkpoint history whose clock the test sets.
type clockLog struct {
	*ledger.Log
	now time.Time
}

func newClockLog(t *testing.T, dir string, start time.Time) *clockLog {
	t.Helper()
	c := &clockLog{now: start}
	l, err := ledger.CreateWithHistory(dir, "example.com/hist", testkit.Key(t, 1), func() time.Time { return c.now })
	if err != nil {
		t.Fatal(err)
	}
	c.Log = l
	return c
}

func (c *clockLog) appendAt(t *testing.T, at time.Time, entries ...string) {
	t.Helper()
	c.now = at
	var b [][]byte
	for _, e := range entries {
		b = append(b, []byte(e))
	}
	if _, err := c.Append(b); err != nil {
		t.Fatal(err)
	}
}

// acceptedTimesOf verifies the log and returns each entry's accepted time.
func acceptedTimesOf(t *testing.T, l *ledger.Log) ([]time.Time, error) {
	t.Helper()
	var out []time.Time
	_, err := l.Verify(l.Key(), func(i int64, _ []byte, at time.Time) error {
		out = append(out, at)
		return nil
	})
	return out, err
}

// TestHistoryExportImport: an export carries the history, a replica
// imported from it gives every entry the same accepted time as the
// writer, and a replica refuses an export of the same entries, under the
// same key, accepted at other times: another history.
func TestHistoryExportImport(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	src := newClockLog(t, filepath.Join(t.TempDir(), "authority"), t0)
	defer src.Close()
	for i := range 6 {
		src.appendAt(t, t0.Add(time.Duration(i/2)*time.Minute), fmt.Sprintf("e%d", i))
	}
	path := filepath.Join(t.TempDir(), "x.export")
	var b bytes.Buffer
	if err := Export(&b, []string{"authority"}, []*ledger.Log{src.Log}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, b.Bytes(), 0o600)
	replica := filepath.Join(t.TempDir(), "replica")
	if _, err := Import(replica, path, nil, nil); err != nil {
		t.Fatal(err)
	}
	r, err := ledger.Open(filepath.Join(replica, ledgerdir.AuthorityDir), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := acceptedTimesOf(t, r)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := acceptedTimesOf(t, src.Log)
	if fmt.Sprint(got) != fmt.Sprint(want) || len(got) != 6 {
		t.Fatalf("replica times %v, writer times %v", got, want)
	}

	// The same key and entries, accepted at other times.
	other := filepath.Join(t.TempDir(), "other")
	at := t0.Add(time.Hour)
	o, err := ledger.CreateWithHistory(other, "example.com/hist", testkit.Key(t, 1), func() time.Time { return at })
	if err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		o.Append([][]byte{[]byte(fmt.Sprintf("e%d", i))})
	}
	b.Reset()
	Export(&b, []string{"authority"}, []*ledger.Log{o})
	o.Close()
	os.WriteFile(path, b.Bytes(), 0o600)
	_, err = Import(replica, path, nil, nil)
	var ie *ledger.InconsistencyError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "another history") {
		t.Fatalf("Import of another history: %v", err)
	}
}

// TestExportVersion1Refused: an export of the format before the history
// (version 1) is refused, naming the version this build reads.
func TestExportVersion1Refused(t *testing.T) {
	b, err := schemas.Marshal(exportHeader{Format: exportFormat, V: 1, Logs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewExportReader(bytes.NewReader(b)); !errors.Is(err, ErrExport) || !strings.Contains(err.Error(), "not a version 2 writ ledger export") {
		t.Fatalf("a version 1 export: %v", err)
	}
}
