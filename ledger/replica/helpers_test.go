package replica_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/publish"
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
