package testvectors

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/writ-ledger/writ/sign"
)

// externalDir is the directory of third-party vectors copied into the
// repository (testdata/external, each set with a SOURCE file naming its
// origin, commit and licence), so that a clone alone runs them. It fails
// the test if the directory is missing.
func externalDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join("testdata", "external")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("external vectors: %v", err)
	}
	return dir
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRFC8032: every RFC 8032 §7.1 signature verifies under its key
// through sign.PublicKey, and fails with one bit of the message changed.
func TestRFC8032(t *testing.T) {
	var vectors []struct {
		Name, PublicKey, Message, Signature string
	}
	readJSON(t, filepath.Join(externalDir(t), "rfc8032", "rfc8032_ed25519_section7.1.json"), &vectors)
	if len(vectors) == 0 {
		t.Fatal("no vectors")
	}
	for _, v := range vectors {
		k, err := sign.NewPublicKey(unhex(t, v.PublicKey))
		if err != nil {
			t.Fatalf("%s: key: %v", v.Name, err)
		}
		msg, sig := unhex(t, v.Message), unhex(t, v.Signature)
		if err := k.Verify(msg, sig); err != nil {
			t.Errorf("%s: %v", v.Name, err)
		}
		if err := k.Verify(append(msg, 0), sig); !errors.Is(err, sign.ErrBadSignature) {
			t.Errorf("%s: a changed message verified: %v", v.Name, err)
		}
	}
}

// TestWycheproofEd25519: all Wycheproof Ed25519 vectors give their
// declared result. A vector is "valid" for writ when the key loads (PEM
// PKIX, with writ's point checks) and the signature verifies.
func TestWycheproofEd25519(t *testing.T) {
	var file struct {
		NumberOfTests int
		TestGroups    []struct {
			PublicKeyPem string
			Tests        []struct {
				TcID    int `json:"tcId"`
				Comment string
				Msg     string
				Sig     string
				Result  string
			}
		}
	}
	readJSON(t, filepath.Join(externalDir(t), "wycheproof", "wycheproof_ed25519_test.json"), &file)
	n := 0
	for _, g := range file.TestGroups {
		k, keyErr := sign.ParsePublicKeyPEM([]byte(g.PublicKeyPem))
		for _, tc := range g.Tests {
			n++
			err := keyErr
			if err == nil {
				err = k.Verify(unhex(t, tc.Msg), unhex(t, tc.Sig))
			}
			switch tc.Result {
			case "valid":
				if err != nil {
					t.Errorf("tcId %d (%s): want valid, got %v", tc.TcID, tc.Comment, err)
				}
			case "invalid":
				if err == nil {
					t.Errorf("tcId %d (%s): want invalid, verified", tc.TcID, tc.Comment)
				}
			default:
				t.Errorf("tcId %d: result %q not understood", tc.TcID, tc.Result)
			}
		}
	}
	if n != file.NumberOfTests || n != 151 {
		t.Fatalf("ran %d vectors, the file declares %d", n, file.NumberOfTests)
	}
}

// TestDSSEIsNotCOSE: writ does not implement DSSE (its domain separation
// is COSE's Sig_structure, RFC 9052 §4.4), and the DSSE vector's key is
// ECDSA P-256, which writ refuses. What writ must do with a DSSE envelope
// is refuse it as malformed input, never misread it as a COSE envelope.
func TestDSSEIsNotCOSE(t *testing.T) {
	var v struct {
		PAE      string `json:"pae_utf8"`
		Envelope json.RawMessage
	}
	readJSON(t, filepath.Join(externalDir(t), "dsse", "dsse_pae_vector.json"), &v)
	if v.PAE == "" || len(v.Envelope) == 0 {
		t.Fatal("DSSE vector not understood")
	}
	anyKey := mustKey(t)
	for _, in := range [][]byte{v.Envelope, []byte(v.PAE)} {
		if _, err := sign.VerifyForeign(in, anyKey); !errors.Is(err, sign.ErrMalformedEnvelope) {
			t.Errorf("a DSSE input gave %v, want ErrMalformedEnvelope", err)
		}
		if _, err := sign.ParseEnvelope(in); !errors.Is(err, sign.ErrMalformedEnvelope) {
			t.Errorf("ParseEnvelope of a DSSE input gave %v", err)
		}
	}
}

func mustKey(t *testing.T) sign.PublicKey {
	t.Helper()
	return key(4).Public()
}
