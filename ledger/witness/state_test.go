package witness_test

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger/witness"
)

// TestRestartKeepsState: a witness reopened on its directory holds what
// it cosigned: the same checkpoint served, 409 with its size for old 0,
// and it goes on from there.
func TestRestartKeepsState(t *testing.T) {
	a := newTestLog(t, "example.com/a", 1).grow(t, "a", 12)
	dir := t.TempDir()
	w := newWitness(t, dir, a)
	if _, err := w.AddCheckpoint(body(t, 0, nil, a.checkpoint(t, 7))); err != nil {
		t.Fatal(err)
	}
	before, _, _ := w.Checkpoint(a.origin)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddCheckpoint(body(t, 7, a.proof(t, 7, 9), a.checkpoint(t, 9))); !errors.Is(err, witness.ErrClosed) {
		t.Fatalf("after Close: %v, want ErrClosed", err)
	}
	w2 := newWitness(t, dir, a)
	after, size, err := w2.Checkpoint(a.origin)
	if err != nil || size != 7 || string(after) != string(before) {
		t.Fatalf("after restart: size %d, %v\n%s\nwant\n%s", size, err, after, before)
	}
	var conflict *witness.ConflictError
	if _, err := w2.AddCheckpoint(body(t, 0, nil, a.checkpoint(t, 12))); !errors.As(err, &conflict) || conflict.Size != 7 {
		t.Fatalf("old 0 after restart: %v, want a conflict at 7", err)
	}
	if _, err := w2.AddCheckpoint(body(t, 7, a.proof(t, 7, 12), a.checkpoint(t, 12))); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "logs", witness.OriginHash(a.origin)))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file: %v, mode %v; want 0600", err, fi.Mode())
	}
}

// TestLocked: a second witness on the same directory fails with
// ErrLocked until the first is closed.
func TestLocked(t *testing.T) {
	a := newTestLog(t, "example.com/a", 1)
	dir := t.TempDir()
	w := newWitness(t, dir, a)
	if _, err := witness.New(witnessConfig(t, dir, a)); !errors.Is(err, witness.ErrLocked) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("second witness: %v, want ErrLocked naming %s", err, dir)
	}
	w.Close()
	w2, err := witness.New(witnessConfig(t, dir, a))
	if err != nil {
		t.Fatalf("after Close: %v", err)
	}
	w2.Close()
}

