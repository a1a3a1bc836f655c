package audit_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/verify/audit"
)

// cosignature lines anyone can add (not verified without a policy): key
// names of 128 '<' (each escaped to \u003c by encoding/json).
func junkLines(n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		name := strings.Repeat("<", 120) + string(rune('A'+i/26)) + string(rune('a'+i%26))
		sig := base64.StdEncoding.EncodeToString([]byte{byte(i), 1, 2, 3, 4, 5})
		out = append(out, "\u2014 "+name+" "+sig+"\n")
	}
	return out
}

// TestHostileStateOverflow (hostile review of issue 20): cosignature lines
// anyone on the way can add (their names escaped six-fold in JSON) never
// make an audit write a state file the next audit refuses to read: the
// state keeps only what the log key signed.
func TestHostileStateOverflow(t *testing.T) {
	logKey, runnerKey := testkit.Key(t, 50), testkit.Key(t, 51)
	dir := auditLedger(t, logKey, runnerKey, "")
	var logs []*ledger.Log
	for _, d := range []struct {
		sub string
		key interface{}
	}{{ledgerdir.AuthorityDir, logKey}, {ledgerdir.DecisionsDir, runnerKey}} {
		_ = d
	}
	a := openAuthority(t, filepath.Join(dir, ledgerdir.AuthorityDir), logKey, nil)
	dl := openAuthority(t, filepath.Join(dir, ledgerdir.DecisionsDir), runnerKey, nil)
	logs = append(logs, a, dl)
	for _, l := range logs {
		head, err := l.Checkpoint()
		if err != nil {
			t.Fatal(err)
		}
		out, err := l.AttachCosignatures(head, junkLines(60))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("cosigned checkpoint %d bytes", len(out))
	}
	exp := filepath.Join(t.TempDir(), "x.export")
	f, _ := os.Create(exp)
	if err := replica.Export(f, []string{"authority", "decisions"}, logs); err != nil {
		t.Fatal(err)
	}
	f.Close()
	a.Close()
	dl.Close()
	state := filepath.Join(t.TempDir(), "auditor.json")
	rep, err := audit.Run(audit.ExportFile(exp), audit.Options{StateFile: state})
	if err != nil || !rep.OK {
		t.Fatalf("first audit: %+v %v", rep.Failure, err)
	}
	fi, _ := os.Stat(state)
	t.Logf("state file %d bytes (limit %d)", fi.Size(), audit.MaxStateFile)
	rep, err = audit.Run(audit.ExportFile(exp), audit.Options{StateFile: state})
	if err != nil || !rep.OK {
		t.Fatalf("second audit of the same export with the state the first wrote: %v %+v", err, rep)
	}
}
