package progress_test

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/ledger/progress"
)

// TestTickAndReader: Tick reports every 1024 units and at the end, done
// capped at total; a nil Func reports nothing; Reader counts its bytes
// after Offset.
func TestTickAndReader(t *testing.T) {
	var got [][2]int64
	p := progress.Func(func(done, total int64) { got = append(got, [2]int64{done, total}) })
	for i := int64(1); i <= 2500; i++ {
		p.Tick(i, 2500)
	}
	p.Report(3000, 2500)
	want := [][2]int64{{1024, 2500}, {2048, 2500}, {2500, 2500}, {2500, 2500}}
	if !slices.Equal(got, want) {
		t.Fatalf("Tick/Report = %v, want %v", got, want)
	}
	progress.Func(nil).Tick(1024, 2048) // no panic, nothing to call

	got = nil
	r := &progress.Reader{R: strings.NewReader("hello"), Progress: p, Offset: 10, Total: 15}
	if b, err := io.ReadAll(r); err != nil || string(b) != "hello" {
		t.Fatalf("ReadAll = %q %v", b, err)
	}
	if len(got) == 0 || got[len(got)-1] != [2]int64{15, 15} {
		t.Fatalf("Reader reported %v, want to end at 15 of 15", got)
	}
}
