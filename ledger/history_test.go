package ledger

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger/formats"
	"golang.org/x/mod/sumdb/tlog"
)

// clockLog is a log with a checkpoint history whose clock the test sets.
type clockLog struct {
	*Log
	now time.Time
}

func newClockLog(t *testing.T, dir string, start time.Time) *clockLog {
	t.Helper()
	c := &clockLog{now: start}
	l, err := CreateWithHistory(dir, "example.com/hist", testkit.Key(t, 1), func() time.Time { return c.now })
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

// threeBatches makes a closed log with three batches, accepted 10, 20 and
// 30 seconds after t0: entries 0 and 1, then 2, then 3.
func threeBatches(t *testing.T, t0 time.Time) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "log")
	c := newClockLog(t, dir, t0)
	c.appendAt(t, t0.Add(10*time.Second), "a", "b")
	c.appendAt(t, t0.Add(20*time.Second), "c")
	c.appendAt(t, t0.Add(30*time.Second), "d")
	c.Close()
	return dir
}

// acceptedTimesOf verifies the log and returns each entry's accepted time.
func acceptedTimesOf(t *testing.T, l *Log) ([]time.Time, error) {
	t.Helper()
	var out []time.Time
	_, err := l.Verify(l.Key(), func(i int64, _ []byte, at time.Time) error {
		out = append(out, at)
		return nil
	})
	return out, err
}

// TestHistoryAcceptedTimes: every entry is accepted at the signed time of
// its batch's checkpoint; a refresh adds no history; a clock that goes
// back never makes a batch earlier than the checkpoint before it.
func TestHistoryAcceptedTimes(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	c := newClockLog(t, filepath.Join(t.TempDir(), "log"), t0)
	defer c.Close()
	c.appendAt(t, t0.Add(10*time.Second), "a", "b")
	c.appendAt(t, t0.Add(20*time.Second), "c")
	c.now = t0.Add(30 * time.Second)
	if err := c.Refresh(); err != nil {
		t.Fatal(err)
	}
	c.appendAt(t, t0.Add(5*time.Second), "d", "e", "f") // the clock went back
	got, err := acceptedTimesOf(t, c.Log)
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{10, 10, 20, 30, 30, 30}
	for i, w := range want {
		if !got[i].Equal(t0.Add(w * time.Second)) {
			t.Errorf("entry %d accepted at %v, want %v", i, got[i], t0.Add(w*time.Second))
		}
	}
	if !c.HasHistory() {
		t.Fatal("HasHistory is false")
	}
}

// TestHistoryTampered: a history that was removed, cut, reordered, padded
// or re-signed backwards fails verification, as tamper evidence naming
// the history.
func TestHistoryTampered(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	get := func(txn *badger.Txn, size int64) []byte {
		it, err := txn.Get(historyKey(size))
		if err != nil {
			t.Fatal(err)
		}
		v, _ := it.ValueCopy(nil)
		return v
	}
	resigned := func(size int64, at time.Time, txn *badger.Txn) []byte {
		l := &Log{origin: "example.com/hist", key: testkit.Key(t, 1)}
		s, _, _ := formats.NewNoteSigner(l.origin, l.key)
		l.signer = s
		root, err := tlog.TreeHash(size, txnHashReader(badgerTxn{t: txn}))
		if err != nil {
			t.Fatal(err)
		}
		cp, err := l.signCheckpoint(formats.Checkpoint{Origin: l.origin, Size: size, Hash: root}, at)
		if err != nil {
			t.Fatal(err)
		}
		return cp
	}
	cases := map[string]func(txn *badger.Txn) error{
		"the last checkpoint removed": func(txn *badger.Txn) error { return txn.Delete(historyKey(4)) },
		"two checkpoints swapped": func(txn *badger.Txn) error {
			a, b := get(txn, 2), get(txn, 3)
			txn.Set(historyKey(2), b)
			return txn.Set(historyKey(3), a)
		},
		"a checkpoint beyond the log": func(txn *badger.Txn) error { return txn.Set(historyKey(5), get(txn, 4)) },
		"a signature byte changed": func(txn *badger.Txn) error {
			v := get(txn, 3)
			v[len(v)-3] ^= 1
			return txn.Set(historyKey(3), v)
		},
		"a batch re-signed earlier than the one before": func(txn *badger.Txn) error {
			return txn.Set(historyKey(3), resigned(3, t0.Add(5*time.Second), txn))
		},
		"a checkpoint for another root": func(txn *badger.Txn) error {
			v := get(txn, 2)
			return txn.Set(historyKey(3), bytes.Replace(v, []byte("\n2\n"), []byte("\n3\n"), 1))
		},
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			dir := threeBatches(t, t0)
			if err := testkit.EditStore(dir, edit); err != nil {
				t.Fatal(err)
			}
			l, err := Open(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			_, err = acceptedTimesOf(t, l)
			var ie *IntegrityError
			if !errors.As(err, &ie) || !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "checkpoint history") {
				t.Fatalf("Verify = %v; want an *IntegrityError about the checkpoint history", err)
			}
		})
	}
}

// TestHistoryCheckpointRemoved: removing one batch's checkpoint (disk
// access, no key) merges the batch into the next, so its entries are
// replayed at the next batch's later time: never earlier than the log
// accepted them, so replay can only be stricter. It is not detected; the
// test pins that it moves times later and no other way.
func TestHistoryCheckpointRemoved(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	dir := threeBatches(t, t0)
	if err := testkit.EditStore(dir, func(txn *badger.Txn) error { return txn.Delete(historyKey(3)) }); err != nil {
		t.Fatal(err)
	}
	l, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got, err := acceptedTimesOf(t, l)
	if err != nil || !got[2].Equal(t0.Add(30*time.Second)) {
		t.Fatalf("entry 2 accepted at %v (%v); want the next batch's %v", got, err, t0.Add(30*time.Second))
	}
}
