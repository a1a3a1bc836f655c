package witness_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/transparency-dev/formats/log"
	fnote "github.com/transparency-dev/formats/note"
	"github.com/transparency-dev/tessera"
	tclient "github.com/transparency-dev/tessera/client"
	"github.com/transparency-dev/tessera/storage/posix"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger/witness"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// tesseraLog is a Tessera log (POSIX driver) in a temporary directory,
// signing its checkpoints with an Ed25519 note key made by
// golang.org/x/mod/sumdb/note, not by writ.
type tesseraLog struct {
	origin   string
	vkey     string
	appender *tessera.Appender
	reader   tessera.LogReader
	awaiter  *tessera.PublicationAwaiter
}

func newTesseraLog(t *testing.T, ctx context.Context, origin string, opts func(*tessera.AppendOptions)) *tesseraLog {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, origin)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	driver, err := posix.New(ctx, posix.Config{Path: filepath.Join(t.TempDir(), "log")})
	if err != nil {
		t.Fatal(err)
	}
	o := tessera.NewAppendOptions().WithCheckpointSigner(signer).WithCheckpointInterval(100*time.Millisecond).
		WithBatching(64, 10*time.Millisecond)
	if opts != nil {
		opts(o)
	}
	appender, shutdown, reader, err := tessera.NewAppender(ctx, driver, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdown(context.Background()) })
	return &tesseraLog{origin: origin, vkey: vkey, appender: appender, reader: reader,
		awaiter: tessera.NewPublicationAwaiter(ctx, reader.ReadCheckpoint, 20*time.Millisecond)}
}

// add appends n entries and returns the first checkpoint published that
// holds them all.
func (l *tesseraLog) add(t *testing.T, ctx context.Context, n int) ([]byte, log.Checkpoint) {
	t.Helper()
	var last tessera.IndexFuture
	for i := range n {
		last = l.appender.Add(ctx, tessera.NewEntry([]byte(fmt.Sprintf("%s entry %d %d", l.origin, time.Now().UnixNano(), i))))
	}
	_, signed, err := l.awaiter.Await(ctx, last)
	if err != nil {
		t.Fatal(err)
	}
	var c log.Checkpoint
	if _, err := c.Unmarshal(signed[:strings.Index(string(signed), "\n\n")+1]); err != nil {
		t.Fatal(err)
	}
	return signed, c
}

// verifyIndependently opens a cosigned checkpoint with
// transparency-dev/formats's cosignature/v1 verifier, an implementation
// writ shares no code with, and returns the cosignature's time.
func verifyIndependently(t *testing.T, wvkey string, signed []byte) time.Time {
	t.Helper()
	v, err := fnote.NewVerifierForCosignatureV1(wvkey)
	if err != nil {
		t.Fatalf("transparency-dev/formats cannot read the witness key %s: %v", wvkey, err)
	}
	n, err := note.Open(signed, note.VerifierList(v))
	if err != nil {
		t.Fatalf("transparency-dev/formats does not verify the cosignature: %v\n%s", err, signed)
	}
	at, err := fnote.CoSigV1Timestamp(n.Sigs[0])
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// TestTesseraInterop: a Tessera log feeds writ's witness through writ's
// client, with consistency proofs built by Tessera's own proof builder
// from its tiles; Tessera's own witness client (WithWitnesses) gets its
// checkpoints cosigned by writ's witness before publishing them; and the
// cosignatures verify with transparency-dev/formats.
func TestTesseraInterop(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Tessera logs")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	direct := newTesseraLog(t, ctx, "example.com/tessera-direct", nil)

	// The witness must know both logs before either talks to it; the
	// second log is made once the witness serves.
	skey, vkey2, err := note.GenerateKey(rand.Reader, "example.com/tessera-witnessed")
	if err != nil {
		t.Fatal(err)
	}
	cfg := witness.Config{Name: witnessName, Key: testkit.Key(t, 200), Dir: t.TempDir(), Logs: []string{direct.vkey, vkey2},
		Now: func() time.Time { return testkit.Epoch }}
	w, err := witness.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	wurl := serve(t, w)

	// 1. writ's client, Tessera's proofs.
	c := &witness.Client{}
	signed1, cp1 := direct.add(t, ctx, 37)
	sig, err := c.AddCheckpoint(ctx, wurl, 0, nil, signed1)
	if err != nil {
		t.Fatal(err)
	}
	if at := verifyIndependently(t, w.VerifierKey(), append(signed1, sig...)); !at.Equal(testkit.Epoch) {
		t.Fatalf("cosignature time %s, want %s", at, testkit.Epoch)
	}
	signed2, cp2 := direct.add(t, ctx, 250)
	pb, err := tclient.NewProofBuilder(ctx, cp2.Size, direct.reader.ReadTile)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := pb.ConsistencyProof(ctx, cp1.Size, cp2.Size)
	if err != nil {
		t.Fatal(err)
	}
	proof := make(tlog.TreeProof, len(raw))
	for i, h := range raw {
		copy(proof[i][:], h)
	}
	if _, err := c.AddCheckpoint(ctx, wurl, int64(cp1.Size+1), proof, signed2); err == nil {
		t.Fatal("a wrong old size was cosigned")
	}
	sig, err = c.AddCheckpoint(ctx, wurl, int64(cp1.Size), proof, signed2)
	if err != nil {
		t.Fatalf("Tessera's checkpoint %d with its proof from %d: %v", cp2.Size, cp1.Size, err)
	}
	verifyIndependently(t, w.VerifierKey(), append(signed2, sig...))
	served, err := c.Checkpoint(ctx, wurl, direct.origin)
	if err != nil {
		t.Fatal(err)
	}
	verifyIndependently(t, w.VerifierKey(), served)

	// 2. Tessera's witness client: the log publishes a checkpoint only
	// with writ's witness's cosignature on it.
	tw, err := tessera.NewWitness(w.VerifierKey(), mustURL(t, wurl))
	if err != nil {
		t.Fatalf("Tessera cannot use the witness key %s: %v", w.VerifierKey(), err)
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	witnessed := newTesseraLog(t, ctx, "example.com/tessera-witnessed", func(o *tessera.AppendOptions) {
		o.WithCheckpointSigner(signer).WithWitnesses(tessera.NewWitnessGroup(1, tw), &tessera.WitnessOptions{Timeout: 10 * time.Second})
	})
	witnessed.vkey = vkey2
	for _, n := range []int{5, 40, 300} {
		signed, cp := witnessed.add(t, ctx, n)
		verifyIndependently(t, w.VerifierKey(), signed)
		held, size, err := w.Checkpoint(witnessed.origin)
		if err != nil || uint64(size) < cp.Size {
			t.Fatalf("the witness holds size %d (%v) after Tessera published %d", size, err, cp.Size)
		}
		verifyIndependently(t, w.VerifierKey(), held)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
