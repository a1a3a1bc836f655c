package publish_test

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
	"github.com/writ-ledger/writ/ledger/publish"
	"github.com/writ-ledger/writ/ledger/replica"
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

func collect(t *testing.T, l *ledger.Log, p *formats.Policy) (publish.Collected, error) {
	t.Helper()
	return publish.CollectCosignatures(context.Background(), l, p, &witness.Client{}, 5*time.Second, time.Now)
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
	opts := replica.SyncOptions{VKey: w.Key(), History: true, Policy: both}
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
		if !errors.Is(r.Err, publish.ErrWitnessAhead) {
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
