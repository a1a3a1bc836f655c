package replica

import (
	"slices"
	"testing"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
)

// TestSyncedText: the line for a sync that grew the replica, one that
// found it up to date (with a newer checkpoint stored, or not), and the
// result's root hash in hex.
func TestSyncedText(t *testing.T) {
	cp := formats.Checkpoint{Origin: "o.example/log", Size: 3}
	cp.Hash[0] = 0xab
	root := "ab" + "00000000000000000000000000000000000000000000000000000000000000"
	for _, tc := range []struct {
		s    Synced
		want string
	}{
		{Synced{Before: 1, After: 3, Checkpoint: cp, Requests: 1, Bytes: 10},
			"synced authority log o.example/log: 1 → 3 entries, tree root " + root + " (1 request, 10 bytes)"},
		{Synced{Before: 3, After: 3, Checkpoint: cp, Requests: 2, Bytes: 0},
			"authority log o.example/log is up to date: 3 entries, tree root " + root + " (2 requests, 0 bytes)"},
		{Synced{Before: 3, After: 3, Checkpoint: cp, Requests: 2, Bytes: 5, Refreshed: true},
			"authority log o.example/log is up to date: 3 entries, tree root " + root + " (2 requests, 5 bytes); stored its newer checkpoint"},
	} {
		if got := tc.s.Text(); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
		if r := tc.s.Result(); r.RootHash != root || r.Origin != "o.example/log" || r.After != tc.s.After || r.Refreshed != tc.s.Refreshed {
			t.Errorf("result %+v", r)
		}
	}
}

// TestEvidenceLines: each signed note under its label, indented, its
// control characters escaped; a side without a note left out.
func TestEvidenceLines(t *testing.T) {
	ie := &ledger.InconsistencyError{TrustedSigned: []byte("o\n3\nh\x1b\n\n— k sig\n")}
	want := []string{"T:", "  o", "  3", `  h\u001b`, "  ", "  — k sig"}
	if got := EvidenceLines(ie, "T:", "F:"); !slices.Equal(got, want) {
		t.Errorf("got %q", got)
	}
	ie.FoundSigned = []byte("p\n")
	want = append(want, "F:", "  p")
	if got := EvidenceLines(ie, "T:", "F:"); !slices.Equal(got, want) {
		t.Errorf("got %q", got)
	}
}
