package main

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"filippo.io/age"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// The commands below let a script hold keys whose secrets the test knows
// and sign records the CLI would never write (a back-dated act, a payload
// that is not the record its envelope names): a hostile signer's inputs,
// made with the product's own key files and signing code.

// cmdTestKey writes PREFIX.key (age/scrypt under $WRIT_PASSPHRASE) and
// PREFIX.pub for the deterministic key whose 32-byte seed is SEED
// repeated, the key seal-record and seal-raw sign with:
// testkey SEED PREFIX
func cmdTestKey(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: testkey SEED PREFIX")
	}
	seed := seedByte(ts, args[0])
	to, err := sign.ScryptRecipient([]byte(ts.Getenv("WRIT_PASSPHRASE")), 10)
	ts.Check(err)
	_, err = sign.GenerateKeyFiles(ts.MkAbs(args[1]), []age.Recipient{to}, bytes.NewReader(bytes.Repeat([]byte{seed}, ed25519.SeedSize)))
	ts.Check(err)
}

func seedByte(ts *testscript.TestScript, s string) byte {
	n, err := strconv.ParseUint(s, 10, 8)
	if err != nil || n == 0 {
		ts.Fatalf("seed %q: 1 to 255", s)
	}
	return byte(n)
}

// testKey returns the private key for seed, as testkit.Key does.
func testKey(ts *testscript.TestScript, s string) *sign.PrivateKey {
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seedByte(ts, s)}, ed25519.SeedSize))
	signer, err := signature.LoadED25519Signer(priv)
	ts.Check(err)
	k, err := sign.NewPrivateKey(signer)
	ts.Check(err)
	return k
}

// timeFields are the record fields that hold Unix seconds; in a
// seal-record JSON file they may be written as a duration from now
// ("-48h", "0s") or an RFC 3339 time instead.
var timeFields = map[string]bool{"issued_at": true, "not_before": true, "not_after": true, "expires": true, "until": true, "time": true}

// cmdSealRecord encodes the record in JSONFILE (the record's JSON form,
// times as durations from now allowed, a key written "seed:N" for that
// test key's raw public key, "keyid:N" for its key id) strictly with
// schemas.Encode, signs it with
// the test keys of the seeds given and writes the envelope to OUT:
// seal-record KIND JSONFILE OUT SEED...
func cmdSealRecord(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 4 {
		ts.Fatalf("usage: seal-record KIND JSONFILE OUT SEED...")
	}
	rec := schemas.New(schemas.Kind(args[0]))
	if rec == nil {
		ts.Fatalf("unknown kind %q", args[0])
	}
	var fields map[string]any
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[1])), &fields))
	resolve(ts, fields, time.Now())
	b, err := json.Marshal(fields)
	ts.Check(err)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	ts.Check(dec.Decode(rec))
	payload, err := schemas.Encode(rec)
	ts.Check(err)
	writeSealed(ts, rec.Kind(), payload, args[2], args[3:])
}

// cmdSealRaw signs the bytes of PAYLOADFILE as they are, under the content
// type of KIND, with the test keys of the seeds given:
// seal-raw KIND PAYLOADFILE OUT SEED...
func cmdSealRaw(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 4 {
		ts.Fatalf("usage: seal-raw KIND PAYLOADFILE OUT SEED...")
	}
	writeSealed(ts, schemas.Kind(args[0]), []byte(ts.ReadFile(args[1])), args[2], args[3:])
}

func writeSealed(ts *testscript.TestScript, kind schemas.Kind, payload []byte, out string, seeds []string) {
	var keys []*sign.PrivateKey
	for _, s := range seeds {
		keys = append(keys, testKey(ts, s))
	}
	env, err := sign.Sign(kind, payload, keys...)
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(out), env, 0o644))
}

// resolve rewrites, in place, time fields given as text and keys given
// as "seed:N", recursively.
func resolve(ts *testscript.TestScript, v any, now time.Time) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if s, ok := val.(string); ok && timeFields[k] {
				x[k] = parseWhen(ts, s, now)
				continue
			}
			x[k] = resolveKey(ts, val)
			resolve(ts, x[k], now)
		}
	case []any:
		for i := range x {
			x[i] = resolveKey(ts, x[i])
			resolve(ts, x[i], now)
		}
	}
}

func resolveKey(ts *testscript.TestScript, v any) any {
	s, _ := v.(string)
	switch {
	case strings.HasPrefix(s, "seed:"):
		return base64.StdEncoding.EncodeToString(testKey(ts, strings.TrimPrefix(s, "seed:")).Public().Raw())
	case strings.HasPrefix(s, "keyid:"):
		return testKey(ts, strings.TrimPrefix(s, "keyid:")).Public().ID()
	}
	return v
}

func parseWhen(ts *testscript.TestScript, s string, now time.Time) int64 {
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(d).Unix()
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		ts.Fatalf("time %q: a duration from now or RFC 3339", s)
	}
	return t.Unix()
}

// cmdEncodeCBOR writes the JSON object in JSONFILE (times and keys as
// seal-record takes them, "keyid:N" for that test key's key id, numbers
// as integers) as deterministic CBOR,
// with no record rule applied: a payload any signer could make.
// encode-cbor JSONFILE OUT
func cmdEncodeCBOR(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: encode-cbor JSONFILE OUT")
	}
	dec := json.NewDecoder(strings.NewReader(ts.ReadFile(args[0])))
	dec.UseNumber()
	var fields map[string]any
	ts.Check(dec.Decode(&fields))
	resolve(ts, fields, time.Now())
	b, err := schemas.Marshal(integers(fields))
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), b, 0o644))
}

// integers turns json.Numbers into int64 and "b64:" strings into bytes.
func integers(v any) any {
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		if err != nil {
			panic(err)
		}
		return n
	case map[string]any:
		for k := range x {
			x[k] = integers(x[k])
		}
	case []any:
		for i := range x {
			x[i] = integers(x[i])
		}
	case string:
		if b, ok := strings.CutPrefix(x, "b64:"); ok {
			raw, err := base64.StdEncoding.DecodeString(b)
			if err != nil {
				panic(err)
			}
			return raw
		}
	}
	return v
}

// cmdRawAppend appends files to the authority log of a ledger with its
// checkpoint key (unlocked with $WRIT_PASSPHRASE) and no authority check:
// a writer who holds the key and skips writ's gate.
// raw-append LEDGERDIR FILE...
func cmdRawAppend(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: raw-append LEDGERDIR FILE...")
	}
	id, err := sign.ScryptIdentity([]byte(ts.Getenv("WRIT_PASSPHRASE")))
	ts.Check(err)
	dir := ts.MkAbs(args[0])
	key, err := sign.LoadPrivateKey(filepath.Join(dir, ledgerdir.CheckpointKey+".key"), id)
	ts.Check(err)
	l, err := ledger.Open(filepath.Join(dir, ledgerdir.AuthorityDir), key)
	ts.Check(err)
	defer l.Close()
	var entries [][]byte
	for _, f := range args[1:] {
		entries = append(entries, []byte(ts.ReadFile(f)))
	}
	_, err = l.Append(entries)
	ts.Check(err)
}
