package replica_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/ledger/tiles"
)

// Regressions from the hostile review of sync: a source may not leave a
// replica holding what the replica would then refuse to read, nor poison
// its history so that the honest log is refused afterwards.

// TestSyncCheckpointNeedsTime: a published checkpoint without its signed
// time (the cosignature line stripped), or signed before the last batch,
// is refused; stored, it would fail the replica's own verification.
func TestSyncCheckpointNeedsTime(t *testing.T) {
	h := newHostile(t)
	cp := h.w.signed(t)
	lines := strings.SplitAfter(string(cp), "\n")
	stripped := []byte(strings.Join(lines[:5], "")) // body, blank line, the note signature
	h.run(t, hostileCase{name: "cosignature stripped", fresh: true,
		source: func(t *testing.T, h *hostile) tiles.Source {
			return openDirSource(t, h.altered(t, "checkpoint", func([]byte) []byte { return stripped }))
		},
		check: wantSource("checkpoint", "carries no signed time")})
	// An unknown signature line on the checkpoint is not the history's
	// business (witnesses add lines): the sync stores it, and the replica
	// verifies.
	junk := append(bytes.Clone(cp), []byte("— other.example AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n")...)
	rdir := filepath.Join(t.TempDir(), "junk")
	if _, err := replica.Sync(context.Background(), rdir, openDirSource(t, h.altered(t, "checkpoint", func([]byte) []byte { return junk })), h.opts()); err != nil {
		t.Fatal(err)
	}
	stateOf(t, rdir)
}

// TestSyncHistoryCanonical: a history checkpoint carries exactly the log
// key's signature and its cosignature; a line added to it is refused, so
// that the replica never holds bytes the honest log does not publish.
func TestSyncHistoryCanonical(t *testing.T) {
	h := newHostile(t)
	junked := func(t *testing.T, h *hostile) tiles.Source {
		return openDirSource(t, h.editHistory(t, newHistory, func(c [][]byte) [][]byte {
			c[2] = append(bytes.Clone(c[2]), []byte("— evil.example AAAAjunkjunkjunk\n")...)
			return c
		}))
	}
	h.run(t, hostileCase{name: "a junk line on a history checkpoint", fresh: true, source: junked,
		check: wantSource(newHistory, "signature lines")})
}

// TestSyncRefreshInHistory: a writer's refresh (same tree, later time)
// put in the place of a batch's checkpoint. In place of one the replica
// holds, it is refused; on a replica that took it before (nothing could
// tell then), the honest log corrects the history (ErrHistoryRepaired),
// and the next sync replays at the writer's times.
func TestSyncRefreshInHistory(t *testing.T) {
	w := newHistoryWriter(t)
	w.add(t, 100)
	batch := w.signed(t)
	w.now = w.now.Add(6 * time.Hour)
	if err := w.Refresh(); err != nil {
		t.Fatal(err)
	}
	refresh := w.signed(t)
	pub := filepath.Join(t.TempDir(), "pub")
	w.publish(t, pub)
	h := &hostile{w: w, pub: pub}
	// The top checkpoint signed before the history's last: refused.
	early := h.editHistory(t, "writ/history/000.p/100", func([][]byte) [][]byte { return [][]byte{refresh} })
	if err := os.WriteFile(filepath.Join(early, "checkpoint"), batch, 0o644); err != nil {
		t.Fatal(err)
	}
	r0 := filepath.Join(t.TempDir(), "r0")
	if _, err := replica.Sync(context.Background(), r0, openDirSource(t, early), h.opts()); !errors.Is(err, replica.ErrSourceLog) || !strings.Contains(err.Error(), "before the last batch") {
		t.Fatalf("a checkpoint older than the history: %v", err)
	}
	// A new replica takes the refresh as the batch's checkpoint.
	poisoned := h.editHistory(t, "writ/history/000.p/100", func([][]byte) [][]byte { return [][]byte{refresh} })
	rdir := filepath.Join(t.TempDir(), "replica")
	if _, err := replica.Sync(context.Background(), rdir, openDirSource(t, poisoned), h.opts()); err != nil {
		t.Fatal(err)
	}
	// The writer grows; the honest publication corrects the replica.
	w.add(t, 5)
	w.publish(t, pub)
	_, err := replica.Sync(context.Background(), rdir, openDirSource(t, pub), h.opts())
	if !errors.Is(err, replica.ErrHistoryRepaired) {
		t.Fatalf("the honest log after a substituted refresh: %v", err)
	}
	if s, err := replica.Sync(context.Background(), rdir, openDirSource(t, pub), h.opts()); err != nil || s.After != 105 {
		t.Fatalf("the sync after the repair: %+v, %v", s, err)
	}
	_, rt := acceptedTimes(t, rdir)
	var wt []time.Time
	if _, err := w.Verify(w.Key(), func(_ int64, _ []byte, at time.Time) error { wt = append(wt, at); return nil }); err != nil {
		t.Fatal(err)
	}
	for i := range wt {
		if !wt[i].Equal(rt[i]) {
			t.Fatalf("entry %d accepted at %s on the replica, %s on the writer", i, rt[i], wt[i])
		}
	}
	// A source that puts the refresh back in the place of a checkpoint
	// the replica holds is refused, and the replica kept.
	w2 := &hostile{w: w, pub: pub}
	w.add(t, 5)
	w.publish(t, pub)
	again := w2.editHistory(t, "writ/history/000.p/110", func(c [][]byte) [][]byte { c[0] = refresh; return c })
	before := stateOf(t, rdir)
	_, err = replica.Sync(context.Background(), rdir, openDirSource(t, again), h.opts())
	if !errors.Is(err, replica.ErrSourceLog) || !strings.Contains(err.Error(), "a refresh in its place") {
		t.Fatalf("a refresh in place of a held batch checkpoint: %v", err)
	}
	if after := stateOf(t, rdir); after != before {
		t.Fatalf("the refused sync changed the replica")
	}
}
