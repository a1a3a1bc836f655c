package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/failure"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/rules"
)

// TestDamageAdviceIsSafe runs every damage the crash and corruption tests
// can make to a ledger's store through the command line as a new user
// would meet it: `writ ledger verify` refuses with exit 1, in writ's
// words, naming the rule and the file, prints a next act, and changes
// nothing; following the printed advice literally (and, when it says the
// entries are gone, restoring the export it names) brings back a ledger
// in which every entry verified before the damage is there, byte for
// byte, under the same signed checkpoint; and the printed undo puts the
// damaged store back exactly.
func TestDamageAdviceIsSafe(t *testing.T) {
	t.Setenv("WRIT_PASSPHRASE", "pw")
	work := t.TempDir()
	t.Chdir(work)
	base, export := adviceLedger(t)
	want, cp := ledgerEntries(t, base)
	for _, kind := range testkit.Damages {
		t.Run(string(kind), func(t *testing.T) {
			dir := filepath.Join(work, string(kind))
			copyTree(t, base, dir)
			store := filepath.Join(dir, ledgerdir.AuthorityDir)
			if err := testkit.DamageStore(store, kind); err != nil {
				t.Fatal(err)
			}
			damaged := testkit.Snapshot(t, store)
			code, _, stderr := writRun("ledger", "verify", "--dir", dir)
			next := refusal(t, code, stderr, rules.StoreDamaged)
			// The advice writ once gave for a truncated MANIFEST: open the
			// log for writing. A writer's open recovers an empty value log
			// (what a kill leaves; it holds nothing) and refuses the rest.
			if kind != testkit.ValueLogEmpty {
				code, _, jerr := writRun("--json", "ledger", "checkpoint", "--refresh", "--dir", dir)
				var j failure.Failure
				if code != exitcode.No || json.Unmarshal(jerr, &j) != nil || j.Rule != rules.StoreDamaged || len(j.Hints) == 0 {
					t.Fatalf("checkpoint --refresh --json: exit %d, %s", code, jerr)
				}
			}
			if !bytes.Equal(damaged, testkit.Snapshot(t, store)) {
				t.Fatal("a refused run changed the store")
			}
			code, stdout, stderr := writRun(next...)
			if code == exitcode.No {
				next = refusal(t, code, stderr, rules.StoreUnrecovered)
				if !bytes.Equal(damaged, testkit.Snapshot(t, store)) {
					t.Fatal("a refused repair changed the store")
				}
				for i, a := range next {
					if a == "EXPORT" {
						next[i] = export
					}
				}
				code, stdout, stderr = writRun(next...)
			}
			if code != exitcode.OK {
				t.Fatalf("%q: exit %d\n%s%s", next, code, stdout, stderr)
			}
			if code, out, errb := writRun("ledger", "verify", "--dir", dir); code != exitcode.OK {
				t.Fatalf("verify after the repair: exit %d\n%s%s", code, out, errb)
			}
			if got, gotCP := ledgerEntries(t, dir); !slices.EqualFunc(got, want, bytes.Equal) || gotCP != cp {
				t.Fatalf("after following the advice: %d entries, checkpoint %q; want %d, %q", len(got), gotCP, len(want), cp)
			}
			undo := regexp.MustCompile(`(?m)^undo: (.*)$`).FindSubmatch(stdout)
			if undo == nil {
				t.Fatalf("the repair printed no undo:\n%s", stdout)
			}
			if code, out, errb := writRun(strings.Fields(string(undo[1]))[1:]...); code != exitcode.OK {
				t.Fatalf("%s: exit %d\n%s%s", undo[1], code, out, errb)
			}
			if !bytes.Equal(damaged, testkit.Snapshot(t, store)) {
				t.Fatal("undo did not put the damaged store back as it was")
			}
		})
	}
}

