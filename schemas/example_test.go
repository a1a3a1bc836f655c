package schemas_test

import (
	"errors"
	"fmt"

	"github.com/writ-ledger/writ/schemas"
)

// An instruction is encoded to its one deterministic encoding, decoded
// back strictly, and named by the digest of those bytes.
func ExampleEncode() {
	in := &schemas.Instruction{
		V:         schemas.SchemaVersion,
		ID:        "0123456789abcdef0123456789abcdef",
		Stream:    "demo",
		Machine:   "runner-1",
		Agent:     schemas.ArtifactRef{Name: "agent"},
		Transport: "ssh",
		IssuedAt:  1795946400, // 2026-11-29T10:00:00Z
		NotBefore: 1795946400,
		Expires:   1795950000, // an hour later, exclusive
	}
	data, err := schemas.Encode(in)
	if err != nil {
		fmt.Println(err)
		return
	}
	rec, err := schemas.Decode(schemas.KindInstruction, data)
	if err != nil {
		fmt.Println(err)
		return
	}
	out := rec.(*schemas.Instruction)
	fmt.Println(rec.Kind(), out.Stream, out.Machine, out.Agent.Name)
	fmt.Println(len(data), "bytes")
	fmt.Println(schemas.SHA256Digest(data))
	// Output:
	// instruction demo runner-1 agent
	// 146 bytes
	// sha256:6808eff31d4098e652f9c400854e897f46cc688df7de7f347b4348d5cd6040a2
}

// Bytes that are not exactly a canonical record are refused with one
// error, and no record: here, the encoding with one byte appended.
func ExampleDecode_trailingData() {
	in := &schemas.Instruction{V: 1, ID: "0123456789abcdef0123456789abcdef", Stream: "demo", Machine: "runner-1",
		Agent: schemas.ArtifactRef{Name: "agent"}, Transport: "local", IssuedAt: 1, NotBefore: 1, Expires: 2}
	data, err := schemas.Encode(in)
	if err != nil {
		fmt.Println(err)
		return
	}
	rec, err := schemas.Decode(schemas.KindInstruction, append(data, 0x00))
	fmt.Println(rec == nil, errors.Is(err, schemas.ErrMalformed), errors.Is(err, schemas.ErrTrailingData))
	// Output:
	// true true true
}
