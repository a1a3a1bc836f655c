package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/tiles"
	"github.com/writ-ledger/writ/ledger/witness"
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
	replica := filepath.Join(t.TempDir(), "replica")
	opts := ledger.SyncOptions{VKey: w.VerifierKey(), History: true, Policy: both}
	s, err := ledger.Sync(context.Background(), replica, src, opts)
	if err != nil || s.After != 5 || s.Witnessing == nil || !s.Witnessing.Met || string(s.Signed) != string(res.Signed) {
		t.Fatalf("sync: %+v %v", s, err)
	}

	// Only a cosigns size 8: b misses it, and the replica refuses it.
	w.add(t, 3)
	if _, err := collect(t, w.Log, onlyA); err != nil {
		t.Fatal(err)
	}
	w.publish(t, pub)
	s, err = ledger.Sync(context.Background(), replica, src, opts)
	var qe *formats.QuorumError
	if !errors.As(err, &qe) || len(qe.Cosigned) != 1 || qe.Cosigned[0].Name != "a" || strings.Join(qe.Missing, " ") != "b" {
		t.Fatalf("sync of a checkpoint b did not cosign: %v", err)
	}
	if l, err := ledger.OpenReadOnly(replica); err != nil || l.Size() != 5 {
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
	if s, err = ledger.Sync(context.Background(), replica, src, opts); err != nil || s.After != 10 {
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

// TestCheckViews: a witness's checkpoint is proven consistent with the
// published one whether smaller, equal or larger (from the source's hash
// tiles, checked against the larger root), and a checkpoint of a fork of
// the log is a split view with both signed checkpoints and the failing
// proof; a larger tree whose tiles are not published is undecided.
func TestCheckViews(t *testing.T) {
	ctx := context.Background()
	w := newHistoryWriter(t)
	var seen [][]byte
	for range 5 {
		w.add(t, 3)
		cp, _ := w.Checkpoint()
		seen = append(seen, cp) // sizes 3, 6, 9, 12, 15
	}
	pub := filepath.Join(t.TempDir(), "pub")
	w.publish(t, pub)
	src, err := tiles.OpenSource(pub, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	published := seen[4] // size 15, the published checkpoint
	for i, s := range seen {
		if err := ledger.CheckViews(ctx, published, s, w.VerifierKey(), src); err != nil {
			t.Fatalf("seen %d: %v", i, err)
		}
	}
	fork := newHistoryWriterAt(t, w.now)
	fork.add(t, 7)
	forked7, _ := fork.Checkpoint()
	fork.add(t, 8)
	forked15, _ := fork.Checkpoint()
	fork.add(t, 1)
	forked16, _ := fork.Checkpoint()
	forkPub := filepath.Join(t.TempDir(), "forkpub")
	fork.publish(t, forkPub)
	forkSrc, err := tiles.OpenSource(forkPub, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var ie *ledger.InconsistencyError
	for _, c := range []struct {
		name string
		seen []byte
		src  tiles.Source
		why  string
	}{
		{"smaller", forked7, src, "split view: the tree of size 7 is not a prefix of the tree of size 15"},
		{"same size", forked15, src, "split view: the same size with another root"},
		{"larger", forked16, forkSrc, "split view: the tree of size 15 is not a prefix of the tree of size 16"},
	} {
		err := ledger.CheckViews(ctx, published, c.seen, w.VerifierKey(), c.src)
		if !errors.As(err, &ie) || ie.Why != c.why || string(ie.FoundSigned) != string(c.seen) || string(ie.TrustedSigned) != string(published) {
			t.Fatalf("%s fork: %v", c.name, err)
		}
	}
	if err := ledger.CheckViews(ctx, published, forked16, w.VerifierKey(), src); !errors.Is(err, ledger.ErrUndecided) {
		t.Fatalf("larger fork, tiles not published: %v", err)
	}
	if err := ledger.CheckViews(ctx, published, []byte("example.com/tiles\n1\n"+strings.Repeat("A", 43)+"=\n\n"), w.VerifierKey(), src); !errors.Is(err, ledger.ErrCheckpointSignature) {
		t.Fatalf("unsigned: %v", err)
	}
}
