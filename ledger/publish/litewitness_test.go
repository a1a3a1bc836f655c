package publish_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
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
	"github.com/writ-ledger/writ/sign"
	"golang.org/x/mod/sumdb/tlog"
)

// TestLitewitness: torchwood's litewitness (filippo.io/torchwood v0.6.1,
// built from the version go.mod pins, its key in an in-process
// ssh-agent, writ's log added to its SQLite database by torchwood's
// witnessctl) cosigns a writ log's checkpoints over C2SP tlog-witness:
// the vkey writ derives for it (formats.CosignerKey) is the one it
// announces; the writer collects its cosignature with old size 0, then
// with a consistency proof, then after a 409 from the size another
// submitter moved it to; its database holds each cosigned size and root;
// a replica syncs under the policy; and its answers to an unknown log, a
// forged key, a fork and a rolled-back log are what they should be, save
// for one spec difference (403 for an unknown log, where the spec says
// 404).
func TestLitewitness(t *testing.T) {
	ctx := context.Background()
	const name = "witness.example/litewitness"
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	w := newHistoryWriter(t)
	lw := testkit.Litewitness(t, testkit.LitewitnessConfig{Name: name, Key: key, Logs: []string{w.VerifierKey()}})
	pub, err := sign.NewPublicKey(key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	vkey, err := formats.CosignerKey(name, pub)
	if err != nil || vkey != lw.VKey {
		t.Fatalf("writ's cosignature/v1 vkey %q (%v), litewitness announces %q", vkey, err, lw.VKey)
	}
	p := mustPolicy(t, fmt.Sprintf("log %s\nwitness lw %s %s\nquorum lw\n", w.VerifierKey(), vkey, lw.URL))
	held := func(size int64, root tlog.Hash) {
		t.Helper()
		logs, err := lw.ListLogs()
		if err != nil {
			t.Fatal(err)
		}
		want := testkit.LitewitnessLog{Origin: "example.com/tiles", Size: size,
			RootHash: base64.StdEncoding.EncodeToString(root[:]), Keys: []string{w.VerifierKey()}}
		if len(logs) != 1 || fmt.Sprint(logs[0]) != fmt.Sprint(want) {
			t.Fatalf("litewitness's database holds %+v, want [%+v]", logs, want)
		}
	}
	cosigned := func(res publish.Collected, err error, old int64, resent bool, before time.Time) {
		t.Helper()
		after := time.Now()
		if err != nil || len(res.Witnesses) != 1 || res.Witnesses[0].Err != nil || res.Witnesses[0].Old != old || res.Witnesses[0].Resent != resent {
			t.Fatalf("collection: %+v %v", res.Witnesses, err)
		}
		wi := res.Witnessing
		if !wi.Met || len(wi.Cosigned) != 1 || wi.Cosigned[0].Name != "lw" || len(wi.Missing) != 0 || !wi.Time.Equal(wi.Cosigned[0].Time) ||
			wi.Time.Before(before.Truncate(time.Second)) || wi.Time.After(after) {
			t.Fatalf("witnessing between %v and %v: %+v", before, after, wi)
		}
		stored, err := w.CosignedCheckpoint()
		lines := strings.Split(strings.TrimSuffix(string(stored), "\n"), "\n")
		if err != nil || string(stored) != string(res.Signed) || strings.Count(string(stored), "\u2014") != 3 ||
			!strings.HasPrefix(lines[len(lines)-1], "\u2014 "+name+" ") {
			t.Fatalf("stored cosigned checkpoint %q (%v)", stored, err)
		}
		if again, err := p.Check(stored, w.Key(), after); err != nil || !again.Met {
			t.Fatalf("the stored checkpoint under the policy: %+v %v", again, err)
		}
		held(res.Checkpoint.Size, res.Checkpoint.Hash)
	}
	held(0, sha256.Sum256(nil)) // RFC 6962: the empty tree's hash

	// Size 5, the first: old size 0, no proof.
	w.add(t, 5)
	before := time.Now()
	res, err := collect(t, w.Log, p)
	cosigned(res, err, 0, false, before)

	// Size 9: old size 5 with a consistency proof.
	w.add(t, 4)
	before = time.Now()
	res, err = collect(t, w.Log, p)
	cosigned(res, err, 5, false, before)

	// Another submitter moves litewitness to size 12; the writer, at 14,
	// offers 9, gets 409 with 12 (text/x.tlog.size) and resends from 12.
	w.add(t, 3)
	cp12, _ := w.Checkpoint()
	proof, err := w.ProveConsistency(9, 12)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&witness.Client{}).AddCheckpoint(ctx, lw.URL, 9, tlog.TreeProof(proof.Path), cp12); err != nil {
		t.Fatalf("submitting size 12 aside: %v", err)
	}
	w.add(t, 2)
	before = time.Now()
	res, err = collect(t, w.Log, p)
	cosigned(res, err, 12, true, before)
	final := res

	// A replica syncs the published log under the policy.
	dir := filepath.Join(t.TempDir(), "pub")
	w.publish(t, dir)
	src, err := tiles.OpenSource(dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s, err := replica.Sync(ctx, filepath.Join(t.TempDir(), "replica"), src, replica.SyncOptions{VKey: w.Key(), History: true, Policy: p})
	if err != nil || s.After != 14 || s.Witnessing == nil || !s.Witnessing.Met || string(s.Signed) != string(final.Signed) {
		t.Fatalf("sync: %+v %v", s, err)
	}

	// litewitness v0.6.1 does not implement the monitoring endpoint
	// (GET <monitoring prefix>/<origin hash>/checkpoint): only POST
	// /add-checkpoint, its index page and /logz. The 404 is its
	// ServeMux's, which writ's client cannot tell from "never cosigned"
	// (ErrNotCosigned); its view of the log is read from its database
	// instead (held, above).
	_, err = (&witness.Client{}).Checkpoint(ctx, lw.URL, "example.com/tiles")
	var re *witness.ResponseError
	if !errors.As(err, &re) || re.Status != 404 || re.Line != "404 page not found" || !errors.Is(err, witness.ErrNotCosigned) {
		t.Fatalf("GET <prefix>/<origin hash>/checkpoint: %v", err)
	}

	// An unknown log: litewitness answers 403 "unknown log"; the spec
	// (tlog-witness, add-checkpoint) says 404 Not Found, which writ's
	// witness answers (witness.ErrUnknownLog). writ's client reads this
	// 403 as ErrForbidden.
	other, err := ledger.CreateWithHistory(filepath.Join(t.TempDir(), "other"), "example.com/other", testkit.Key(t, 2), func() time.Time { return w.now })
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Append([][]byte{[]byte("entry")}); err != nil {
		t.Fatal(err)
	}
	otherCP, _ := other.Checkpoint()
	_, err = (&witness.Client{}).AddCheckpoint(ctx, lw.URL, 0, nil, otherCP)
	if !errors.As(err, &re) || re.Status != 403 || re.Line != "unknown log" || !errors.Is(err, witness.ErrForbidden) {
		t.Fatalf("unknown log: %v", err)
	}
	// The log's origin under another key: 403 "invalid signature", as
	// the spec says.
	forged, err := ledger.CreateWithHistory(filepath.Join(t.TempDir(), "forged"), "example.com/tiles", testkit.Key(t, 3), func() time.Time { return w.now })
	if err != nil {
		t.Fatal(err)
	}
	defer forged.Close()
	if _, err := forged.Append([][]byte{[]byte("entry")}); err != nil {
		t.Fatal(err)
	}
	forgedCP, _ := forged.Checkpoint()
	_, err = (&witness.Client{}).AddCheckpoint(ctx, lw.URL, 14, nil, forgedCP)
	if !errors.As(err, &re) || re.Status != 403 || re.Line != "invalid signature" || !errors.Is(err, witness.ErrForbidden) {
		t.Fatalf("forged key: %v", err)
	}

	// A fork (the log's key, another history of 16): 409 with 14, then
	// 422 for the proof from 14. No quorum.
	fork := newHistoryWriterAt(t, w.now)
	fork.add(t, 16)
	res, err = collect(t, fork.Log, p)
	var qe *formats.QuorumError
	if !errors.As(err, &qe) || len(res.Witnessing.Cosigned) != 0 || !res.Witnesses[0].Resent || res.Witnesses[0].Old != 14 ||
		!errors.Is(res.Witnesses[0].Err, witness.ErrInconsistent) || !strings.Contains(res.Witnesses[0].Error, `"bad consistency proof"`) {
		t.Fatalf("fork: %+v %v", res.Witnesses, err)
	}
	// A rolled-back log (size 3): litewitness holds 14.
	back := newHistoryWriterAt(t, w.now)
	back.add(t, 3)
	res, _ = collect(t, back.Log, p)
	if !errors.Is(res.Witnesses[0].Err, publish.ErrWitnessAhead) {
		t.Fatalf("rolled-back log: %+v", res.Witnesses)
	}
	held(14, final.Checkpoint.Hash)
}
