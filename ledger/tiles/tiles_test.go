package tiles_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/ledger/tiles"
)

// pathCases are paths in the one form Path writes, with their tiles.
var pathCases = []struct {
	tile tiles.Tile
	path string
}{
	{tiles.Tile{Kind: tiles.KindCheckpoint}, "checkpoint"},
	{tiles.Tile{Kind: tiles.KindHashTile, Level: 0, N: 0, W: 256}, "tile/0/000"},
	{tiles.Tile{Kind: tiles.KindHashTile, Level: 0, N: 1234067, W: 256}, "tile/0/x001/x234/067"},
	{tiles.Tile{Kind: tiles.KindHashTile, Level: 0, N: 1234067, W: 5}, "tile/0/x001/x234/067.p/5"},
	{tiles.Tile{Kind: tiles.KindHashTile, Level: 1, N: 1000, W: 1}, "tile/1/x001/000.p/1"},
	{tiles.Tile{Kind: tiles.KindHashTile, Level: 3, N: 999, W: 255}, "tile/3/999.p/255"},
	{tiles.Tile{Kind: tiles.KindHashTile, Level: 7, N: 0, W: 2}, "tile/7/000.p/2"},
	{tiles.Tile{Kind: tiles.KindEntries, Level: -1, N: 0, W: 1}, "tile/entries/000.p/1"},
	{tiles.Tile{Kind: tiles.KindEntries, Level: -1, N: 1234067, W: 256}, "tile/entries/x001/x234/067"},
	{tiles.Tile{Kind: tiles.KindEntries, Level: -1, N: 1 << 54, W: 256}, "tile/entries/x018/x014/x398/x509/x481/984"},
	{tiles.Tile{Kind: tiles.KindHistory, Level: -1, N: 1, W: 54}, "writ/history/001.p/54"},
	{tiles.Tile{Kind: tiles.KindHistory, Level: -1, N: 1000000, W: 256}, "writ/history/x001/x000/000"},
}

func TestPath(t *testing.T) {
	for _, c := range pathCases {
		if got := c.tile.Path(); got != c.path {
			t.Errorf("%+v.Path() = %q, want %q", c.tile, got, c.path)
		}
	}
}

func TestParsePath(t *testing.T) {
	for _, c := range pathCases {
		got, err := tiles.ParsePath(c.path)
		if err != nil {
			t.Errorf("ParsePath(%q): %v", c.path, err)
			continue
		}
		if got != c.tile {
			t.Errorf("ParsePath(%q) = %+v, want %+v", c.path, got, c.tile)
		}
	}
}

func TestParsePathRefuses(t *testing.T) {
	for _, c := range []struct{ path, why string }{
		{"", ""},
		{"/checkpoint", ""},
		{"checkpoint/", ""},
		{"Checkpoint", ""},
		{"tile/", "level"},
		{"tile/0", "level"},
		{"tile/0/", "3 digits"},
		{"tile/0/1234", "3 digits"},
		{"tile/0/12", "3 digits"},
		{"tile/0/00a", "3 digits"},
		{"tile/0/ 01", "3 digits"},
		{"tile/0/001/234", "starts with x"},
		{"tile/0/x001/x234", "3 digits"},
		{"tile/0/x000/001", "canonical"},
		{"tile/0/x001/234.p/0", "partial width"},
		{"tile/0/000.p/256", "partial width"},
		{"tile/0/000.p/", "partial width"},
		{"tile/0/000.p/05", "partial width"},
		{"tile/0/000.p/+5", "partial width"},
		{"tile/0/000.p/-1", "partial width"},
		{"tile/0/000.p/1.p/2", "partial width"},
		{"tile/0/000/", "starts with x"},
		{"tile/00/000", "level"},
		{"tile/01/000", "level"},
		{"tile/+1/000", "level"},
		{"tile/-1/000", "level"},
		{"tile/8/000", "level"},
		{"tile/x/000", "level"},
		{"tile/7/001", "out of range"},
		{"tile/0/x999/x999/x999/x999/x999/x999/999", ""},
		{"tile/0/x001/x001/x001/x001/x001/x001/x001/001", "too long"},
		{"tile/entries/x009/x223/x372/x036/x854/x775/808", "canonical"},
		{"tile/entries/x018/x014/x398/x509/x481/985", "out of range"},
		{"writ/history/x072/x057/x594/x037/x927/936", "out of range"},
		{"tile/entries/", "3 digits"},
		{"tile/entries/0001", "3 digits"},
		{"tile/entries/000.p/0", "partial width"},
		{"tile/entries/000.p/256", "partial width"},
		{"tile/entries//000", "starts with x"},
		{"writ/history/", "3 digits"},
		{"writ/history/x000", "3 digits"},
		{"writ/history/000.p/300", "partial width"},
		{"writ/checkpoint", ""},
		{"tile/history/000", "level"},
		{"../tile/0/000", ""},
		{"tile/0/../000", "starts with x"},
	} {
		tl, err := tiles.ParsePath(c.path)
		if err == nil {
			t.Errorf("ParsePath(%q) = %+v, want an error", c.path, tl)
			continue
		}
		if !errors.Is(err, tiles.ErrPath) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("ParsePath(%q): %v, want ErrPath saying %q", c.path, err, c.why)
		}
	}
}

