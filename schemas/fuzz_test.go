package schemas

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// vectorInputs returns the inputs of the published vectors (and the
// payloads inside signed ones are reached by the envelope fuzzer), to seed
// the corpus.
func vectorInputs(f *testing.F) [][]byte {
	files, err := filepath.Glob(filepath.Join("..", "testvectors", "data", "*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no vector files to seed from: %v", err)
	}
	var out [][]byte
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		var file struct{ Vectors []struct{ Input string } }
		if err := json.Unmarshal(data, &file); err != nil {
			f.Fatal(err)
		}
		for _, v := range file.Vectors {
			b, err := hex.DecodeString(v.Input)
			if err != nil {
				f.Fatal(err)
			}
			if len(b) <= MaxRecordSize {
				out = append(out, b)
			}
		}
	}
	return out
}

// FuzzDecode: whatever Decode accepts, as any kind, re-encodes to exactly
// the input bytes; nothing panics.
func FuzzDecode(f *testing.F) {
	seeds := []Record{
		sampleInstruction(),
		&Root{V: 1, Version: 1, Keys: [][]byte{bytes.Repeat([]byte{1}, 32)}, Threshold: 1, IssuedAt: 1, Expires: 2},
		&Delegation{V: 1, Key: bytes.Repeat([]byte{2}, 32), Actions: []Action{"instruct", "pin"}, Streams: []string{"demo"},
			Machines: []string{"runner-*"}, Artifacts: []string{"agent"}, NotBefore: 1, NotAfter: 2, IssuedAt: 1},
		&Pin{V: 1, Artifact: "agent", Platform: "linux/amd64", Digest: "sha256:" + string(bytes.Repeat([]byte{'a'}, 64)),
			Size: 10, Version: "v1.0.0", Build: &Build{GoVersion: "go1.26", Path: "x", Modified: true}, IssuedAt: 1, Expires: 2},
		&Decision{V: 1, Time: 1, Machine: "m", Mode: "off", Verdict: "refused", Rule: "unsigned",
			InstructionDigest: "sha256:" + string(bytes.Repeat([]byte{'b'}, 64)), Failed: []string{"unsigned"}},
	}
	for _, r := range seeds {
		b, err := Encode(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, in := range vectorInputs(f) {
		f.Add(in)
	}
	f.Add([]byte{0xbf, 0x61, 'v', 0x01, 0xff})
	f.Add([]byte{0x9b, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, k := range Kinds {
			rec, err := Decode(k, data)
			if err != nil {
				if rec != nil {
					t.Fatalf("%s: error with a partial record", k)
				}
				continue
			}
			again, err := Encode(rec)
			if err != nil {
				t.Fatalf("%s: accepted record does not re-encode: %v", k, err)
			}
			if !bytes.Equal(again, data) {
				t.Fatalf("%s: accepted input is not canonical:\n in  %x\n out %x", k, data, again)
			}
		}
	})
}
