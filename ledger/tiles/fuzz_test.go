package tiles_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/writ-ledger/writ/ledger/tiles"
)

// FuzzParsePath: ParsePath never panics, refuses with ErrPath, and a path
// it accepts is exactly the one Path writes for what it parsed.
func FuzzParsePath(f *testing.F) {
	for _, c := range pathCases {
		f.Add(c.path)
	}
	for _, p := range []string{
		"", "tile/0/1234", "tile/0/x001/234.p/0", "tile/0/000.p/256", "tile/00/000", "tile/8/000",
		"tile/7/001", "tile/entries/x009/x223/x372/x036/x854/x775/808", "tile/0/x000/001",
		"writ/history/000.p/05", "tile/entries/000.p/1.p/2", "tile/0/x999/x999/x999/x999/x999/x999/999",
	} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		tl, err := tiles.ParsePath(p)
		if err != nil {
			if !errors.Is(err, tiles.ErrPath) {
				t.Fatalf("ParsePath(%q): %v does not wrap ErrPath", p, err)
			}
			return
		}
		if got := tl.Path(); got != p {
			t.Fatalf("ParsePath(%q) = %+v, whose Path is %q", p, tl, got)
		}
		if tl.Kind == tiles.KindCheckpoint {
			return
		}
		if tl.N < 0 || tl.W < 1 || tl.W > tiles.Width || tl.Level < -1 || tl.Level > tiles.MaxLevel {
			t.Fatalf("ParsePath(%q) = %+v: out of range", p, tl)
		}
		if (tl.Level == -1) != (tl.Kind == tiles.KindEntries || tl.Kind == tiles.KindHistory) {
			t.Fatalf("ParsePath(%q) = %+v: level and kind disagree", p, tl)
		}
	})
}

// FuzzTilePath: the path of any tile of a tree of up to 2^62 entries
// parses back to the tile.
func FuzzTilePath(f *testing.F) {
	f.Add(uint8(2), uint8(0), int64(1234067), uint16(256))
	f.Add(uint8(3), uint8(0), int64(1<<63-1), uint16(5))
	f.Add(uint8(4), uint8(0), int64(1), uint16(1))
	f.Add(uint8(2), uint8(7), int64(0), uint16(255))
	f.Fuzz(func(t *testing.T, kind, level uint8, n int64, w uint16) {
		tl := tiles.Tile{Kind: tiles.Kind(kind%3) + tiles.KindHashTile, Level: int(level % (tiles.MaxLevel + 1)), N: n, W: int(w)%tiles.Width + 1}
		if tl.Kind != tiles.KindHashTile {
			tl.Level = -1
		} else if n > (1<<62)>>(tiles.Height*(tl.Level+1)) {
			return
		}
		if n < 0 {
			return
		}
		got, err := tiles.ParsePath(tl.Path())
		if err != nil || got != tl {
			t.Fatalf("ParsePath(%q) = %+v, %v; want %+v", tl.Path(), got, err, tl)
		}
	})
}

// FuzzParseBundle: ParseBundle never panics, refuses with ErrBundle, and
// what it accepts is well framed: the entries re-encode to the same bytes.
func FuzzParseBundle(f *testing.F) {
	var b []byte
	for _, e := range []string{"a", "bc", string(make([]byte, 300))} {
		b, _ = tiles.AppendBundle(b, []byte(e))
	}
	f.Add(b, 3)
	f.Add(b, -1)
	f.Add(b, 2)
	f.Add(b[:len(b)-1], 3)
	f.Add(b[:4], -1)
	f.Add([]byte{0, 0}, -1)
	f.Add([]byte{}, 0)
	f.Add([]byte{}, -1)
	f.Add([]byte{0xff, 0xff, 1}, 1)
	var full []byte
	for range tiles.Width + 1 {
		full, _ = tiles.AppendBundle(full, []byte{7})
	}
	f.Add(full, -1)
	f.Add(full[:2*tiles.Width], tiles.Width)
	f.Fuzz(func(t *testing.T, data []byte, want int) {
		entries, err := tiles.ParseBundle(data, want)
		if err != nil {
			if !errors.Is(err, tiles.ErrBundle) {
				t.Fatalf("ParseBundle: %v does not wrap ErrBundle", err)
			}
			return
		}
		switch {
		case want >= 0 && len(entries) != want:
			t.Fatalf("want %d entries, got %d", want, len(entries))
		case want < 0 && (len(entries) < 1 || len(entries) > tiles.Width):
			t.Fatalf("a history bundle of %d entries", len(entries))
		}
		var again []byte
		for i, e := range entries {
			if again, err = tiles.AppendBundle(again, e); err != nil {
				t.Fatalf("entry %d does not re-encode: %v", i, err)
			}
		}
		if !bytes.Equal(again, data) {
			t.Fatalf("re-encoded % x, parsed % x", again, data)
		}
	})
}

// FuzzParseHashTile: ParseHashTile never panics and accepts exactly w
// hashes, w being a tile width.
func FuzzParseHashTile(f *testing.F) {
	f.Add(make([]byte, 32*5), 5)
	f.Add(make([]byte, 32*tiles.Width), tiles.Width)
	f.Add(make([]byte, 31), 1)
	f.Add([]byte{}, 0)
	f.Add(make([]byte, 32), 1<<59+1)
	f.Add(make([]byte, 32), -1)
	f.Fuzz(func(t *testing.T, data []byte, w int) {
		err := tiles.ParseHashTile(data, w)
		ok := w >= 1 && w <= tiles.Width && len(data) == 32*w
		if (err == nil) != ok {
			t.Fatalf("ParseHashTile(%d bytes, width %d): %v", len(data), w, err)
		}
		if err != nil && !errors.Is(err, tiles.ErrBundle) {
			t.Fatalf("ParseHashTile: %v does not wrap ErrBundle", err)
		}
	})
}