// refusal checks a refused run: exit 1, `writ: error: RULE: ...` naming
// the rule, and a hint holding a writ command in backquotes, which it
// returns as arguments (without "writ").
func refusal(t *testing.T, code int, stderr []byte, rule string) []string {
	t.Helper()
	if code != exitcode.No || !bytes.HasPrefix(stderr, []byte("writ: error: "+rule+": ")) {
		t.Fatalf("exit %d, want 1 naming %s:\n%s", code, rule, stderr)
	}
	m := regexp.MustCompile("(?m)^writ: hint: [^`]*`writ ([^`]*)`").FindSubmatch(stderr)
	if m == nil {
		t.Fatalf("no command to follow in the hint:\n%s", stderr)
	}
	return strings.Fields(string(m[1]))
}

// writRun runs the command line in this process and returns its exit
// code, stdout and stderr.
func writRun(args ...string) (int, []byte, []byte) {
	var out, errb bytes.Buffer
	code := run(append([]string{"writ"}, args...), strings.NewReader(""), &out, &errb)
	return code, out.Bytes(), errb.Bytes()
}

// adviceLedger makes a ledger L (a root and four delegations, appended in
// two runs so the store has several tables) and its export.
func adviceLedger(t *testing.T) (string, string) {
	t.Helper()
	steps := [][]string{
		{"key", "generate", "--out", "root", "--work-factor", "10"},
		{"key", "generate", "--out", "op", "--work-factor", "10"},
		{"root", "sign", "--key", "root.key", "--pub", "root.pub", "--expires", "8760h", "--out", "root.cose"},
		{"ledger", "init", "--dir", "L", "--root", "root.cose", "--origin", "example.com/damage", "--work-factor", "10"},
	}
	for _, s := range []string{"a", "b", "c", "d"} {
		steps = append(steps, []string{"delegate", "--key", "root.key", "--to", "op.pub", "--action", "instruct", "--stream", s, "--machine", "m", "--not-after", "720h", "--out", "d" + s})
	}
	steps = append(steps, []string{"ledger", "append", "--dir", "L", "da", "db"}, []string{"ledger", "append", "--dir", "L", "dc", "dd"},
		[]string{"ledger", "export", "--dir", "L", "--out", "L.export"})
	for _, s := range steps {
		if code, out, errb := writRun(s...); code != exitcode.OK {
			t.Fatalf("%q: exit %d\n%s%s", s, code, out, errb)
		}
	}
	return "L", "L.export"
}

// ledgerEntries returns the verified entries and the signed checkpoint of
// the authority log in dir.
func ledgerEntries(t *testing.T, dir string) ([][]byte, string) {
	t.Helper()
	l, err := ledgerdir.OpenAuthority(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var out [][]byte
	for i := range l.Size() {
		e, err := l.VerifiedEntry(i)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	cp, err := l.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	return out, string(cp)
}

// copyTree copies the directory from to the new directory to.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRepairBusyChangesNothing: while another holder has the decision log
// open (as `writ admission serve` does), `writ ledger repair` of a ledger
// whose authority store is damaged exits 4 (busy) before it moves or
// rebuilds anything, with or without --from.
func TestRepairBusyChangesNothing(t *testing.T) {
	t.Setenv("WRIT_PASSPHRASE", "pw")
	t.Chdir(t.TempDir())
	dir, export := adviceLedger(t)
	dec, err := ledger.Create(filepath.Join(dir, ledgerdir.DecisionsDir), "example.com/damage/decisions/0123456789abcdef", testkit.Key(t, 3), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	if err := testkit.DamageStore(filepath.Join(dir, ledgerdir.AuthorityDir), testkit.ManifestTruncated); err != nil {
		t.Fatal(err)
	}
	before := testkit.Snapshot(t, dir)
	for _, from := range [][]string{nil, {"--from", export}} {
		code, stdout, stderr := writRun(append([]string{"ledger", "repair", "--dir", dir}, from...)...)
		if code != exitcode.Busy || len(stdout) != 0 || !bytes.Contains(stderr, []byte("log is in use by another process")) {
			t.Fatalf("repair %q: exit %d\n%s%s", from, code, stdout, stderr)
		}
		if !bytes.Equal(before, testkit.Snapshot(t, dir)) {
			t.Fatalf("repair %q, refused as busy, changed the ledger directory", from)
		}
	}
}
