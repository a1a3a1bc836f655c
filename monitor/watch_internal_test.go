package monitor

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/schemas"
)

// TestTouches: what each kind of record touches of a watch; patterns
// touch when either matches the other; a root touches every watch.
func TestTouches(t *testing.T) {
	op, other := testkit.Key(t, 1), testkit.Key(t, 2)
	w := Watch{Keys: []string{op.Public().ID()[:12]}, Streams: []string{"deploy/web"}, Artifacts: []string{"agent*"}, Machines: []string{"runner-1"}}
	del := testkit.Delegation(other, []string{"instruct"}, "deploy/*", "runner-*")
	none := lookups{reported: func(string) bool { return false }}
	for _, tc := range []struct {
		name    string
		rec     schemas.Record
		signers []string
		want    []string
	}{
		{"root", testkit.Root(1, other), nil, []string{"root"}},
		{"delegation to the key (of artifact agent)", testkit.Delegation(op, []string{"pin"}, "", ""), nil, []string{"key " + w.Keys[0], "artifact agent*"}},
		{"delegation over the stream and machine", del, nil, []string{"stream deploy/web", "machine runner-1"}},
		{"signed by the key", testkit.Delegation(other, []string{"instruct"}, "batch/*", "build-*"), []string{op.Public().ID()}, []string{"key " + w.Keys[0]}},
		{"pin of the artifact", testkit.Pin("linux/amd64", "sha256:"+strings.Repeat("ab", 32), 1), nil, []string{"artifact agent*"}},
		{"revocation of the key", &schemas.Revocation{V: 1, Target: op.Public().ID(), Reason: "r"}, nil, []string{"key " + w.Keys[0]}},
		{"quarantine of another machine", &schemas.Quarantine{V: 1, Machine: "runner-2"}, nil, nil},
		{"untouched", testkit.Delegation(other, []string{"instruct"}, "batch/*", "build-*"), nil, nil},
	} {
		if got := w.touches(tc.rec, tc.signers, none); !slices.Equal(got, tc.want) {
			t.Errorf("%s: touches %q, want %q", tc.name, got, tc.want)
		}
	}
	rev := &schemas.Revocation{V: 1, Target: "sha256:" + strings.Repeat("cd", 32), Reason: "r"}
	if got := w.touches(rev, nil, lookups{reported: func(d string) bool { return d == rev.Target }}); !slices.Equal(got, []string{"a record reported before"}) {
		t.Errorf("a revocation of a reported record touches %q", got)
	}
	// A hostile review: revoking the lead's delegation ends the watched
	// operator's, which rests on it.
	chained := lookups{reported: func(string) bool { return false }, chained: func(d string) []string {
		if d == rev.Target {
			return []string{other.Public().ID(), op.Public().ID()}
		}
		return nil
	}}
	if got := w.touches(rev, nil, chained); !slices.Equal(got, []string{"key " + w.Keys[0]}) {
		t.Errorf("a revocation of a delegation the watched key's rests on touches %q", got)
	}
}

// TestWatchCheck: each refusal wraps ErrWatch and names the field.
func TestWatchCheck(t *testing.T) {
	for _, tc := range []struct {
		w    Watch
		want string
	}{
		{Watch{Streams: []string{"x"}}, ""},
		{Watch{}, "nothing to watch"},
		{Watch{Keys: []string{"ABCDEF01"}}, `key "ABCDEF01"`},
		{Watch{Keys: []string{"abcdef0"}}, `key "abcdef0"`},
		{Watch{Machines: []string{"["}}, `pattern "["`},
		{Watch{Streams: []string{"x"}, Alert: []string{"pins"}}, `alert "pins"`},
	} {
		err := tc.w.Check()
		if (err == nil) != (tc.want == "") || (err != nil && (!errors.Is(err, ErrWatch) || !strings.Contains(err.Error(), tc.want))) {
			t.Errorf("%+v: %v, want %q", tc.w, err, tc.want)
		}
	}
}

// FuzzReadState: any state file is read or refused with ErrState, never
// a panic, and what is read writes back and reads the same.
func FuzzReadState(f *testing.F) {
	f.Add([]byte(`{"v":1,"origin":"o","size":0}`))
	f.Add([]byte(`{"v":1,"origin":"o","size":3,"root_hash":"` + strings.Repeat("a", 64) + `","reported":["sha256:x"]}`))
	f.Add([]byte(`{"v":2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, "s.json")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		st, err := readState(p)
		if err != nil {
			if !errors.Is(err, ErrState) {
				t.Fatalf("error %v does not wrap ErrState", err)
			}
			return
		}
		if err := st.write(p); err != nil {
			t.Fatal(err)
		}
		again, err := readState(p)
		if err != nil || again.Size != st.Size || again.Root != st.Root || again.Origin != st.Origin {
			t.Fatalf("state did not round-trip: %+v, %v", again, err)
		}
	})
}

// TestOverlap: patterns that may name one thing overlap, segment by
// segment, erring towards yes; another number of segments never does.
func TestOverlap(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"deploy/web", "deploy/web", true},
		{"deploy/*", "deploy/web", true},
		{"*/web", "deploy/*", true}, // a hostile review: both name deploy/web
		{"web-*", "*-prod", true},
		{"deploy/web", "deploy/db", false},
		{"deploy/*", "deploy/web/x", false},
		{"batch/*", "deploy/*", false},
	} {
		if got := overlap(tc.a, tc.b); got != tc.want {
			t.Errorf("overlap(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestReadStateRefuses: a state that cannot be one is ErrState, never
// a position that skips the fork and rollback checks.
func TestReadStateRefuses(t *testing.T) {
	root := strings.Repeat("a", 64)
	for _, body := range []string{
		`{"v":1,"size":99999,"root_hash":"` + strings.Repeat("0", 64) + `"}`, // no origin: would skip every check
		`{"v":1,"origin":"o","size":3,"root_hash":"` + strings.ToUpper(root) + `"}`,
		`{"v":1,"origin":"o","size":3,"root_hash":"` + root + `"} {"v":1}`,
		`{"v":1,"origin":"o","size":-1}`,
		`{"v":1,"origin":"o","size":3}`,
		`{"v":1,"origin":"o","size":0,"root_hash":"` + root + `"}`,
		`{"v":1,"extra":1}`,
	} {
		p := filepath.Join(t.TempDir(), "s.json")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := readState(p); !errors.Is(err, ErrState) {
			t.Errorf("%s: %v, want ErrState", body, err)
		}
	}
}
