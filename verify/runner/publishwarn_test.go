package runner_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/verify/runner"
)

// TestPublishUnwitnessed: Unwitnessed is told the signature lines of
// the published checkpoint and of the new one when the new one carries
// fewer, and not when it carries as many, or under a policy.
func TestPublishUnwitnessed(t *testing.T) {
	auth := createAuthority(t, filepath.Join(t.TempDir(), "authority"), "example.com/pub", testkit.Key(t, 52), nil)
	defer auth.Close()
	to := filepath.Join(t.TempDir(), "pub")
	calls := 0
	warn := func(had, has int) {
		calls++
		if had != has+1 {
			t.Errorf("Unwitnessed(%d, %d): want had = has+1", had, has)
		}
	}
	if _, err := runner.PublishVerified(auth, to, runner.PublishOptions{Authority: true, Unwitnessed: warn}); err != nil || calls != 0 {
		t.Fatalf("first publication: %v, %d warnings", err, calls)
	}
	signed, err := auth.CosignedCheckpoint()
	if err != nil {
		t.Fatal(err)
	}
	cosigned := append(signed, []byte("\u2014 witness.example AAAAAAAA\n")...)
	if formats.CountSigLines(cosigned) != formats.CountSigLines(signed)+1 {
		t.Fatal("the added line does not count")
	}
	if err := os.WriteFile(filepath.Join(to, "checkpoint"), cosigned, 0o644); err != nil {
		t.Fatal(err)
	}
	runner.PublishVerified(auth, to, runner.PublishOptions{Authority: true, Unwitnessed: warn})
	if calls != 1 {
		t.Errorf("%d warnings over a cosigned publication, want 1", calls)
	}
	runner.PublishVerified(auth, to, runner.PublishOptions{Authority: true, Unwitnessed: warn, Policy: &formats.Policy{}})
	if calls != 1 {
		t.Errorf("%d warnings under a policy, want still 1", calls)
	}
}

// TestPublishedResult: the result's fields, and its line for people.
func TestPublishedResult(t *testing.T) {
	var p runner.Published
	p.Before, p.After, p.Files, p.Bytes = 2, 5, 1, 300
	r := p.Result("authority", "example.com/pub")
	if r.Log != "authority" || r.Origin != "example.com/pub" || r.Before != 2 || r.After != 5 || r.Files != 1 || r.Bytes != 300 || r.Witnessing != nil {
		t.Errorf("%+v", r)
	}
	if got, want := r.Text("/p"), "published authority log example.com/pub: 2 → 5 entries, 1 file, 300 bytes, into /p"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
