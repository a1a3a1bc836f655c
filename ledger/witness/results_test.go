package witness

import (
	"slices"
	"testing"
)

// TestNewCosignatures: the answer's lines are split, their newlines cut.
func TestNewCosignatures(t *testing.T) {
	c := NewCosignatures(Checkpoint{Origin: "o", Size: 4}, []byte("— w1 AAAA\n— w2 BBBB\n"))
	if c.Origin != "o" || c.Size != 4 || !slices.Equal(c.Signatures, []string{"— w1 AAAA", "— w2 BBBB"}) {
		t.Fatalf("%+v", c)
	}
}