// TestCorruptState: a state file that is not exactly what the witness
// wrote stops it at startup, naming the file; nothing is reset.
func TestCorruptState(t *testing.T) {
	a := newTestLog(t, "example.com/a", 1).grow(t, "a", 5)
	b := newTestLog(t, "example.com/b", 5).grow(t, "b", 5)
	other := newTestLog(t, "example.com/a", 2).grow(t, "a", 5)
	tests := []struct {
		name   string
		edit   func(t *testing.T, file string, state, bstate []byte) // changes the state file of a
		config func(*witness.Config)
		want   string
		kind   error // the sentinel (default ErrCorruptState)
	}{
		{name: "a flipped bit in the cosignature", want: "does not verify under",
			edit: func(t *testing.T, f string, s, _ []byte) { write(t, f, flipSig(t, s, 1)) }},
		{name: "a flipped bit in the log's signature", want: "its log signatures do not verify",
			edit: func(t *testing.T, f string, s, _ []byte) { write(t, f, flipSig(t, s, 0)) }},
		{name: "a byte that is not base64", want: "not a signed note",
			edit: func(t *testing.T, f string, s, _ []byte) { s[len(s)-3] = '*'; write(t, f, s) }},
		{name: "truncated", want: "malformed checkpoint",
			edit: func(t *testing.T, f string, s, _ []byte) { write(t, f, s[:30]) }},
		{name: "empty", want: "malformed checkpoint",
			edit: func(t *testing.T, f string, s, _ []byte) { write(t, f, nil) }},
		{name: "another log's state", want: `it holds a checkpoint of origin "example.com/b"`,
			edit: func(t *testing.T, f string, _, bs []byte) { write(t, f, bs) }},
		{name: "an extra signature line", want: "exactly one cosignature by this witness",
			edit: func(t *testing.T, f string, s, _ []byte) {
				extra := signText(t, a.text(t, 5), other.signer)
				write(t, f, append(s, extra[len(a.text(t, 5))+1:]...))
			}},
		{name: "a trailing byte", want: "not a signed note",
			edit: func(t *testing.T, f string, s, _ []byte) { write(t, f, append(s, 'x')) }},
		{name: "too large", want: "bytes, at most",
			edit: func(t *testing.T, f string, s, _ []byte) {
				write(t, f, append(s, make([]byte, witness.MaxCheckpointSize)...))
			}},
		{name: "a directory", want: "is not a regular file",
			edit: func(t *testing.T, f string, _, _ []byte) {
				os.Remove(f)
				os.Mkdir(f, 0o700)
			}},
		{name: "another witness key", want: "holds the state of witness witness.example/w1 (key id", kind: witness.ErrConfig,
			config: func(c *witness.Config) { c.Key = testkit.Key(t, 201) }},
		{name: "another witness name", want: "holds the state of witness witness.example/w1 (key id", kind: witness.ErrConfig,
			config: func(c *witness.Config) { c.Name = "witness.example/w2" }},
		{name: "the log's key no longer configured", want: "its log signatures do not verify",
			config: func(c *witness.Config) { c.Logs = []string{other.vkey, b.vkey} }},
		{name: "a stray file", want: "not a file the witness writes",
			edit: func(t *testing.T, f string, _, _ []byte) {
				write(t, filepath.Join(filepath.Dir(f), "notes.txt"), []byte("x"))
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			w := newWitness(t, dir, a, b)
			for _, l := range []*testLog{a, b} {
				if _, err := w.AddCheckpoint(body(t, 0, nil, l.checkpoint(t, 5))); err != nil {
					t.Fatal(err)
				}
			}
			w.Close()
			file := filepath.Join(dir, "logs", witness.OriginHash(a.origin))
			state, _ := os.ReadFile(file)
			bstate, _ := os.ReadFile(filepath.Join(dir, "logs", witness.OriginHash(b.origin)))
			if tc.edit != nil {
				tc.edit(t, file, state, bstate)
			}
			cfg := witnessConfig(t, dir, a, b)
			if tc.config != nil {
				tc.config(&cfg)
			}
			_, err := witness.New(cfg)
			kind := tc.kind
			if kind == nil {
				kind = witness.ErrCorruptState
			}
			if !errors.Is(err, kind) || !strings.Contains(err.Error(), filepath.Join(dir, "logs")) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v\nwant %v naming the file and saying %q", err, kind, tc.want)
			}
		})
	}
}

// flipSig flips a bit in the signature (not the key id) of the i-th
// signature line of a signed note.
func flipSig(t *testing.T, signed []byte, i int) []byte {
	t.Helper()
	text, sigs, _ := strings.Cut(string(signed), "\n\n")
	lines := strings.Split(strings.TrimSuffix(sigs, "\n"), "\n")
	name, b64, _ := strings.Cut(strings.TrimPrefix(lines[i], "\u2014 "), " ")
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)-1] ^= 1
	lines[i] = "\u2014 " + name + " " + base64.StdEncoding.EncodeToString(raw)
	return []byte(text + "\n\n" + strings.Join(lines, "\n") + "\n")
}

