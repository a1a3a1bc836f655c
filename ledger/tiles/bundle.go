package tiles

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// MaxEntrySize is the largest entry a bundle carries, in bytes: its
// length is a big-endian uint16 (c2sp.org/tlog-tiles "Entry bundles").
const MaxEntrySize = 65535

// MaxBundleSize bounds a bundle a reader accepts, in bytes: Width entries
// of MaxEntrySize bytes, each with its 2-byte length.
const MaxBundleSize = Width * (2 + MaxEntrySize)

// ErrBundle is wrapped by every error about an entry bundle, history
// bundle or hash tile whose bytes are not what its path promises.
var ErrBundle = errors.New("malformed tile or bundle")

// AppendBundle appends one entry to an entry bundle being built: its
// length as a big-endian uint16, then its bytes. It returns an error
// wrapping ErrBundle for an empty entry or one over MaxEntrySize bytes,
// which no reader could take back.
func AppendBundle(dst, entry []byte) ([]byte, error) {
	if len(entry) == 0 || len(entry) > MaxEntrySize {
		return dst, fmt.Errorf("%w: an entry of %d bytes (1..%d)", ErrBundle, len(entry), MaxEntrySize)
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(entry)))
	return append(dst, entry...), nil
}

// ParseBundle splits an entry bundle (or a history bundle, which has the
// same framing) into its entries, which alias data. A bundle for a tile
// of width w holds exactly w entries; a history bundle holds 1..Width
// (want < 0: any number in that range). Errors wrap ErrBundle and say
// where the framing breaks: a truncated length or entry, an empty entry,
// too many or too few entries, or bytes after the last.
func ParseBundle(data []byte, want int) ([][]byte, error) {
	if len(data) > MaxBundleSize {
		return nil, fmt.Errorf("%w: %d bytes, more than a bundle can hold (%d)", ErrBundle, len(data), MaxBundleSize)
	}
	var out [][]byte
	for off := 0; off < len(data); {
		if len(out) == Width || (want >= 0 && len(out) == want) {
			return nil, fmt.Errorf("%w: %d bytes after entry %d, the last the bundle may hold", ErrBundle, len(data)-off, len(out)-1)
		}
		if len(data)-off < 2 {
			return nil, fmt.Errorf("%w: entry %d: truncated length at byte %d", ErrBundle, len(out), off)
		}
		n := int(binary.BigEndian.Uint16(data[off:]))
		off += 2
		if n == 0 {
			return nil, fmt.Errorf("%w: entry %d: empty", ErrBundle, len(out))
		}
		if len(data)-off < n {
			return nil, fmt.Errorf("%w: entry %d: %d bytes declared, %d left", ErrBundle, len(out), n, len(data)-off)
		}
		out = append(out, data[off:off+n:off+n])
		off += n
	}
	switch {
	case want >= 0 && len(out) != want:
		return nil, fmt.Errorf("%w: %d entries, the tile's width is %d", ErrBundle, len(out), want)
	case want < 0 && len(out) == 0:
		return nil, fmt.Errorf("%w: an empty bundle", ErrBundle)
	}
	return out, nil
}

// ParseHashTile checks that a hash tile of width w is exactly w hashes
// of 32 bytes (c2sp.org/tlog-tiles "Tiles"), w being 1..Width; errors
// wrap ErrBundle.
func ParseHashTile(data []byte, w int) error {
	if w < 1 || w > Width {
		return fmt.Errorf("%w: a hash tile of width %d (1..%d)", ErrBundle, w, Width)
	}
	if len(data) != 32*w {
		return fmt.Errorf("%w: a hash tile of width %d is %d bytes, not %d", ErrBundle, w, 32*w, len(data))
	}
	return nil
}
