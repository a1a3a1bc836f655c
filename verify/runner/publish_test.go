package runner_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/runner"
)

// TestPublishVerified: a log that verifies is published, Verified
// running before anything is written; publishing it again into the same
// place adds no entry.
func TestPublishVerified(t *testing.T) {
	auth := createAuthority(t, filepath.Join(t.TempDir(), "authority"), "example.com/pub", testkit.Key(t, 51), nil)
	defer auth.Close()
	to := filepath.Join(t.TempDir(), "pub")
	verified := false
	p, err := runner.PublishVerified(auth, to, runner.PublishOptions{Authority: true, Verified: func() {
		verified = true
		if _, err := os.Stat(to); err == nil {
			t.Error("Verified ran after the publication was written")
		}
	}})
	if err != nil || !verified || p.Witnessing != nil || p.Files == 0 {
		t.Fatalf("PublishVerified: %+v, %v (verified %v)", p, err, verified)
	}
	again, err := runner.PublishVerified(auth, to, runner.PublishOptions{Authority: true})
	if err != nil || again.Before != p.After || again.After != p.After {
		t.Errorf("publishing again: %+v, %v", again, err)
	}
}

// TestPublishEvery: the decision log is published at once, and once more
// when stopped, with the decisions made meanwhile; a failure is reported
// and publishing goes on.
func TestPublishEvery(t *testing.T) {
	l := newRunnerLedger(t)
	r := l.open(t, verify.ModeEnforce, verify.Trust{}, nil)
	defer r.Close()
	to := filepath.Join(t.TempDir(), "decisions")
	var failures []error
	stop := r.PublishEvery(to, time.Hour, func(err error) { failures = append(failures, err) })
	if _, err := os.Stat(filepath.Join(to, "checkpoint")); err != nil {
		t.Errorf("not published at start: %v", err)
	}
	if _, _, err := r.Admit(verify.Dispatch{Raw: l.signed(t, 1, nil), AgentBinary: agentPath}); err != nil {
		t.Fatal(err)
	}
	stop()
	if len(failures) != 0 {
		t.Errorf("failures: %v", failures)
	}
	again, err := r.PublishDecisions(to)
	if err != nil || again.Before != again.After || again.After == 0 {
		t.Errorf("the last decision was not published when stopped: %+v, %v", again, err)
	}
	bad := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(bad, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r.PublishEvery(bad, time.Hour, func(err error) { failures = append(failures, err) })()
	if len(failures) != 2 {
		t.Errorf("publishing into a file: %d failures, want 2", len(failures))
	}
}
