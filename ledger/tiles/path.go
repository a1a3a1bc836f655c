package tiles

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Height is the tile height of c2sp.org/tlog-tiles: every tile holds up
// to Width = 2^Height hashes (or entries, for an entry bundle).
const (
	Height = 8
	Width  = 1 << Height
)

// MaxLevel is the highest hash-tile level a path may name: level L tiles
// cover 256^(L+1) entries, and a tree of 2^63 entries needs no level
// above 7.
const MaxLevel = 7

// ErrPath is wrapped by every error about a path that is not one of the
// log's files.
var ErrPath = errors.New("not a tlog-tiles path")

// Kind tells which file of a published log a path names.
type Kind int

// The files of a published log. KindHistory is writ's addition (see the
// package doc); the others are c2sp.org/tlog-tiles.
const (
	KindCheckpoint Kind = iota + 1
	KindHashTile
	KindEntries
	KindHistory
)

// Tile names one tile of a published log: Level is the hash level (0..7,
// -1 for an entry bundle or history bundle), N the tile index, and W the
// width: Width for a full tile, 1..255 for a partial one.
type Tile struct {
	Kind  Kind
	Level int
	N     int64
	W     int
}

// Path returns the tile's path (c2sp.org/tlog-tiles "Tiles" and "Entry
// bundles"): tile/<L>/<N>[.p/<W>], tile/entries/<N>[.p/<W>], or
// writ/history/<N>[.p/<W>] for a history bundle, with N as 3-digit
// groups, every group but the last prefixed with "x" (1234067 is
// x001/x234/067). A KindCheckpoint tile's path is "checkpoint".
func (t Tile) Path() string {
	var b strings.Builder
	switch t.Kind {
	case KindCheckpoint:
		return "checkpoint"
	case KindEntries:
		b.WriteString("tile/entries/")
	case KindHistory:
		b.WriteString("writ/history/")
	default:
		fmt.Fprintf(&b, "tile/%d/", t.Level)
	}
	b.WriteString(indexPath(t.N))
	if t.W < Width {
		fmt.Fprintf(&b, ".p/%d", t.W)
	}
	return b.String()
}

// indexPath encodes n as 3-digit groups, all but the last prefixed "x".
func indexPath(n int64) string {
	s := fmt.Sprintf("%03d", n)
	for len(s)%3 != 0 {
		s = "0" + s
	}
	var parts []string
	for i := 0; i < len(s); i += 3 {
		parts = append(parts, s[i:i+3])
	}
	for i := range parts[:len(parts)-1] {
		parts[i] = "x" + parts[i]
	}
	return strings.Join(parts, "/")
}

// ParsePath parses a path of a published log: "checkpoint", or a tile,
// entry bundle or history bundle path in exactly the form Path writes
// (no leading slash, no redundant zeros or groups, a width of 1..255
// only after ".p/"). Errors wrap ErrPath and name what is wrong.
func ParsePath(p string) (Tile, error) {
	if p == "checkpoint" {
		return Tile{Kind: KindCheckpoint}, nil
	}
	var t Tile
	var rest string
	switch {
	case strings.HasPrefix(p, "tile/entries/"):
		t.Kind, t.Level, rest = KindEntries, -1, p[len("tile/entries/"):]
	case strings.HasPrefix(p, "writ/history/"):
		t.Kind, t.Level, rest = KindHistory, -1, p[len("writ/history/"):]
	case strings.HasPrefix(p, "tile/"):
		l, r, ok := strings.Cut(p[len("tile/"):], "/")
		lv, err := strconv.Atoi(l)
		if !ok || err != nil || lv < 0 || lv > MaxLevel || strconv.Itoa(lv) != l {
			return Tile{}, fmt.Errorf("%w: %q: the level must be 0..%d", ErrPath, p, MaxLevel)
		}
		t.Kind, t.Level, rest = KindHashTile, lv, r
	default:
		return Tile{}, fmt.Errorf("%w: %q", ErrPath, p)
	}
	t.W = Width
	if idx, w, ok := strings.Cut(rest, ".p/"); ok {
		wv, err := strconv.Atoi(w)
		if err != nil || wv < 1 || wv >= Width || strconv.Itoa(wv) != w {
			return Tile{}, fmt.Errorf("%w: %q: a partial width must be 1..%d", ErrPath, p, Width-1)
		}
		t.W, rest = wv, idx
	}
	groups := strings.Split(rest, "/")
	if len(groups) > 7 {
		return Tile{}, fmt.Errorf("%w: %q: index too long", ErrPath, p)
	}
	var n int64
	for i, g := range groups {
		last := i == len(groups)-1
		if !last {
			var ok bool
			if g, ok = strings.CutPrefix(g, "x"); !ok {
				return Tile{}, fmt.Errorf("%w: %q: every index group but the last starts with x", ErrPath, p)
			}
		}
		if len(g) != 3 || strings.Trim(g, "0123456789") != "" {
			return Tile{}, fmt.Errorf("%w: %q: index groups are 3 digits", ErrPath, p)
		}
		v, _ := strconv.Atoi(g)
		n = n*1000 + int64(v)
	}
	t.N = n
	if t.Path() != p {
		return Tile{}, fmt.Errorf("%w: %q is not in canonical form (%s)", ErrPath, p, t.Path())
	}
	if n > (1<<62)>>(Height*(max(t.Level, 0)+1)) {
		return Tile{}, fmt.Errorf("%w: %q: index out of range", ErrPath, p)
	}
	return t, nil
}
