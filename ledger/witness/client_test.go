package witness_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/ledger/witness"
	"golang.org/x/mod/sumdb/tlog"
)

// TestClientAgainstWitness: the client's result for each answer of a
// real witness, over loopback HTTP.
func TestClientAgainstWitness(t *testing.T) {
	a := newTestLog(t, "example.com/a", 1).grow(t, "a", 20)
	impostor := newTestLog(t, "example.com/a", 2).grow(t, "a", 20)
	unknown := newTestLog(t, "example.com/unknown", 3).grow(t, "u", 2)
	w := newWitness(t, t.TempDir(), a)
	url := serve(t, w)
	c := &witness.Client{}
	ctx := context.Background()

	if _, err := c.Checkpoint(ctx, url, a.origin); !errors.Is(err, witness.ErrNotCosigned) {
		t.Fatalf("Checkpoint before any cosignature: %v, want ErrNotCosigned", err)
	}
	sig, err := c.AddCheckpoint(ctx, url, 0, nil, a.checkpoint(t, 8))
	if err != nil {
		t.Fatal(err)
	}
	want := cosigned(t, w, a.checkpoint(t, 8), string(sig))
	served, err := c.Checkpoint(ctx, url+"/", a.origin)
	if err != nil || string(served) != string(want) {
		t.Fatalf("Checkpoint: %v\n%s\nwant\n%s", err, served, want)
	}
	tests := []struct {
		name   string
		old    int64
		proof  tlog.TreeProof
		signed []byte
		kind   error
		status int
		line   string
	}{
		{"400", 9, nil, a.checkpoint(t, 8), witness.ErrBadRequest, 400, "old size larger than the checkpoint size"},
		{"403", 0, nil, impostor.checkpoint(t, 8), witness.ErrForbidden, 403, "no signature by a trusted key of this log is on the checkpoint"},
		{"404", 0, nil, unknown.checkpoint(t, 2), witness.ErrUnknownLog, 404, "unknown log: the witness has no key for this checkpoint's origin"},
		{"422", 8, a.proof(t, 7, 20), a.checkpoint(t, 20), witness.ErrInconsistent, 422, "the consistency proof does not verify"},
	}
	for _, tc := range tests {
		_, err := c.AddCheckpoint(ctx, url, tc.old, tc.proof, tc.signed)
		var re *witness.ResponseError
		if !errors.Is(err, tc.kind) || !errors.As(err, &re) || re.Status != tc.status || re.Line != tc.line {
			t.Errorf("%s: %v; want %v with status %d and line %q", tc.name, err, tc.kind, tc.status, tc.line)
		}
	}
	_, err = c.AddCheckpoint(ctx, url, 0, nil, a.checkpoint(t, 20))
	var conflict *witness.ConflictError
	if !errors.As(err, &conflict) || conflict.Size != 8 || !errors.Is(err, witness.ErrConflict) {
		t.Fatalf("409: %v, want a ConflictError at 8", err)
	}
	if _, err := c.AddCheckpoint(ctx, url, conflict.Size, a.proof(t, 8, 20), a.checkpoint(t, 20)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddCheckpoint(ctx, url, -1, nil, a.checkpoint(t, 20)); !errors.Is(err, witness.ErrBadRequest) {
		t.Fatalf("a negative old size: %v", err)
	}
}

// TestClientRefusesBadAnswers: what a witness (or whatever answers in
// its place) may not say to the client.
func TestClientRefusesBadAnswers(t *testing.T) {
	a := newTestLog(t, "example.com/a", 1).grow(t, "a", 3)
	okLine := "\u2014 witness.example/w1 " + strings.Repeat("A", 102) + "==\n"
	tests := []struct {
		name    string
		status  int
		ctype   string
		body    string
		want    error
		wantErr string
	}{
		{"409 without the size type", 409, "text/plain", "5\n", witness.ErrWitness, "Content-Type"},
		{"409 with a leading zero", 409, "text/x.tlog.size", "05\n", witness.ErrWitness, "not a tree size"},
		{"409 without the newline", 409, "text/x.tlog.size", "5", witness.ErrWitness, "not a tree size"},
		{"409 with a space", 409, "text/x.tlog.size", "5 \n", witness.ErrWitness, "not a tree size"},
		{"409 too large a size", 409, "text/x.tlog.size", "9223372036854775808\n", witness.ErrWitness, "not a tree size"},
		{"409 too long a body", 409, "text/x.tlog.size", strings.Repeat("1", 40) + "\n", witness.ErrWitness, "larger than"},
		{"200 empty", 200, "", "", witness.ErrWitness, "empty"},
		{"200 not a signature", 200, "", "hello\n", witness.ErrWitness, "not a signature line"},
		{"200 without the final newline", 200, "", strings.TrimSuffix(okLine, "\n"), witness.ErrWitness, "does not end in a newline"},
		{"200 bad base64", 200, "", "\u2014 w !!!!\n", witness.ErrWitness, "not the base64"},
		{"200 a name with a plus", 200, "", "\u2014 w+1 AAAAAAAA\n", witness.ErrWitness, "not a signature line"},
		{"200 too many lines", 200, "", strings.Repeat(okLine, 17), witness.ErrWitness, "17 signature lines"},
		{"200 too large", 200, "", strings.Repeat("x", 16*8192+1), witness.ErrWitness, "larger than"},
		{"500", 500, "text/plain", "disk full\nmore\n", witness.ErrWitness, `HTTP 500 Internal Server Error: "disk full"`},
		{"a redirect", 307, "text/plain", "", witness.ErrWitness, "HTTP 307"},
		{"an error line with control bytes", 403, "text/plain", "no\x1b[31m way\n", witness.ErrForbidden, `"no?[31m way"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				if tc.ctype != "" {
					rw.Header().Set("Content-Type", tc.ctype)
				}
				if tc.status == 307 {
					rw.Header().Set("Location", "https://elsewhere.example/add-checkpoint")
				}
				rw.WriteHeader(tc.status)
				rw.Write([]byte(tc.body))
			}))
			defer srv.Close()
			_, err := (&witness.Client{}).AddCheckpoint(context.Background(), srv.URL, 0, nil, a.checkpoint(t, 3))
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("%v\nwant %v saying %q", err, tc.want, tc.wantErr)
			}
		})
	}
	if sig, err := (&witness.Client{}).AddCheckpoint(context.Background(), serveBody(t, 200, okLine), 0, nil, a.checkpoint(t, 3)); err != nil || string(sig) != okLine {
		t.Fatalf("a well-formed answer: %q, %v", sig, err)
	}
}

func serveBody(t *testing.T, status int, body string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/add-checkpoint" {
			t.Errorf("request %s %s", r.Method, r.URL.Path)
		}
		rw.WriteHeader(status)
		rw.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestClientURLs: https, or http to loopback only; the prefix is joined
// with the path.
func TestClientURLs(t *testing.T) {
	a := newTestLog(t, "example.com/a", 1).grow(t, "a", 1)
	for _, u := range []string{
		"http://witness.example", "ftp://127.0.0.1", "https://", "127.0.0.1:8080",
		"https://user@witness.example", "https://witness.example/?q=1", "https://witness.example/#f",
		"http://10.0.0.1", "http://[::2]",
	} {
		_, err := (&witness.Client{}).AddCheckpoint(context.Background(), u, 0, nil, a.checkpoint(t, 1))
		if !errors.Is(err, witness.ErrWitness) {
			t.Errorf("%s: %v, want ErrWitness", u, err)
		}
		if _, err := (&witness.Client{}).Checkpoint(context.Background(), u, a.origin); !errors.Is(err, witness.ErrWitness) {
			t.Errorf("Checkpoint %s: %v, want ErrWitness", u, err)
		}
	}
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		got = r.URL.Path
		rw.WriteHeader(404)
	}))
	defer srv.Close()
	u := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/prefix/"
	(&witness.Client{}).AddCheckpoint(context.Background(), u, 0, nil, a.checkpoint(t, 1))
	if got != "/prefix/add-checkpoint" {
		t.Fatalf("request path %q", got)
	}
	_, err := (&witness.Client{}).Checkpoint(context.Background(), u, a.origin)
	if got != "/prefix/"+witness.OriginHash(a.origin)+"/checkpoint" || !errors.Is(err, witness.ErrNotCosigned) {
		t.Fatalf("request path %q, %v", got, err)
	}
}
