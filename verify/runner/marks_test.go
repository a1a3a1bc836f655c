package runner_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/transfer"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/audit"
)

// manyArtifacts is how many distinct artifacts TestRunnerManyArtifacts
// admits: far past the 64 that once made a runner's own decision log
// unreadable.
const manyArtifacts = 10_000

// TestRunnerManyArtifacts: a runner that admitted 10,000 distinct
// artifacts keeps working. Every decision stays small (it records the
// marks of the artifacts its dispatch named, not the runner's history),
// the decision log verifies and audits, and after a restart the runner
// still remembers each artifact's mark: a lower pin of any of them is a
// rollback.
func TestRunnerManyArtifacts(t *testing.T) {
	l := newRunnerLedger(t)
	bin := filepath.Join(t.TempDir(), "tool")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	rel := testkit.Key(t, 12)
	del := testkit.Delegation(rel, []string{"pin"}, "", "")
	del.Artifacts = []string{"art-*"}
	pins := [][]byte{testkit.Seal(t, del, l.root)}
	pin := func(n int, version string) []byte {
		p, err := transfer.NewPin(bin, transfer.PinOptions{Artifact: fmt.Sprintf("art-%d", n), Version: version, Platform: platform,
			AllowUnknown: true, IssuedAt: testkit.Epoch.Add(-time.Hour), Expires: testkit.Epoch.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		return testkit.Seal(t, p, rel)
	}
	for n := range manyArtifacts {
		pins = append(pins, pin(n, "1.0.0"))
	}
	for len(pins) > 0 {
		k := min(len(pins), 2000)
		l.append(t, pins[:k]...)
		pins = pins[k:]
	}
	dispatch := func(n, id int) verify.Dispatch {
		return verify.Dispatch{Raw: l.signed(t, id, func(i *schemas.Instruction) { i.Agent.Name = fmt.Sprintf("art-%d", n) }), AgentBinary: bin}
	}

	r := l.open(t, verify.ModeOff, verify.Trust{}, nil)
	var wg sync.WaitGroup
	work := make(chan int)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range work {
				v, _, err := r.Admit(dispatch(n, n))
				if err != nil || v.Verdict != verify.Admitted || v.HighWater[fmt.Sprintf("art-%d", n)] != "v1.0.0" || len(v.HighWater) != 1 {
					t.Errorf("artifact %d: %v %s/%s %v", n, err, v.Verdict, v.Rule, v.HighWater)
				}
			}
		}()
	}
	for n := range manyArtifacts {
		work <- n
	}
	close(work)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	r.Close()

	// Every decision is bounded, and the log verifies and audits.
	dec, err := ledgerdir.OpenDecisionsReadOnly(l.dir)
	if err != nil {
		t.Fatal(err)
	}
	largest := 0
	if _, err := dec.Verify(dec.Key(), func(_ int64, e []byte, _ time.Time) error { largest = max(largest, len(e)); return nil }); err != nil {
		t.Fatal(err)
	}
	dec.Close()
	if largest > 1024 {
		t.Errorf("the largest decision is %d bytes after %d artifacts", largest, manyArtifacts)
	}
	t.Logf("%d decisions, the largest %d bytes", manyArtifacts, largest)
	rep, err := audit.Run(audit.Dir(l.dir), audit.Options{Now: func() time.Time { return testkit.Epoch }})
	if err != nil || !rep.OK {
		t.Fatalf("audit: %v %+v", err, rep.Failure)
	}

	// After a restart, the marks are read back from the decision log: a
	// newer pin of a lower version is a rollback for each artifact tried.
	l.append(t, pin(7, "0.9.0"), pin(manyArtifacts-1, "0.9.0"))
	for i, n := range []int{7, manyArtifacts - 1} {
		id := manyArtifacts + 3*i
		l.admitEach(t, verify.Trust{}, nil, [3]verify.Dispatch{dispatch(n, id), dispatch(n, id+1), dispatch(n, id+2)}, rules.Rollback, softAll)
	}
	// And an artifact admitted once more still works.
	r = l.open(t, verify.ModeOff, verify.Trust{}, nil)
	if v, _, err := r.Admit(dispatch(42, 2*manyArtifacts)); err != nil || v.Verdict != verify.Admitted || v.HighWater["art-42"] != "v1.0.0" {
		t.Fatalf("after a restart: %v %+v", err, v)
	}
}
