package testvectors

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/writ-ledger/writ/schemas"
)

func loadFile(t *testing.T, name string) File {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("data", name))
	if err != nil {
		t.Fatal(err)
	}
	var f File
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return f
}

// TestVectorsUpToDate: the committed files are exactly what the committed
// generator writes (go run ./testvectors/generate).
func TestVectorsUpToDate(t *testing.T) {
	for name, want := range Build() {
		got, err := os.ReadFile(filepath.Join("data", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("data/%s is stale: run go run ./testvectors/generate", name)
		}
	}
	again, more := Build(), Build()
	for _, name := range []string{NegativeFile, AdmissionFile} {
		if !bytes.Equal(again[name], more[name]) {
			t.Errorf("the generator is not deterministic for %s", name)
		}
	}
}

// TestVectors: every vector gives its declared result through writ's own
// record path, and a valid vector decodes to the declared record.
func TestVectors(t *testing.T) {
	for _, name := range []string{RecordsFile, NegativeFile} {
		for _, v := range loadFile(t, name).Vectors {
			t.Run(v.Name, func(t *testing.T) {
				rec, err := Check(v)
				switch v.Expect {
				case "valid":
					if err != nil {
						t.Fatalf("want valid, got %s: %v", ClassOf(err), err)
					}
					got, _ := json.Marshal(rec)
					var want bytes.Buffer
					json.Compact(&want, v.Record)
					if !bytes.Equal(got, want.Bytes()) {
						t.Fatalf("decoded record\n %s\nwant\n %s", got, want.Bytes())
					}
				case "invalid":
					if err == nil {
						t.Fatalf("want invalid (%s), got valid", v.Error)
					}
					if got := ClassOf(err); got != v.Error {
						t.Fatalf("want class %s, got %s: %v", v.Error, got, err)
					}
					if rec != nil {
						t.Fatal("a refused vector returned a record")
					}
				default:
					t.Fatalf("expect %q", v.Expect)
				}
			})
		}
	}
}

// TestNegativeCoverage: the negative vectors cover every case issue 3
// names, and every record kind has a valid vector.
func TestNegativeCoverage(t *testing.T) {
	have := map[string]bool{}
	for _, v := range loadFile(t, NegativeFile).Vectors {
		have[v.Name] = true
	}
	for _, name := range []string{
		"payload-duplicate-key", "header-duplicate-key", "payload-indefinite-length", "envelope-trailing-bytes",
		"payload-unknown-field", "wrong-record-kind", "alg-es256", "kid-not-matching-key", "threshold-same-key-twice",
		"root-key-listed-twice", "threshold-signature-repeated", "root-threshold-0", "trusted-key-wrong-length",
		"root-key-small-order", "trusted-key-small-order", "declared-length-array", "declared-length-envelope",
	} {
		if !have[name] {
			t.Errorf("negative vector %s is missing", name)
		}
	}
	kinds := map[string]bool{}
	for _, v := range loadFile(t, RecordsFile).Vectors {
		kinds[v.Kind] = true
	}
	for _, k := range schemas.Kinds {
		if !kinds[string(k)] {
			t.Errorf("no valid vector for kind %s", k)
		}
	}
}

// TestHostileLengthsBounded: each 16-byte input that declares a huge
// length is refused with under 1 MiB allocated, through the whole path.
func TestHostileLengthsBounded(t *testing.T) {
	for _, v := range loadFile(t, NegativeFile).Vectors {
		if len(v.Input) != 32 { // 16 bytes, hex
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			const runs = 50
			for range runs {
				if _, err := Check(v); err == nil {
					t.Fatal("accepted")
				}
			}
			runtime.ReadMemStats(&after)
			if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > 1<<20 {
				t.Fatalf("%d bytes allocated per refusal, limit 1 MiB", per)
			}
		})
	}
}

// BenchmarkHostileLength reports the memory one 16-byte input declaring
// a 2^63-element array costs through Check (see B/op; the bound is 1 MiB,
// asserted by TestHostileLengthsBounded).
func BenchmarkHostileLength(b *testing.B) {
	v := Vector{Name: "bench", Kind: "instruction", Input: "9b7fffffffffffffff00000000000000"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Check(v); err == nil {
			b.Fatal("accepted")
		}
	}
}
