package runner_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
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
