package replica

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
)

// exportByEntry is Export as it was before it walked the logs: each
// entry read on its own (Entry), with its batch's history checkpoint
// (HistoryCovering, when entry j starts its batch). Export must write exactly its bytes.
func exportByEntry(t *testing.T, names []string, logs []*ledger.Log) []byte {
	t.Helper()
	var b bytes.Buffer
	bw := bufio.NewWriter(&b)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(writeItem(bw, exportHeader{Format: exportFormat, V: exportVersion, Logs: uint64(len(logs))}))
	for i, l := range logs {
		signed, err := l.CosignedCheckpoint()
		must(err)
		cp, err := formats.OpenCheckpoint(signed, l.Key())
		must(err)
		must(writeItem(bw, ExportedLog{Name: names[i], Origin: l.Origin(), VKey: l.VerifierKey(), Size: cp.Size, Checkpoint: string(signed), History: l.HasHistory()}))
		for j := int64(0); j < cp.Size; j++ {
			if l.HasHistory() {
				_, h, ok, err := l.HistoryCovering(j)
				must(err)
				if ok {
					must(writeItem(bw, string(h)))
				}
			}
			e, err := l.Entry(j)
			must(err)
			must(writeItem(bw, e))
		}
	}
	must(bw.Flush())
	return b.Bytes()
}

// TestExportWalkByteForByte: the streaming export (one walk per log) is
// byte for byte the entry-by-entry one, for batches of one and of
// several entries, and what it writes verifies and reads back; a writer
// that fails midway fails the export with its error.
func TestExportWalkByteForByte(t *testing.T) {
	w := newWriter(t, "example.com/exportwalk", 1, 3)
	for n := 2; n <= 5; n++ {
		batch := make([][]byte, n)
		for i := range batch {
			batch[i] = []byte(fmt.Sprintf("authority batch %d entry %d", n, i))
		}
		if _, err := w.auth.Append(batch); err != nil {
			t.Fatal(err)
		}
	}
	w.add(t, 2)
	names, logs := []string{"authority", "decisions"}, []*ledger.Log{w.auth, w.decis}
	var got bytes.Buffer
	if err := Export(&got, names, logs); err != nil {
		t.Fatal(err)
	}
	if want := exportByEntry(t, names, logs); !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("the streaming export (%d bytes) is not the entry-by-entry one (%d bytes)", got.Len(), len(want))
	}
	x, err := NewExportReader(bytes.NewReader(got.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for range names {
		sec, err := x.Next()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := x.VerifySection(sec, nil, nil); err != nil {
			t.Fatalf("section %s: %v", sec.Name, err)
		}
	}

	boom := errors.New("boom")
	if err := Export(&failAfter{n: got.Len() / 2, err: boom}, names, logs); !errors.Is(err, boom) {
		t.Fatalf("a writer failing midway: %v, want its error", err)
	}
}

// failAfter accepts n bytes, then fails with err.
type failAfter struct {
	n   int
	err error
}

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		n := f.n
		f.n = 0
		return n, f.err
	}
	f.n -= len(p)
	return len(p), nil
}
