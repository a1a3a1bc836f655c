package replica

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/writ-ledger/writ/internal/humanize"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
)

// SyncedResult is a sync's result as writ ledger sync prints it under
// --json (Synced.Result).
type SyncedResult struct {
	After      int64               `json:"after" doc:"entries the replica holds now"`
	Before     int64               `json:"before" doc:"entries the replica held before"`
	Bytes      int64               `json:"bytes" doc:"bytes fetched"`
	Origin     string              `json:"origin" doc:"the log's origin (the first line of its checkpoint)"`
	Refreshed  bool                `json:"refreshed" doc:"same tree, newer checkpoint stored"`
	Requests   int                 `json:"requests" doc:"files fetched, the checkpoint included"`
	RootHash   string              `json:"root_hash" doc:"hex"`
	Witnessing *formats.Witnessing `json:"witnessing,omitempty" doc:"what --policy found"`
}

// Result is s as SyncedResult: the checkpoint's origin and root hash
// (lowercase hex), the sizes, the cost and the witnessing.
func (s Synced) Result() SyncedResult {
	return SyncedResult{Origin: s.Checkpoint.Origin, Before: s.Before, After: s.After,
		RootHash: hex.EncodeToString(s.Checkpoint.Hash[:]), Requests: s.Requests, Bytes: s.Bytes, Refreshed: s.Refreshed,
		Witnessing: s.Witnessing}
}

// Text says what the sync s did, for people, on one line: the entries
// it added (or that the replica was up to date, and whether a newer
// checkpoint was stored), the tree root, the requests and bytes it cost,
// and what a policy found.
func (s Synced) Text() string {
	cost := fmt.Sprintf("%s, %d bytes", humanize.Plural(int64(s.Requests), "request", "requests"), s.Bytes)
	text := fmt.Sprintf("synced authority log %s: %d → %d entries, tree root %x (%s)",
		s.Checkpoint.Origin, s.Before, s.After, s.Checkpoint.Hash[:], cost)
	if s.Before == s.After {
		text = fmt.Sprintf("authority log %s is up to date: %d entries, tree root %x (%s)",
			s.Checkpoint.Origin, s.After, s.Checkpoint.Hash[:], cost)
		if s.Refreshed {
			text += "; stored its newer checkpoint"
		}
	}
	if s.Witnessing != nil {
		text += "; " + humanize.Witnessed(*s.Witnessing)
	}
	return text
}

// EvidenceLines gives both signed checkpoints of an inconsistency as
// lines for people: the label trusted, then each line of the trusted
// note indented by two spaces and escaped (humanize.OneLine), then found
// and the found note likewise. A checkpoint without its signed note is
// left out, label and all.
func EvidenceLines(ie *ledger.InconsistencyError, trusted, found string) []string {
	var out []string
	for _, n := range []struct {
		what string
		note []byte
	}{{trusted, ie.TrustedSigned}, {found, ie.FoundSigned}} {
		if len(n.note) == 0 {
			continue
		}
		out = append(out, n.what)
		for _, line := range strings.Split(strings.TrimSuffix(string(n.note), "\n"), "\n") {
			out = append(out, "  "+humanize.OneLine(line))
		}
	}
	return out
}