func write(t *testing.T, f string, b []byte) {
	t.Helper()
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestInterruptedWrite: a leftover .tmp (a crash before the rename) is
// removed at startup and the state before it kept; a state file of a log
// no longer configured is left alone.
func TestInterruptedWrite(t *testing.T) {
	a := newTestLog(t, "example.com/a", 1).grow(t, "a", 5)
	b := newTestLog(t, "example.com/b", 5).grow(t, "b", 5)
	dir := t.TempDir()
	w := newWitness(t, dir, a, b)
	for _, l := range []*testLog{a, b} {
		if _, err := w.AddCheckpoint(body(t, 0, nil, l.checkpoint(t, 3))); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	tmp := filepath.Join(dir, "logs", witness.OriginHash(a.origin)+".tmp")
	write(t, tmp, []byte("half a checkpoint"))
	w2 := newWitness(t, dir, a) // b is no longer configured
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the leftover .tmp is still there: %v", err)
	}
	if _, size, err := w2.Checkpoint(a.origin); err != nil || size != 3 {
		t.Fatalf("state of a: %d, %v", size, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "logs", witness.OriginHash(b.origin))); err != nil {
		t.Fatalf("the state of b, no longer configured: %v", err)
	}
}

// TestStoreFailure: when the new state cannot be made durable the
// witness answers 500 and keeps the state it had.
func TestStoreFailure(t *testing.T) {
	a := newTestLog(t, "example.com/a", 1).grow(t, "a", 9)
	dir := t.TempDir()
	w := newWitness(t, dir, a)
	url := serve(t, w)
	if status, _, got := post(t, url, body(t, 0, nil, a.checkpoint(t, 4))); status != 200 {
		t.Fatalf("%d %q", status, got)
	}
	// A directory where the temporary file goes: the write fails.
	tmp := filepath.Join(dir, "logs", witness.OriginHash(a.origin)+".tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	status, ctype, got := post(t, url, body(t, 4, a.proof(t, 4, 9), a.checkpoint(t, 9)))
	if status != 500 || ctype != plainType || got != "internal error: the witness could not record the checkpoint\n" {
		t.Fatalf("%d %s %q", status, ctype, got)
	}
	if _, size, _ := w.Checkpoint(a.origin); size != 4 {
		t.Fatalf("after a failed write the witness holds %d, want 4", size)
	}
	os.Remove(tmp)
	if status, _, got := post(t, url, body(t, 4, a.proof(t, 4, 9), a.checkpoint(t, 9))); status != 200 {
		t.Fatalf("after the failure cleared: %d %q", status, got)
	}
}

// TestClosedAnswers503 and TestZeroTime: the last two answers.
func TestClosedAnswers503(t *testing.T) {
	a := newTestLog(t, "example.com/a", 1).grow(t, "a", 2)
	w := newWitness(t, t.TempDir(), a)
	url := serve(t, w)
	w.Close()
	status, ctype, got := post(t, url, body(t, 0, nil, a.checkpoint(t, 2)))
	if status != 503 || ctype != plainType || got != "witness is shutting down\n" {
		t.Fatalf("%d %s %q", status, ctype, got)
	}
}

func TestZeroTime(t *testing.T) {
	a := newTestLog(t, "example.com/a", 1).grow(t, "a", 2)
	cfg := witnessConfig(t, t.TempDir(), a)
	cfg.Now = func() time.Time { return time.Unix(0, 0) }
	w, err := witness.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.AddCheckpoint(body(t, 0, nil, a.checkpoint(t, 2))); !errors.Is(err, witness.ErrWitness) || !strings.Contains(err.Error(), "after 1970") {
		t.Fatalf("a zero timestamp: %v, want ErrWitness", err)
	}
	if _, _, err := w.Checkpoint(a.origin); !errors.Is(err, witness.ErrNotCosigned) {
		t.Fatalf("state after a refused cosignature: %v", err)
	}
}

// TestConfig: what New refuses.
func TestConfig(t *testing.T) {
	a := newTestLog(t, "example.com/a", 1)
	tests := []struct {
		name string
		edit func(*witness.Config)
		want string
	}{
		{"no logs", func(c *witness.Config) { c.Logs = nil }, "no log to witness"},
		{"a bad log key", func(c *witness.Config) { c.Logs = []string{"example.com/a+00000000+AAAA"} }, "log key"},
		{"a cosigner key as a log key", func(c *witness.Config) {
			c.Logs = []string{"w+8cde26c4+BGcpk2dhk1G7UchDaJk3yJ7gvbyH8ciUd5Cs26pm5CcO"}
		}, "log key"},
		{"the same key twice", func(c *witness.Config) { c.Logs = []string{a.vkey, a.vkey} }, "have the key id"},
		{"a name with a space", func(c *witness.Config) { c.Name = "w 1" }, "not a valid key name"},
		{"no name", func(c *witness.Config) { c.Name = "" }, "not a valid key name"},
		{"no key", func(c *witness.Config) { c.Key = nil }, "needs a key"},
		{"no directory", func(c *witness.Config) { c.Dir = "" }, "needs a key and a state directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := witnessConfig(t, t.TempDir(), a)
			tc.edit(&cfg)
			_, err := witness.New(cfg)
			if !errors.Is(err, witness.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v, want ErrConfig saying %q", err, tc.want)
			}
		})
	}
}
