package witness_test

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/ledger/witness"
)

const (
	plainType = "text/plain; charset=utf-8"
	sizeType  = "text/x.tlog.size"
)

// withText returns signed with extra appended to its note text (the
// signatures unchanged).
func withText(signed []byte, extra string) []byte {
	text, sigs, _ := strings.Cut(string(signed), "\n\n")
	return []byte(text + extra + "\n\n" + sigs)
}

// TestAddCheckpointStatuses produces every answer of c2sp.org/tlog-witness
// add-checkpoint (and the HTTP ones around it) over real HTTP, with the
// exact status, Content-Type and body.
func TestAddCheckpointStatuses(t *testing.T) {
	a := newTestLog(t, "example.com/a", 1).grow(t, "a", 20)
	impostor := newTestLog(t, "example.com/a", 2).grow(t, "a", 20) // same origin, a key the witness does not trust
	unknown := newTestLog(t, "example.com/unknown", 3).grow(t, "u", 3)
	early := a.fork(t, 5).grow(t, "fork", 15) // diverges after leaf 5
	late := a.fork(t, 10).grow(t, "fork", 10) // diverges after leaf 10
	sig := regexp.MustCompile(`^\x{2014} witness\.example/w1 [A-Za-z0-9+/]{102}==\n$`)
	cp := func(l *testLog, size int64) []byte { return l.checkpoint(t, size) }
	tests := []struct {
		name   string
		before [][]byte // bodies that must be cosigned first
		method string
		path   string
		body   []byte
		status int
		ctype  string
		want   string // exact body; "" with status 200 means one cosignature line
	}{
		{name: "first checkpoint, old 0", body: body(t, 0, nil, cp(a, 5)), status: 200},
		{name: "with a consistency proof", before: [][]byte{body(t, 0, nil, cp(a, 5))},
			body: body(t, 5, a.proof(t, 5, 20), cp(a, 20)), status: 200},
		{name: "the same checkpoint again", before: [][]byte{body(t, 0, nil, cp(a, 5))},
			body: body(t, 5, nil, cp(a, 5)), status: 200},
		{name: "extension lines and a signature by an unknown key",
			body: body(t, 0, nil, signText(t, a.text(t, 7, "ext one", "ext two"), a.signer, impostor.signer)), status: 200},
		{name: "the empty tree", body: body(t, 0, nil, cp(a, 0)), status: 200},
		{name: "no old line", body: []byte("\n" + string(cp(a, 5))), status: 400, ctype: plainType,
			want: "malformed request: the first line is not \"old <size>\"\n"},
		{name: "old size with a leading zero", body: []byte("old 05\n\n" + string(cp(a, 5))), status: 400, ctype: plainType,
			want: "malformed request: the old size is not a decimal without leading zeros up to 2^56\n"},
		{name: "old size over 2^63-1", body: []byte("old 9223372036854775808\n\n" + string(cp(a, 5))), status: 400, ctype: plainType,
			want: "malformed request: the old size is not a decimal without leading zeros up to 2^56\n"},
		{name: "carriage return", body: []byte("old 0\r\n\n" + string(cp(a, 5))), status: 400, ctype: plainType,
			want: "malformed request: the old size is not a decimal without leading zeros up to 2^56\n"},
		{name: "proof line not base64", body: []byte("old 0\nnot-base64\n\n" + string(cp(a, 5))), status: 400, ctype: plainType,
			want: "malformed request: a proof line is not the base64 of a 32-byte hash\n"},
		{name: "64 proof lines", body: []byte("old 1\n" + strings.Repeat(base64.StdEncoding.EncodeToString(make([]byte, 32))+"\n", 64) + "\n" + string(cp(a, 5))),
			status: 400, ctype: plainType, want: "malformed request: more than 63 consistency proof lines\n"},
		{name: "no empty line", body: []byte("old 0\n"), status: 400, ctype: plainType,
			want: "malformed request: no empty line before the checkpoint\n"},
		{name: "size line with a leading zero", body: body(t, 0, nil, signText(t, "example.com/a\n05\n"+base64.StdEncoding.EncodeToString(make([]byte, 32))+"\n", a.signer)),
			status: 400, ctype: plainType, want: "malformed checkpoint: the size line is not a decimal without leading zeros up to 2^56\n"},
		{name: "control character in the note", body: body(t, 0, nil, withText(cp(a, 5), "\nx\x01")),
			status: 400, ctype: plainType, want: "malformed checkpoint: not a signed note\n"},
		{name: "old size above the checkpoint's", body: body(t, 6, nil, cp(a, 5)), status: 400, ctype: plainType,
			want: "old size larger than the checkpoint size\n"},
		{name: "unknown origin", body: body(t, 0, nil, cp(unknown, 3)), status: 404, ctype: plainType,
			want: "unknown log: the witness has no key for this checkpoint's origin\n"},
		{name: "no trusted signature", body: body(t, 0, nil, cp(impostor, 5)), status: 403, ctype: plainType,
			want: "no signature by a trusted key of this log is on the checkpoint\n"},
		{name: "a trusted key's signature fails", body: body(t, 0, nil, flipSig(t, cp(a, 5), 0)), status: 403, ctype: plainType,
			want: "a signature by a trusted key of this log does not verify\n"},
		{name: "old size is not the witness's", before: [][]byte{body(t, 0, nil, cp(a, 5))},
			body: body(t, 0, nil, cp(a, 9)), status: 409, ctype: sizeType, want: "5\n"},
		{name: "old size ahead of the witness", body: body(t, 3, a.proof(t, 3, 9), cp(a, 9)), status: 409, ctype: sizeType, want: "0\n"},
		{name: "size 0 with another root", body: body(t, 0, nil, signText(t, "example.com/a\n0\n"+base64.StdEncoding.EncodeToString(make([]byte, 32))+"\n", a.signer)),
			status: 422, ctype: plainType, want: "a checkpoint of size 0 must have the empty tree's root hash\n"},
		{name: "a proof with old size 0", body: body(t, 0, a.proof(t, 5, 9), cp(a, 9)), status: 422, ctype: plainType,
			want: "a consistency proof was given with old size 0\n"},
		{name: "a proof that fails", before: [][]byte{body(t, 0, nil, cp(a, 10))},
			body: body(t, 10, early.proof(t, 10, 20), cp(early, 20)), status: 422, ctype: plainType,
			want: "the consistency proof does not verify\n"},
		{name: "a proof of the wrong sizes", before: [][]byte{body(t, 0, nil, cp(a, 10))},
			body: body(t, 10, a.proof(t, 9, 20), cp(a, 20)), status: 422, ctype: plainType,
			want: "the consistency proof does not verify\n"},
		{name: "same size, another root", before: [][]byte{body(t, 0, nil, cp(a, 20))},
			body: body(t, 20, nil, cp(late, 20)), status: 422, ctype: plainType,
			want: "same size as the cosigned checkpoint with another root hash (or a non-empty proof)\n"},
		{name: "a body over 128 KiB", body: append([]byte("old 0\n\n"), bytes.Repeat([]byte("x"), witness.MaxRequestSize)...),
			status: 413, ctype: plainType, want: "request body larger than 131072 bytes\n"},
		{name: "GET add-checkpoint", method: http.MethodGet, status: 405, ctype: plainType, want: "add-checkpoint must be a POST\n"},
		{name: "another path", method: http.MethodPost, path: "/add-checkpoint/", body: body(t, 0, nil, cp(a, 5)), status: 404, ctype: plainType,
			want: "not found: the witness serves POST /add-checkpoint and GET /<sha256 hex of origin>/checkpoint\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWitness(t, t.TempDir(), a)
			url := serve(t, w)
			for _, b := range tc.before {
				if status, _, got := post(t, url, b); status != 200 {
					t.Fatalf("setup: %d %q", status, got)
				}
			}
			method, path := http.MethodPost, "/add-checkpoint"
			if tc.method != "" {
				method = tc.method
			}
			if tc.path != "" {
				path = tc.path
			}
			status, ctype, got := do(t, method, url+path, tc.body)
			if status != tc.status {
				t.Fatalf("status %d (%q), want %d", status, got, tc.status)
			}
			if status == 200 {
				if ctype != plainType || !sig.MatchString(got) {
					t.Fatalf("200 answer %q (%s), want one cosignature line (%s)", got, ctype, plainType)
				}
				req, err := witness.ParseRequest(tc.body)
				if err != nil {
					t.Fatal(err)
				}
				full := cosigned(t, w, req.Checkpoint, got)
				served, _, err := w.Checkpoint(a.origin)
				if err != nil {
					t.Fatal(err)
				}
				c, _ := witness.ParseCheckpoint(full)
				if !strings.HasPrefix(string(served), c.Text+"\n\u2014 example.com/a ") || !strings.HasSuffix(string(served), got) {
					t.Fatalf("the state served is\n%s\nwant the checkpoint, the log's signature and the cosignature\n%s", served, got)
				}
				return
			}
			if ctype != tc.ctype || got != tc.want {
				t.Fatalf("answer %q (%s), want %q (%s)", got, ctype, tc.want, tc.ctype)
			}
		})
	}
}

