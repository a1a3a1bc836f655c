package stateview_test

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/stateview"
)

// gate admits every entry, marking those that start with "m".
type gate struct{}

func (gate) Mark() int64 { return 0 }
func (gate) Reset(int64) {}
func (gate) Settle()     {}
func (gate) Admit(e []byte, _ any, _ time.Time) (ledger.StateKeys, error) {
	k := ledger.StateKeys{Content: sha256.Sum256(e)}
	if strings.HasPrefix(string(e), "m") {
		k.Mark = "mark"
	}
	return k, nil
}

// FuzzOpen: whatever bytes the store holds as the binding and as one
// mark (a damaged or edited directory), Open returns a view within the
// signed log, or an error; never a panic, never a binding past the
// checkpoint or a mark at or past the binding.
func FuzzOpen(f *testing.F) {
	good := make([]byte, 40)
	binary.BigEndian.PutUint64(good, 2)
	f.Add(good, uint64(1), []byte("mark"))
	f.Add([]byte{}, uint64(0), []byte{})
	f.Add(make([]byte, 41), uint64(1<<62), make([]byte, 33))
	f.Add(make([]byte, 72), uint64(1), []byte("mark"))
	f.Add([]byte("\xff\xff\xff\xff\xff\xff\xff\xff0123456789abcdef0123456789abcdef"), uint64(2), []byte("root"))
	f.Fuzz(func(t *testing.T, binding []byte, markAt uint64, kind []byte) {
		dir := filepath.Join(t.TempDir(), "log")
		now := time.Unix(1_700_000_000, 0)
		l, err := ledger.CreateWithHistory(dir, "example.com/fuzz", testkit.Key(t, 1), func() time.Time { return now })
		if err != nil {
			t.Fatal(err)
		}
		l.SetGate(gate{})
		if _, err := l.Append([][]byte{[]byte("m-0"), []byte("i-1"), []byte("m-2")}); err != nil {
			t.Fatal(err)
		}
		l.Close()
		err = testkit.EditStore(dir, func(txn *badger.Txn) error {
			if err := txn.Set([]byte("m/state"), binding); err != nil {
				return err
			}
			return txn.Set(binary.BigEndian.AppendUint64([]byte("s/m"), markAt), kind)
		})
		if err != nil {
			t.Skip("the store refused the edit:", err)
		}
		if l, err = ledger.OpenReadOnly(dir); err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		v, err := stateview.Open(l, nil)
		if err != nil {
			if me := (*ledger.StateMismatchError)(nil); !errors.As(err, &me) || me.Reason == "" {
				t.Fatalf("Open = %v, want a *StateMismatchError with a reason", err)
			}
			return
		}
		if v.Binding.Size < 0 || v.Binding.Size > v.Checkpoint.Size {
			t.Fatalf("binding at %d of a checkpoint of %d", v.Binding.Size, v.Checkpoint.Size)
		}
		for _, m := range v.Marks {
			if m.Index < 0 || m.Index >= v.Binding.Size || m.Kind == "" {
				t.Fatalf("mark %+v with the binding at %d", m, v.Binding.Size)
			}
		}
	})
}
