package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/ledger/tiles"
	"golang.org/x/mod/sumdb/note"
)

// newHistoryWriterAt is a fork of newHistoryWriter's log: the same origin
// and key, other entries, its clock at now.
func newHistoryWriterAt(t *testing.T, now time.Time) *historyWriter {
	w := newHistoryWriter(t)
	w.now, w.next = now, 1_000_000
	return w
}

// TestSyncSeen: checkpoints of the log shown to others (witnesses'
// latest) are proven consistent with the published one by the sync itself:
// smaller ones from the replica's tree, ones between the replica and the
// published size from the new tree before it is committed, larger ones
// from the source's hash tiles (else undecided, reported). A fork of any
// size, also one dressed with an extension line, is a split view that
// refuses the sync before anything is stored.
func TestSyncSeen(t *testing.T) {
	ctx := context.Background()
	w := newHistoryWriter(t)
	pub := filepath.Join(t.TempDir(), "pub")
	var seen [][]byte
	for range 6 {
		w.add(t, 3)
		cp, _ := w.Checkpoint()
		seen = append(seen, cp) // sizes 3, 6, 9, 12, 15, 18
		if len(seen) == 5 {
			w.publish(t, pub)
		}
	}
	// The publication holds tiles up to 18 and the checkpoint of 15 (as
	// in the middle of a publish): a larger view of 18 can be proven.
	w.publish(t, pub)
	if err := os.WriteFile(filepath.Join(pub, "checkpoint"), seen[4], 0o644); err != nil {
		t.Fatal(err)
	}
	fork := newHistoryWriterAt(t, w.now)
	fork.add(t, 7)
	forked7, _ := fork.Checkpoint()
	fork.add(t, 5)
	forked12, _ := fork.Checkpoint()
	fork.add(t, 3)
	forked15, _ := fork.Checkpoint()
	body, _, _ := strings.Cut(string(forked15), "\n\n")
	signer, _, err := formats.NewNoteSigner("example.com/tiles", testkit.Key(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	extended, err := note.Sign(&note.Note{Text: body + "\nan extension line\n"}, signer)
	if err != nil {
		t.Fatal(err)
	}

	src, err := tiles.OpenSource(pub, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// The replica holds 9: from a publication of that size.
	at9 := filepath.Join(t.TempDir(), "at9")
	w9 := newHistoryWriter(t)
	for range 3 {
		w9.add(t, 3)
	}
	w9.publish(t, at9)
	rdir := filepath.Join(t.TempDir(), "replica")
	if _, err := syncDir(t, rdir, at9, w.VerifierKey()); err != nil {
		t.Fatal(err)
	}
	sync := func(views ...[]byte) (replica.Synced, error) {
		var vs []replica.SeenCheckpoint
		for i, v := range views {
			vs = append(vs, replica.SeenCheckpoint{Source: fmt.Sprintf("witness %d", i), Signed: v})
		}
		vs = append(vs, replica.SeenCheckpoint{Source: "witness down", Err: errors.New("unreachable")})
		return replica.Sync(ctx, rdir, src, replica.SyncOptions{VKey: w.Key(), History: true,
			Seen: func([]byte, *formats.LogKey) []replica.SeenCheckpoint { return vs }})
	}
	var sv *replica.SplitViewError
	for _, c := range []struct {
		name string
		seen []byte
		why  string
	}{
		{"smaller than the replica", forked7, "split view: the tree of size 7 is not a prefix of the replica's (of size 9), which the published one extends"},
		{"between the replica and the published", forked12, "split view: the tree of size 12 is not a prefix of the published one (of size 15)"},
		{"the same size", forked15, "split view: the same size with another root"},
		{"the same size, with an extension line", extended, "split view: the same size with another root"},
	} {
		_, err := sync(seen[0], c.seen)
		if !errors.As(err, &sv) || sv.Source != "witness 1" || sv.Why != c.why || string(sv.FoundSigned) != string(c.seen) {
			t.Fatalf("%s: %v", c.name, err)
		}
		if l, err := ledger.OpenReadOnly(rdir); err != nil || l.Size() != 9 {
			t.Fatalf("%s: the replica changed: %v", c.name, err)
		} else {
			l.Close()
		}
	}
	res, err := sync(seen...)
	if err != nil || res.After != 15 {
		t.Fatalf("consistent views: %+v %v", res, err)
	}
	for i, r := range res.Seen[:6] {
		if r.Err != nil || r.Size != int64(3*(i+1)) {
			t.Fatalf("view %d: %+v", i, r)
		}
	}
	if r := res.Seen[6]; r.Source != "witness down" || r.Err == nil || r.Size != -1 {
		t.Fatalf("unreachable view: %+v", r)
	}
	// Nothing new: the views are still compared.
	fork.add(t, 4)
	forked19, _ := fork.Checkpoint()
	res, err = sync(forked19)
	if err != nil || !errors.Is(res.Seen[0].Err, replica.ErrUndecided) {
		t.Fatalf("a larger fork without its tiles: %+v %v", res.Seen, err)
	}
	if _, err := sync(forked12); !errors.As(err, &sv) {
		t.Fatalf("up to date, a fork: %v", err)
	}
}
