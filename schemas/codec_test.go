package schemas

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

func sampleInstruction() *Instruction {
	return &Instruction{V: 1, ID: strings.Repeat("ab", 16), Stream: "demo", Machine: "runner-1",
		Agent: ArtifactRef{Name: "agent"}, Transport: "ssh", IssuedAt: 1795000000, NotBefore: 1795000000, Expires: 1795003600}
}

// instructionMap is the same instruction as a generic map, so that tests
// can add, drop and rename keys; Marshal sorts it canonically.
func instructionMap() map[string]any {
	return map[string]any{"v": 1, "id": strings.Repeat("ab", 16), "stream": "demo", "machine": "runner-1",
		"agent": map[string]any{"name": "agent"}, "transport": "ssh", "issued_at": 1795000000,
		"not_before": 1795000000, "expires": 1795003600}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestInstructionMapMatchesStruct(t *testing.T) {
	a := mustMarshal(t, sampleInstruction())
	b := mustMarshal(t, instructionMap())
	if !bytes.Equal(a, b) {
		t.Fatalf("struct and map encodings differ:\n%x\n%x", a, b)
	}
	rec, err := Decode(KindInstruction, a)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustMarshal(t, rec); !bytes.Equal(got, a) {
		t.Fatal("decode-encode is not the identity")
	}
}

// TestStrictDecoding: each hostile or sloppy encoding is refused with
// ErrMalformed, and with the specific sentinel where there is one.
func TestStrictDecoding(t *testing.T) {
	canonical := mustMarshal(t, instructionMap())
	with := func(k string, v any) []byte {
		m := instructionMap()
		m[k] = v
		return mustMarshal(t, m)
	}
	without := func(k string) map[string]any {
		m := instructionMap()
		delete(m, k)
		return m
	}
	renamed := without("id")
	renamed["ID"] = strings.Repeat("ab", 16)
	// "v":1 is encoded a1 61 76 01; the same map with v as 0x18 0x01
	// (a non-shortest integer) is the same value, not the same bytes.
	nonShortest := bytes.Replace(canonical, []byte{0x61, 'v', 0x01}, []byte{0x61, 'v', 0x18, 0x01}, 1)
	// Duplicate key: an 8-entry map whose first two entries share a key.
	dup := append([]byte{0xa2}, []byte{0x61, 'v', 0x01, 0x61, 'v', 0x01}...)
	// Indefinite-length map holding "v": 1.
	indef := []byte{0xbf, 0x61, 'v', 0x01, 0xff}
	// A tagged value (tag 1, epoch time) where an integer is expected.
	tagged := with("expires", nil)
	tagged = bytes.Replace(tagged, []byte{0x67, 'e', 'x', 'p', 'i', 'r', 'e', 's', 0xf6}, []byte{0x67, 'e', 'x', 'p', 'i', 'r', 'e', 's', 0xc1, 0x1a, 0x6a, 0xfd, 0x3e, 0x10}, 1)
	badUTF8 := bytes.Replace(canonical, []byte("demo"), []byte{'d', 0xff, 'm', 'o'}, 1)

	tests := []struct {
		name string
		in   []byte
		want error
		msg  string // a fragment the error must contain
	}{
		{"trailing byte", append(bytes.Clone(canonical), 0x00), ErrTrailingData, "extraneous data"},
		{"unknown field", with("extra", 1), ErrUnknownField, "unknown field"},
		{"field name in another case", mustMarshal(t, renamed), ErrUnknownField, "unknown field"},
		{"non-shortest integer", nonShortest, ErrNonCanonical, "deterministic"},
		{"explicitly empty optional field", with("brief", ""), ErrNonCanonical, "deterministic"},
		{"duplicate map key", dup, ErrDuplicateKey, "duplicate map key"},
		{"indefinite length", indef, ErrIndefinite, "indefinite-length"},
		{"tag", tagged, ErrTag, "tag isn't allowed"},
		{"invalid UTF-8", badUTF8, ErrInvalidUTF8, "UTF-8"},
		{"unknown schema version", with("v", 2), ErrUnknownVersion, "v=2"},
		{"missing version", mustMarshal(t, without("v")), ErrMalformed, `"v" (schema version) is missing`},
		{"truncated", canonical[:len(canonical)-3], ErrNotWellFormed, "unexpected EOF"},
		{"integer where a string belongs", with("stream", 7), ErrWrongCBORType, "cannot unmarshal"},
		{"oversize", bytes.Repeat([]byte{0}, MaxRecordSize+1), ErrTooLarge, "larger than the 65535-byte limit"},
		{"declared 2^32-element array", []byte{0x9a, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, ErrLimit, "max number of elements"},
		{"nested too deep", bytes.Repeat([]byte{0x81}, 20), ErrLimit, "max nested level"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := Decode(KindInstruction, tc.in)
			if !errors.Is(err, tc.want) || !errors.Is(err, ErrMalformed) {
				t.Fatalf("Decode = %v, want an error wrapping %v and ErrMalformed", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Decode = %v, want it to say %q", err, tc.msg)
			}
			if rec != nil {
				t.Fatalf("Decode returned a partial record %+v", rec)
			}
		})
	}
}

// TestHostileLengthAllocatesLittle: a 16-byte input declaring a huge array
// is refused before anything of that size is allocated.
func TestHostileLengthAllocatesLittle(t *testing.T) {
	hostile := []byte{0x9b, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range 100 {
		var v Instruction
		if err := Unmarshal(hostile, &v); !errors.Is(err, ErrMalformed) {
			t.Fatalf("Unmarshal = %v, want ErrMalformed", err)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / 100; per > 1<<20 {
		t.Fatalf("each refusal allocated %d bytes, limit 1 MiB", per)
	}
}

func TestFieldRules(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*Instruction)
		field string
	}{
		{"id not hex", func(i *Instruction) { i.ID = strings.Repeat("z", 32) }, "id"},
		{"stream with space", func(i *Instruction) { i.Stream = "a b" }, "stream"},
		{"machine starting with dash", func(i *Instruction) { i.Machine = "-x" }, "machine"},
		{"agent digest without algorithm", func(i *Instruction) { i.Agent.Digest = strings.Repeat("a", 64) }, "agent.digest"},
		{"agent digest SHA-384 (pins are SHA-256)", func(i *Instruction) { i.Agent.Digest = "sha384:" + strings.Repeat("a", 96) }, "agent.digest"},
		{"more provisioned files than MaxProvision", func(i *Instruction) {
			for n := range MaxProvision + 1 {
				i.Provision = append(i.Provision, Provision{Dest: fmt.Sprintf(".provision/f%03d", n), Digest: "sha256:" + strings.Repeat("a", 64), Size: 1})
			}
		}, "provision"},
		{"engine digest SHA-512", func(i *Instruction) {
			i.Engine = &ArtifactRef{Name: "engine", Digest: "sha512:" + strings.Repeat("a", 128)}
		}, "engine.digest"},
		{"transport", func(i *Instruction) { i.Transport = "http" }, "transport"},
		{"window reversed", func(i *Instruction) { i.Expires = i.NotBefore }, "expires"},
		{"brief not UTF-8", func(i *Instruction) { i.Brief = "\xff" }, "brief"},
		{"claim session empty", func(i *Instruction) { i.Claim = &Claim{Until: i.IssuedAt + 60} }, "claim.session"},
		{"claim session with slash", func(i *Instruction) { i.Claim = &Claim{Session: "a/b", Until: i.IssuedAt + 60} }, "claim.session"},
		{"claim until before issued_at", func(i *Instruction) { i.Claim = &Claim{Session: "s1", Until: i.IssuedAt} }, "claim.until"},
		{"claim over 30 days", func(i *Instruction) { i.Claim = &Claim{Session: "s1", Until: i.IssuedAt + MaxClaimSeconds + 1} }, "claim.until"},
		{"claim until zero", func(i *Instruction) { i.Claim = &Claim{Session: "s1"} }, "claim.until"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := sampleInstruction()
			tc.edit(in)
			err := in.Validate()
			var fe *FieldError
			if !errors.As(err, &fe) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("Validate = %v, want a *FieldError wrapping ErrInvalid", err)
			}
			if fe.Field != tc.field || fe.Kind != KindInstruction {
				t.Fatalf("FieldError names %s.%s, want instruction.%s", fe.Kind, fe.Field, tc.field)
			}
		})
	}
}

func TestRootRules(t *testing.T) {
	k1, k2 := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	base := func() *Root {
		return &Root{V: 1, Version: 1, Keys: [][]byte{k1, k2}, Threshold: 2, IssuedAt: 1, Expires: 2}
	}
	tests := []struct {
		name  string
		edit  func(*Root)
		field string
	}{
		{"threshold 0", func(r *Root) { r.Threshold = 0 }, "threshold"},
		{"threshold above n", func(r *Root) { r.Threshold = 3 }, "threshold"},
		{"same key twice", func(r *Root) { r.Keys = [][]byte{k1, k1} }, "keys"},
		{"unsorted keys", func(r *Root) { r.Keys = [][]byte{k2, k1} }, "keys"},
		{"31-byte key", func(r *Root) { r.Keys = [][]byte{k1[:31], k2} }, "keys"},
		{"expires before issue", func(r *Root) { r.Expires = 1 }, "expires"},
	}
	if err := base().Validate(); err != nil {
		t.Fatalf("base root: %v", err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := base()
			tc.edit(r)
			var fe *FieldError
			if err := r.Validate(); !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("Validate = %v, want a FieldError on %s", err, tc.field)
			}
		})
	}
}

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"*", "runner-1", true},
		{"*", "team/a", false}, // '*' never crosses '/'
		{"team/*", "team/a", true},
		{"team/*", "team/a/b", false},
		{"runner-*", "runner-7", true},
		{"runner-*", "Runner-7", false},
		{"demo", "demo", true},
		{"demo", "demo2", false},
	}
	for _, tc := range tests {
		if got := Match(tc.pattern, tc.name); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}

