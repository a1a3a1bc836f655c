package fileio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/internal/exitcode"
)

func exit2(t *testing.T, err error, want string) {
	t.Helper()
	var xe *exitcode.Error
	if !errors.As(err, &xe) || xe.Code != exitcode.Usage || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want exit 2 containing %q", err, want)
	}
}

func TestWriteNewNeverReplaces(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	if err := WriteNew(path, []byte("one")); err != nil {
		t.Fatal(err)
	}
	exit2(t, WriteNew(path, []byte("two")), "exists; writ does not overwrite files")
	if got, _ := os.ReadFile(path); string(got) != "one" {
		t.Errorf("the file holds %q, want %q", got, "one")
	}
	exit2(t, CheckOutput(nil, "html", path), "choose another --html")
	exit2(t, CheckOutput(nil, "out", filepath.Dir(path)), "is a directory")
	exit2(t, CheckOutput(nil, "out", ""), "--out is required")
	if err := CheckOutput(nil, "out", path+".new"); err != nil {
		t.Errorf("a new path: %v", err)
	}
}

func TestWriteOutputStdout(t *testing.T) {
	var out bytes.Buffer
	if err := WriteOutput(&out, "-", []byte("data")); err != nil || out.String() != "data" {
		t.Errorf("stdout holds %q (%v)", out.String(), err)
	}
	exit2(t, WriteOutput(&out, "", nil), "--out is required")
}

func TestReadInput(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "in")
	if err := os.WriteFile(path, []byte("12345"), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, over, err := ReadInput(nil, path, 3); err != nil || !over || string(data) != "1234" {
		t.Errorf("ReadInput over the limit: %q %v %v", data, over, err)
	}
	exit2(t, func() error { _, err := ReadWhole(nil, path, 3); return err }(), "larger than 3 bytes")
	if data, err := ReadWhole(strings.NewReader("stdin"), "-", 10); err != nil || string(data) != "stdin" {
		t.Errorf("stdin: %q %v", data, err)
	}
	_, err := ReadWhole(nil, dir, 10)
	exit2(t, err, dir+" is a directory; a file is expected here")
	_, err = ReadWhole(nil, filepath.Join(dir, "none"), 10)
	exit2(t, err, "no such file")
}

// TestStreamNew: a streamed output appears whole, only once written; a
// failed one leaves nothing (no file, no temporary file), and is never
// written over an existing file.
func TestStreamNew(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out")
	chunks := func(w io.Writer) error {
		for i := 0; i < 1000; i++ {
			if _, err := fmt.Fprintf(w, "chunk %d\n", i); err != nil {
				return err
			}
		}
		return nil
	}
	if err := StreamNew(path, chunks); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	_ = chunks(&want)
	if got, _ := os.ReadFile(path); !bytes.Equal(got, want.Bytes()) {
		t.Errorf("the file holds %d bytes, want %d", len(got), want.Len())
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v (%v), want 0644", fi.Mode(), err)
	}
	exit2(t, StreamNew(path, chunks), "exists; writ does not overwrite files")

	failed := filepath.Join(dir, "failed")
	boom := errors.New("boom")
	err := StreamNew(failed, func(w io.Writer) error {
		if err := chunks(w); err != nil {
			return err
		}
		return boom
	})
	if err != boom {
		t.Errorf("a failed write: %v, want write's own error as is", err)
	}
	if _, err := os.Lstat(failed); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed write left %s (%v)", failed, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".writ-out-*")); len(left) != 0 {
		t.Errorf("a failed write left temporary files %v", left)
	}
	var out bytes.Buffer
	if err := StreamOutput(&out, "-", chunks); err != nil || !bytes.Equal(out.Bytes(), want.Bytes()) {
		t.Errorf("stdout holds %d bytes (%v), want %d", out.Len(), err, want.Len())
	}
}

// TestStreamOutputPartial: a write that fails after bytes went to stdout
// says how many, as a *PartialOutputError wrapping write's error (its
// exit code kept); one that fails before any says nothing more.
func TestStreamOutputPartial(t *testing.T) {
	boom := exitcode.Refused(errors.New("boom"))
	var out bytes.Buffer
	err := StreamOutput(&out, "-", func(w io.Writer) error {
		if _, err := w.Write([]byte("header")); err != nil {
			return err
		}
		return boom
	})
	var pe *PartialOutputError
	if !errors.As(err, &pe) || pe.N != 6 || pe.To != "standard output" || !errors.Is(err, boom) || exitcode.Of(err).Code != exitcode.No {
		t.Fatalf("StreamOutput = %#v, want a *PartialOutputError of 6 bytes to standard output wrapping the refusal", err)
	}
	if want := "the 6 bytes written to standard output before the error are an incomplete output: discard them"; pe.Hint() != want {
		t.Errorf("hint %q, want %q", pe.Hint(), want)
	}
	out.Reset()
	if err := StreamOutput(&out, "-", func(io.Writer) error { return boom }); err != boom {
		t.Errorf("nothing written: %v, want write's error as is", err)
	}
}
