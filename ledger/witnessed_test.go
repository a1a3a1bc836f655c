package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
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
	"github.com/writ-ledger/writ/ledger/witness"
	"golang.org/x/mod/sumdb/note"
)

// testWitness is a writ witness on loopback for the log of vkey.
type testWitness struct {
	*witness.Witness
	url, vkey string
	srv       *httptest.Server
}

func startWitness(t *testing.T, name string, key byte, vkey string) *testWitness {
	t.Helper()
	w, err := witness.New(witness.Config{Name: name, Key: testkit.Key(t, key), Dir: t.TempDir(), Logs: []string{vkey}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(w.Handler())
	t.Cleanup(func() { srv.Close(); w.Close() })
	return &testWitness{Witness: w, url: srv.URL, vkey: w.VerifierKey(), srv: srv}
}

func mustPolicy(t *testing.T, text string) *formats.Policy {
	t.Helper()
	p, err := formats.ParsePolicy([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func collect(t *testing.T, l *ledger.Log, p *formats.Policy) (ledger.Collected, error) {
	t.Helper()
	return l.CollectCosignatures(context.Background(), p, &witness.Client{}, 5*time.Second, time.Now)
}

// TestWitnessedLog: the writer collects cosignatures from two witnesses
// on loopback (resending from the size a witness holds after a 409), a
// replica under a quorum of both syncs only a checkpoint both cosigned,
// and a fork of the writer (the same key, another history) is refused by
// both witnesses with 422, and a rolled-back writer learns that a witness
// holds more than it.
func TestWitnessedLog(t *testing.T) {
	w := newHistoryWriter(t)
	a := startWitness(t, "witness.example/a", 20, w.VerifierKey())
	b := startWitness(t, "witness.example/b", 21, w.VerifierKey())
	both := mustPolicy(t, fmt.Sprintf("log %s\nwitness a %s %s\nwitness b %s %s\ngroup q all a b\nquorum q\n", w.VerifierKey(), a.vkey, a.url, b.vkey, b.url))
	onlyA := mustPolicy(t, fmt.Sprintf("log %s\nwitness a %s %s\nquorum a\n", w.VerifierKey(), a.vkey, a.url))

	w.add(t, 5)
	res, err := collect(t, w.Log, both)
	if err != nil || !res.Witnessing.Met || len(res.Witnessing.Cosigned) != 2 || res.Witnesses[0].Resent || res.Witnesses[1].Resent {
		t.Fatalf("first collection: %+v %v", res, err)
	}
	if got, _ := w.CosignedCheckpoint(); string(got) != string(res.Signed) || strings.Count(string(got), "\u2014") != 4 {
		t.Fatalf("stored cosigned checkpoint %q", got)
	}
	pub := filepath.Join(t.TempDir(), "pub")
	w.publish(t, pub)
	src, err := tiles.OpenSource(pub, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	rdir := filepath.Join(t.TempDir(), "replica")
	opts := replica.SyncOptions{VKey: w.VerifierKey(), History: true, Policy: both}
	s, err := replica.Sync(context.Background(), rdir, src, opts)
	if err != nil || s.After != 5 || s.Witnessing == nil || !s.Witnessing.Met || string(s.Signed) != string(res.Signed) {
		t.Fatalf("sync: %+v %v", s, err)
	}

	// Only a cosigns size 8: b misses it, and the replica refuses it.
	w.add(t, 3)
	if _, err := collect(t, w.Log, onlyA); err != nil {
		t.Fatal(err)
	}
	w.publish(t, pub)
	s, err = replica.Sync(context.Background(), rdir, src, opts)
	var qe *formats.QuorumError
	if !errors.As(err, &qe) || len(qe.Cosigned) != 1 || qe.Cosigned[0].Name != "a" || strings.Join(qe.Missing, " ") != "b" {
		t.Fatalf("sync of a checkpoint b did not cosign: %v", err)
	}
	if l, err := ledger.OpenReadOnly(rdir); err != nil || l.Size() != 5 {
		t.Fatalf("replica after the refusal: %v", err)
	} else {
		l.Close()
	}

	// Size 10 under both: b holds 5 and the writer offers 8, so b answers
	// 409 and the writer resends from 5.
	w.add(t, 2)
	res, err = collect(t, w.Log, both)
	if err != nil || res.Witnesses[0].Resent || !res.Witnesses[1].Resent || res.Witnesses[1].Old != 5 {
		t.Fatalf("collection after a missed one: %+v %v", res.Witnesses, err)
	}
	w.publish(t, pub)
	if s, err = replica.Sync(context.Background(), rdir, src, opts); err != nil || s.After != 10 {
		t.Fatalf("sync: %+v %v", s, err)
	}

	// A fork: the same key signs another history of size 12. Both
	// witnesses hold 10 and refuse (422); no quorum.
	fork := newHistoryWriterAt(t, w.now)
	for range 12 {
		fork.add(t, 1)
	}
	res, err = collect(t, fork.Log, both)
	if !errors.As(err, &qe) || len(res.Witnessing.Cosigned) != 0 {
		t.Fatalf("fork: %+v %v", res, err)
	}
	for _, r := range res.Witnesses {
		if !errors.Is(r.Err, witness.ErrInconsistent) {
			t.Fatalf("witness %s on the fork: %v", r.Name, r.Err)
		}
	}
	// A rolled-back writer (size 3 < 10): the witness holds more.
	back := newHistoryWriterAt(t, w.now)
	back.add(t, 3)
	res, _ = collect(t, back.Log, both)
	for _, r := range res.Witnesses {
		if !errors.Is(r.Err, ledger.ErrWitnessAhead) {
			t.Fatalf("witness %s on the rolled-back log: %v", r.Name, r.Err)
		}
	}
}

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
		return replica.Sync(ctx, rdir, src, replica.SyncOptions{VKey: w.VerifierKey(), History: true,
			Seen: func([]byte, string) []replica.SeenCheckpoint { return vs }})
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