func bundle(t *testing.T, entries ...string) []byte {
	t.Helper()
	var b []byte
	for _, e := range entries {
		var err error
		if b, err = tiles.AppendBundle(b, []byte(e)); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func TestBundle(t *testing.T) {
	b := bundle(t, "a", "bc", strings.Repeat("d", 300))
	if !bytes.Equal(b[:7], []byte{0, 1, 'a', 0, 2, 'b', 'c'}) || b[7] != 1 || b[8] != 44 {
		t.Fatalf("bundle framing: % x", b[:9])
	}
	for _, want := range []int{3, -1} {
		got, err := tiles.ParseBundle(b, want)
		if err != nil || len(got) != 3 || string(got[1]) != "bc" || len(got[2]) != 300 {
			t.Fatalf("ParseBundle(want %d) = %q, %v", want, got, err)
		}
	}
	if _, err := tiles.AppendBundle(nil, nil); !errors.Is(err, tiles.ErrBundle) {
		t.Fatalf("an empty entry: %v", err)
	}
	if _, err := tiles.AppendBundle(nil, make([]byte, tiles.MaxEntrySize+1)); !errors.Is(err, tiles.ErrBundle) {
		t.Fatalf("an oversized entry: %v", err)
	}
	full := make([]string, tiles.Width+1)
	for i := range full {
		full[i] = "x"
	}
	for _, c := range []struct {
		data []byte
		want int
		why  string
	}{
		{b, 2, "after entry 1"},
		{b, 4, "3 entries, the tile's width is 4"},
		{b[:len(b)-1], 3, "declared"},
		{b[:len(b)-1], -1, "declared"},
		{b[:4], -1, "truncated length"},
		{b[:1], 1, "truncated length"},
		{append(bundle(t, "a"), 0, 0), -1, "empty"},
		{[]byte{0, 0}, 1, "empty"},
		{nil, -1, "an empty bundle"},
		{nil, 1, "0 entries"},
		{bundle(t, full...), -1, "after entry 255"},
		{bundle(t, full...), tiles.Width + 1, "after entry 255"},
		{make([]byte, tiles.MaxBundleSize+1), -1, "more than a bundle can hold"},
	} {
		got, err := tiles.ParseBundle(c.data, c.want)
		if !errors.Is(err, tiles.ErrBundle) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("ParseBundle(% x, %d) = %q, %v; want ErrBundle saying %q", c.data[:min(len(c.data), 12)], c.want, got, err, c.why)
		}
	}
}

func TestParseHashTile(t *testing.T) {
	if err := tiles.ParseHashTile(make([]byte, 32*5), 5); err != nil {
		t.Fatal(err)
	}
	if err := tiles.ParseHashTile(make([]byte, 32*tiles.Width), tiles.Width); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		n, w int
	}{{32*5 - 1, 5}, {32*5 + 1, 5}, {0, 1}, {0, 0}, {32, -1}, {32, 1<<59 + 1}, {32 * 257, 257}} {
		if err := tiles.ParseHashTile(make([]byte, c.n), c.w); !errors.Is(err, tiles.ErrBundle) {
			t.Errorf("ParseHashTile(%d bytes, width %d): %v, want ErrBundle", c.n, c.w, err)
		}
	}
}
