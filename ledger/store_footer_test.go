package ledger_test

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4/pb"
	"google.golang.org/protobuf/proto"

	"github.com/writ-ledger/writ/ledger"
)

// rewriteFooter returns table with its index replaced by index and its
// index checksum by sum: the footer of a Badger table (from the end: the
// checksum's length, the checksum, the index's length, the index) made
// to agree with itself, as someone crafting a table would.
func rewriteFooter(t *testing.T, table, index []byte, sum *pb.Checksum) []byte {
	t.Helper()
	end := len(table) - 4
	end -= int(binary.BigEndian.Uint32(table[end:]))
	end -= 4
	start := end - int(binary.BigEndian.Uint32(table[end:]))
	raw, err := proto.Marshal(sum)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]byte(nil), table[:start]...)
	out = append(out, index...)
	out = binary.BigEndian.AppendUint32(out, uint32(len(index)))
	out = append(out, raw...)
	return binary.BigEndian.AppendUint32(out, uint32(len(raw)))
}

// TestCraftedTableFooter: a table whose footer agrees with itself but
// that Badger cannot open without panicking (an unknown checksum
// algorithm, an empty index, an index that does not parse, its checksum
// matching) is refused by every open, read-only or for writing, as a
// *StoreError naming the table; the process does not crash (Badger opens
// tables in goroutines no caller can recover).
func TestCraftedTableFooter(t *testing.T) {
	dir, _ := newLog(t, 40)
	table, orig := firstTable(t, dir)
	crc := func(b []byte) uint64 { return uint64(crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli))) }
	garbage := []byte("not a flatbuffer index, at all!!")
	for _, tc := range []struct {
		name  string
		index []byte
		sum   *pb.Checksum
		says  string
	}{
		{"unknown checksum algorithm", garbage, &pb.Checksum{Algo: 8, Sum: 1}, "algorithm 8 is not one Badger knows"},
		{"empty index", nil, &pb.Checksum{Algo: pb.Checksum_XXHash64, Sum: 1}, "an index length of 0"},
		{"index that does not parse", garbage, &pb.Checksum{Algo: pb.Checksum_CRC32C, Sum: crc(garbage)}, "the index does not parse"},
	} {
		for _, readOnly := range []bool{true, false} {
			t.Run(tc.name+map[bool]string{true: " read-only", false: " for writing"}[readOnly], func(t *testing.T) {
				d := filepath.Join(t.TempDir(), "log")
				copyDir(t, dir, d)
				if err := os.WriteFile(filepath.Join(d, filepath.Base(table)), rewriteFooter(t, orig, tc.index, tc.sum), 0o600); err != nil {
					t.Fatal(err)
				}
				var (
					l   *ledger.Log
					err error
				)
				if readOnly {
					l, err = ledger.OpenReadOnly(d)
				} else {
					l, err = ledger.Open(d, nil)
				}
				if err == nil {
					l.Close()
					t.Fatal("the crafted table opened")
				}
				var se *ledger.StoreError
				if !errors.As(err, &se) || se.File != filepath.Base(table) || !errors.Is(err, ledger.ErrTampered) || se.Cause == nil || !strings.Contains(se.Cause.Error(), tc.says) {
					t.Fatalf("open: %v (%v), want a *StoreError naming %s whose cause says %q", err, errors.Unwrap(err), filepath.Base(table), tc.says)
				}
			})
		}
	}
}