func TestKindFromContentType(t *testing.T) {
	for _, k := range Kinds {
		if got, ok := KindFromContentType(k.ContentType()); !ok || got != k {
			t.Errorf("round trip of %s failed", k)
		}
	}
	for _, ct := range []string{"", "application/vnd.writ.Pin+cbor", "application/vnd.writ.witness+cbor", "application/cbor", "application/vnd.writ.pin+cbor; v=1"} {
		if _, ok := KindFromContentType(ct); ok {
			t.Errorf("KindFromContentType(%q) accepted", ct)
		}
	}
}

func TestCheckCanonicalAndWellFormed(t *testing.T) {
	for _, tc := range []struct {
		hex       string
		canonical bool
	}{
		{"f93c00", true},              // 1.0 as half float
		{"fb3ff0000000000000", false}, // 1.0 as double: not the shortest
		{"f98000", true},              // -0.0
		{"fb8000000000000000", false},
		{"a201000200", true},
		{"a202000100", false}, // unsorted keys
	} {
		b, _ := hexDecode(tc.hex)
		if err := CheckCanonical(b); (err == nil) != tc.canonical {
			t.Errorf("CheckCanonical(%s) = %v, want canonical %v", tc.hex, err, tc.canonical)
		}
	}
	dup, _ := hexDecode("a201000100")
	if err := CheckWellFormed(dup); !errors.Is(err, ErrDuplicateKey) {
		t.Errorf("CheckWellFormed of a duplicate key = %v", err)
	}
}

func hexDecode(s string) ([]byte, error) { return hex.DecodeString(s) }