// TestMethodNotAllowed checks the Allow header of 405 answers.
func TestMethodNotAllowed(t *testing.T) {
	a := newTestLog(t, "example.com/a", 1).grow(t, "a", 3)
	url := serve(t, newWitness(t, t.TempDir(), a))
	for _, tc := range []struct{ method, path, allow string }{
		{http.MethodGet, "/add-checkpoint", "POST"},
		{http.MethodPut, "/add-checkpoint", "POST"},
		{http.MethodPost, "/" + witness.OriginHash(a.origin) + "/checkpoint", "GET, HEAD"},
	} {
		req, _ := http.NewRequest(tc.method, url+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 405 || resp.Header.Get("Allow") != tc.allow {
			t.Errorf("%s %s: %d, Allow %q; want 405, Allow %q", tc.method, tc.path, resp.StatusCode, resp.Header.Get("Allow"), tc.allow)
		}
	}
}

// TestMonitorCheckpoint: GET /<origin hash>/checkpoint serves the last
// cosigned checkpoint with the log's verified signature and the
// witness's cosignature, and nothing else; 404 before.
func TestMonitorCheckpoint(t *testing.T) {
	a := newTestLog(t, "example.com/a", 1).grow(t, "a", 9)
	other := newTestLog(t, "example.com/other", 4)
	w := newWitness(t, t.TempDir(), a)
	url := serve(t, w)
	path := url + "/" + witness.OriginHash(a.origin) + "/checkpoint"
	if status, ctype, got := do(t, http.MethodGet, path, nil); status != 404 || ctype != plainType ||
		got != "not cosigned: the witness never cosigned a checkpoint of this log\n" {
		t.Fatalf("before any cosignature: %d %s %q", status, ctype, got)
	}
	if status, _, got := do(t, http.MethodGet, url+"/"+witness.OriginHash(other.origin)+"/checkpoint", nil); status != 404 ||
		got != "no such log: the witness has no log of this origin hash\n" {
		t.Fatalf("an origin not configured: %d %q", status, got)
	}
	// The submitted checkpoint carries a second, unknown signature: it is
	// not kept.
	signed := signText(t, a.text(t, 9), a.signer, other.signer)
	status, _, line := post(t, url, body(t, 0, nil, signed))
	if status != 200 {
		t.Fatalf("%d %q", status, line)
	}
	logOnly := signText(t, a.text(t, 9), a.signer)
	want := string(logOnly) + line
	status, ctype, got := do(t, http.MethodGet, path, nil)
	if status != 200 || ctype != plainType || got != want {
		t.Fatalf("served %d %s\n%s\nwant\n%s", status, ctype, got, want)
	}
	if status, _, got := do(t, http.MethodGet, url+"/"+strings.ToUpper(witness.OriginHash(a.origin))+"/checkpoint", nil); status != 404 {
		t.Fatalf("an upper-case origin hash: %d %q", status, got)
	}
}
