package sign

import "github.com/writ-ledger/writ/schemas"

// EncodeRecord encodes rec as canonical CBOR (schemas.Encode) and, with
// keys, signs it as its kind (Sign: a COSE_Sign1 for one key, a COSE_Sign
// for several); with no keys it returns the bare CBOR, which is what an
// unsigned record is. Its errors are schemas.Encode's (a
// *schemas.FieldError for a field that breaks its rule) and Sign's.
func EncodeRecord(rec schemas.Record, keys ...*PrivateKey) ([]byte, error) {
	payload, err := schemas.Encode(rec)
	if err != nil || len(keys) == 0 {
		return payload, err
	}
	return Sign(rec.Kind(), payload, keys...)
}

// LoadPublicKeys loads each of paths as LoadPublicKey does, in order;
// the first error (naming its path) stops it. No paths: no keys, no
// error.
func LoadPublicKeys(paths []string) ([]PublicKey, error) {
	var out []PublicKey
	for _, p := range paths {
		k, err := LoadPublicKey(p)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

// PublicKeys returns the public key of each of keys, in order.
func PublicKeys(keys []*PrivateKey) []PublicKey {
	out := make([]PublicKey, len(keys))
	for i, k := range keys {
		out[i] = k.Public()
	}
	return out
}
