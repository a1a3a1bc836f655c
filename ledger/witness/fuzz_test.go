package witness

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger/formats"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// fuzzLog returns signed checkpoints of a small real log "example.com/f"
// at sizes 0 to 4, its proof from 2 to 4, and its verifier key.
func fuzzLog(t testing.TB) ([][]byte, tlog.TreeProof, string) {
	s, vkey, err := formats.NewNoteSigner("example.com/f", testkit.Key(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	var hashes []tlog.Hash
	r := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			out[i] = hashes[x]
		}
		return out, nil
	})
	var cps [][]byte
	for n := int64(0); n <= 4; n++ {
		root := emptyRoot
		if n > 0 {
			if root, err = tlog.TreeHash(n, r); err != nil {
				t.Fatal(err)
			}
		}
		c := formats.Checkpoint{Origin: "example.com/f", Size: n, Hash: root}
		b, err := note.Sign(&note.Note{Text: c.Body()}, s)
		if err != nil {
			t.Fatal(err)
		}
		cps = append(cps, b)
		h, err := tlog.StoredHashes(n, []byte{byte(n)}, r)
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, h...)
	}
	p, err := tlog.ProveTree(4, 2, r)
	if err != nil {
		t.Fatal(err)
	}
	return cps, p, vkey
}

// FuzzParseAddCheckpoint feeds request bodies to the parser and to a real
// witness: no panic; a body that parses re-serializes to the same bytes;
// a parsed checkpoint's text is the note's text; the witness either
// cosigns (with one line that verifies) or refuses with a sentinel.
func FuzzParseAddCheckpoint(f *testing.F) {
	cps, proof, vkey := fuzzLog(f)
	for _, s := range []struct {
		old   int64
		proof tlog.TreeProof
		cp    []byte
	}{{0, nil, cps[2]}, {2, proof, cps[4]}, {0, nil, cps[0]}, {3, nil, cps[1]}} {
		b, err := MarshalRequest(s.old, s.proof, s.cp)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("old 0\n\nexample.com/f\n1\nAAAA\next\n\n\u2014 example.com/f AAAAAAAA\n"))
	f.Add([]byte("old 18446744073709551616\n\n"))
	w, err := New(Config{Name: "w.example/fuzz", Key: testkit.Key(f, 9), Dir: f.TempDir(), Logs: []string{vkey},
		Now: func() time.Time { return testkit.Epoch }})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { w.Close() })
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := ParseRequest(body)
		if err == nil {
			again, err := MarshalRequest(r.OldSize, r.Proof, r.Checkpoint)
			if err != nil || !bytes.Equal(again, body) {
				t.Fatalf("%q parsed, but re-serializes to %q (%v)", body, again, err)
			}
			if c, err := ParseCheckpoint(r.Checkpoint); err == nil {
				if c.Size < 0 || !strings.HasSuffix(c.Text, "\n") || !bytes.HasPrefix(r.Checkpoint, []byte(c.Text+"\n")) {
					t.Fatalf("checkpoint %+v of %q", c, r.Checkpoint)
				}
			}
		}
		sig, err := w.AddCheckpoint(body)
		if err == nil {
			v, _ := formats.NewCosignerVerifier(w.VerifierKey())
			if _, err := v.Time(append(bytes.Clone(r.Checkpoint), sig...)); err != nil || bytes.Count(sig, []byte("\n")) != 1 {
				t.Fatalf("cosignature %q of %q: %v", sig, body, err)
			}
			return
		}
		var conflict *ConflictError
		if !errors.As(err, &conflict) && !errors.Is(err, ErrBadRequest) && !errors.Is(err, ErrUnknownLog) &&
			!errors.Is(err, ErrForbidden) && !errors.Is(err, ErrInconsistent) {
			t.Fatalf("%q: %v", body, err)
		}
	})
}

// FuzzClientConflict: a 409 body the client accepts is exactly a tree
// size in canonical decimal and a newline.
func FuzzClientConflict(f *testing.F) {
	for _, s := range []string{"0\n", "5\n", "05\n", "9223372036854775807\n", "9223372036854775808\n", "-1\n", "5", "+5\n", "5\r\n"} {
		f.Add(SizeContentType, []byte(s))
	}
	f.Add("text/x.tlog.size; charset=utf-8", []byte("7\n"))
	f.Add("text/plain", []byte("7\n"))
	f.Fuzz(func(t *testing.T, ctype string, body []byte) {
		n, err := parseConflict(ctype, body)
		if err != nil {
			return
		}
		if n < 0 || string(body) != strconv.FormatInt(n, 10)+"\n" {
			t.Fatalf("%q accepted as %d", body, n)
		}
	})
}

// FuzzClientSignatures: a 200 body the client accepts is 1 to 16 note
// signature lines that a note parser reads as signatures of a note.
func FuzzClientSignatures(f *testing.F) {
	cps, _, _ := fuzzLog(f)
	line := "\u2014 w.example/a " + strings.Repeat("A", 102) + "==\n"
	for _, s := range []string{line, line + line, "", "\n", "\u2014 a AAAAAAAA\n", "\u2014 a+b AAAAAAAA\n", "\u2014  AAAAAAAA\n", "\u2014 a AAAA\n", "- a AAAAAAAA\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if checkSignatureLines(body) != nil {
			return
		}
		lines := bytes.Count(body, []byte("\n"))
		if lines < 1 || lines > MaxSignatureLines || !bytes.HasPrefix(body, []byte("\u2014 ")) {
			t.Fatalf("%q accepted", body)
		}
		// The lines parse as a note's signatures: appended to a
		// checkpoint, note.Open finds no malformed line (it reports the
		// note unverified, with these lines among the unknown ones).
		_, err := note.Open(append(bytes.Clone(cps[1]), body...), note.VerifierList())
		var unverified *note.UnverifiedNoteError
		if !errors.As(err, &unverified) {
			t.Fatalf("%q accepted, but a note with it is malformed: %v", body, err)
		}
	})
}
