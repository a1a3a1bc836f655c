package testvectors

import (
	"encoding/hex"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/veraison/go-cose"
	"github.com/writ-ledger/writ/sign"
)

type coseExample struct {
	Title string
	Fail  bool
	Input struct {
		Sign0 *struct {
			Key coseKey
		}
		Sign *struct {
			Signers []struct{ Key coseKey }
		}
	}
	Output struct{ CBOR string }
}

type coseKey struct {
	Kty, Crv string
	XHex     string `json:"x_hex"`
}

// TestCOSEWGExamples runs the COSE working group's signed examples
// (testdata/external/cose-wg-examples) through `writ verify`'s
// code path, sign.VerifyForeign. Ed25519 examples must give their declared
// result; examples with other algorithms (ES256, Ed448) must be refused,
// since writ verifies Ed25519 only, and are counted, not skipped.
func TestCOSEWGExamples(t *testing.T) {
	dir := filepath.Join(externalDir(t), "cose-wg-examples")
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no COSE examples under %s: %v", dir, err)
	}
	var ed25519Pass, ed25519Fail, unsupported int
	for _, f := range files {
		var ex coseExample
		readJSON(t, f, &ex)
		name := strings.TrimPrefix(f, dir+string(filepath.Separator))
		var keys []coseKey
		if ex.Input.Sign0 != nil {
			keys = append(keys, ex.Input.Sign0.Key)
		}
		if ex.Input.Sign != nil {
			for _, s := range ex.Input.Sign.Signers {
				keys = append(keys, s.Key)
			}
		}
		data, err := hex.DecodeString(ex.Output.CBOR)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		k := keys[0]
		if k.Kty != "OKP" || k.Crv != "Ed25519" {
			// writ keys are Ed25519 only, so the example's own key cannot be
			// loaded; verified against an Ed25519 key the envelope must be
			// refused, whatever its declared result.
			unsupported++
			_, err := sign.VerifyForeign(data, key(4).Public())
			if !errors.Is(err, sign.ErrAlgorithm) && !errors.Is(err, sign.ErrMalformedEnvelope) && !errors.Is(err, sign.ErrBadSignature) {
				t.Errorf("%s (%s): a %s/%s envelope gave %v under an Ed25519 key", name, ex.Title, k.Kty, k.Crv, err)
			}
			continue
		}
		pub, err := sign.NewPublicKey(unhex(t, k.XHex))
		if err != nil {
			t.Fatalf("%s: key: %v", name, err)
		}
		info, err := sign.VerifyForeign(data, pub)
		switch {
		case ex.Fail && err == nil:
			t.Errorf("%s (%s): declared fail, writ verified it", name, ex.Title)
		case !ex.Fail && err != nil:
			t.Errorf("%s (%s): declared pass, writ refused: %v", name, ex.Title, err)
		case !ex.Fail:
			ed25519Pass++
			if string(info.Payload) != "This is the content." {
				t.Errorf("%s: payload %q", name, info.Payload)
			}
			// One changed payload byte must fail.
			bad := []byte(strings.Replace(string(data), "This is the content.", "This is the contenT.", 1))
			if _, err := sign.VerifyForeign(bad, pub); !errors.Is(err, sign.ErrBadSignature) {
				t.Errorf("%s: a changed payload gave %v", name, err)
			}
		default:
			ed25519Fail++
		}
	}
	// eddsa-sig-01, eddsa-01, and the Ed25519 countersign examples.
	if ed25519Pass < 7 {
		t.Fatalf("only %d Ed25519 examples verified", ed25519Pass)
	}
	t.Logf("Ed25519 examples: %d verified as declared, %d refused as declared; %d other-algorithm examples refused", ed25519Pass, ed25519Fail, unsupported)
}

func TestVerifyForeignRefuses(t *testing.T) {
	k := key(4)
	good := sign1(header(map[int64]any{1: -8}), []byte{0xa0}, []byte("hello"), k)
	if _, err := sign.VerifyForeign(good, k.Public()); err != nil {
		t.Fatalf("a plain EdDSA COSE_Sign1: %v", err)
	}
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"other key", good, sign.ErrBadSignature},
		{"ES256 header", sign1(header(map[int64]any{1: -7}), []byte{0xa0}, []byte("hello"), k), sign.ErrAlgorithm},
		{"crit", sign1(header(map[int64]any{1: -8, 2: []any{int64(99)}, 99: 1}), []byte{0xa0}, []byte("hello"), k), sign.ErrMalformedEnvelope},
		{"trailing byte", append(append([]byte{}, good...), 0), sign.ErrMalformedEnvelope},
		{"untagged", good[1:], sign.ErrMalformedEnvelope},
	}
	for _, tc := range tests {
		pub := k.Public()
		if tc.name == "other key" {
			pub = key(5).Public()
		}
		if _, err := sign.VerifyForeign(tc.in, pub); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestVerifyForeignSignBounds(t *testing.T) {
	k, other := key(4), key(5)
	build := func(n int, critOnOther bool) []byte {
		m := cose.NewSignMessage()
		m.Payload = []byte("hello")
		var signers []cose.Signer
		for i := range n {
			s := cose.NewSignature()
			s.Headers.Protected = cose.ProtectedHeader{cose.HeaderLabelAlgorithm: cose.AlgorithmEdDSA}
			signer := foreignSigner{other}
			if i == n-1 {
				signer = foreignSigner{k}
			} else if critOnOther {
				s.Headers.Protected[cose.HeaderLabelCritical] = []any{int64(99)}
				s.Headers.Protected[int64(99)] = int64(1)
			}
			m.Signatures = append(m.Signatures, s)
			signers = append(signers, signer)
		}
		if err := m.Sign(nil, nil, signers...); err != nil {
			t.Fatal(err)
		}
		return must(m.MarshalCBOR())
	}
	if _, err := sign.VerifyForeign(build(2, true), k.Public()); err != nil {
		t.Fatalf("another signer's crit blocked a valid signature: %v", err)
	}
	if _, err := sign.VerifyForeign(build(sign.MaxSignatures+1, false), k.Public()); !errors.Is(err, sign.ErrMalformedEnvelope) {
		t.Fatalf("%d signatures: %v", sign.MaxSignatures+1, err)
	}
}

type foreignSigner struct{ k *sign.PrivateKey }

func (s foreignSigner) Algorithm() cose.Algorithm { return cose.AlgorithmEdDSA }
func (s foreignSigner) Sign(_ io.Reader, c []byte) ([]byte, error) {
	return s.k.SignMessage(c)
}
