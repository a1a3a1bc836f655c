package sign_test

import (
	"errors"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// TestVerifyForeignKind: an envelope is reported as a writ record kind
// only when its payload decodes strictly as that kind; a valid signature
// over anything else keeps the declared kind and the decoding error.
func TestVerifyForeignKind(t *testing.T) {
	k := testkit.Key(t, 1)
	rev, err := schemas.Encode(&schemas.Revocation{V: 1, Target: testkit.Key(t, 2).Public().ID(), Reason: "test", IssuedAt: 1})
	if err != nil {
		t.Fatal(err)
	}
	instr, err := schemas.Encode(testkit.Instruction("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		kind     schemas.Kind
		payload  []byte
		wantKind schemas.Kind
		wantErr  error // from decoding the payload; nil: it decodes
	}{
		{"an instruction", schemas.KindInstruction, instr, schemas.KindInstruction, nil},
		{"not CBOR", schemas.KindInstruction, []byte("hello, runner"), "", schemas.ErrMalformed},
		{"a revocation signed as an instruction", schemas.KindInstruction, rev, "", schemas.ErrUnknownField},
		{"an instruction signed as a pin", schemas.KindPin, instr, "", schemas.ErrMalformed},
		{"no writ content type", schemas.Kind("other"), []byte("hello"), "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env, err := sign.Sign(tc.kind, tc.payload, k)
			if err != nil {
				t.Fatal(err)
			}
			info, err := sign.VerifyForeign(env, k.Public())
			if err != nil {
				t.Fatalf("the signature does not verify: %v", err)
			}
			if info.Kind != tc.wantKind {
				t.Errorf("Kind = %q, want %q", info.Kind, tc.wantKind)
			}
			switch {
			case tc.wantErr == nil && info.RecordErr != nil:
				t.Errorf("RecordErr = %v, want none", info.RecordErr)
			case tc.wantErr != nil && !errors.Is(info.RecordErr, tc.wantErr):
				t.Errorf("RecordErr = %v, want %v", info.RecordErr, tc.wantErr)
			case tc.wantErr != nil && info.DeclaredKind != tc.kind:
				t.Errorf("DeclaredKind = %q, want %q", info.DeclaredKind, tc.kind)
			}
			// The results: valid only when the payload is what it
			// declares; otherwise the record result names both kinds.
			res := info.Result()
			if res.Valid != (tc.wantErr == nil) || res.Kind != string(tc.wantKind) || res.PayloadBytes != len(tc.payload) || res.KeyID != k.Public().ID() {
				t.Errorf("Result() = %+v", res)
			}
			if tc.wantErr != nil {
				if rr := info.RecordResult(); rr.Valid || !rr.SignatureValid || rr.RecordValid || rr.DeclaredKind != string(tc.kind) || rr.Error == "" {
					t.Errorf("RecordResult() = %+v", rr)
				}
			}
		})
	}
}
