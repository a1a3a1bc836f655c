package main

// The JSON results of the commands whose result no library call returns:
// one struct each, its doc tags the documentation --help shows
// (jsonfields.go). These print with their keys sorted (emitSorted), as
// they did before they had types.

import (
	"encoding/json"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/jsonobject"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify"
)

// emitSorted prints result v as emit does, its top-level keys sorted.
func emitSorted(c *cli.Context, v any, human ...string) error {
	b, err := jsonobject.Sorted(v)
	if err != nil {
		return err
	}
	return emit(c, json.RawMessage(b), human...)
}

type keyIDResult struct {
	KeyID string `json:"key_id" doc:"the key id: 64 hex, SHA-256 of the public key's PKIX DER"`
}

type keyResult struct {
	keyIDResult
	PrivateKey string `json:"private_key" doc:"the private key file written, or the token URI"`
	PublicKey  string `json:"public_key" doc:"the public key file written"`
}

// recorded is the part of the result every command that writes a record
// prints; each one's result embeds it (finish fills it in).
type recorded struct {
	Kind   schemas.Kind `json:"kind" doc:"the record's kind"`
	Digest string       `json:"digest" doc:"sha256:<hex> of the bytes written"`
	Out    string       `json:"out" doc:"the file written"`
	Signed bool         `json:"signed" doc:"false for bare CBOR"`
}

func (r *recorded) base() *recorded { return r }

type rootResult struct {
	recorded
	Version uint64 `json:"version" doc:"the root version"`
}

type delegateResult struct {
	recorded
	Delegate string `json:"delegate" doc:"the delegate's key id"`
}

type revokeResult struct {
	recorded
	Target string `json:"target" doc:"what is revoked: a key id or a record digest"`
}

type issuerResult struct {
	recorded
	Issuer string `json:"issuer" doc:"the token issuer recorded"`
}

type quarantineResult struct {
	recorded
	Machine string `json:"machine" doc:"the machine quarantined or lifted"`
	Act     string `json:"act" doc:"quarantine or lift"`
}

type downgradeResult struct {
	recorded
	Artifact string `json:"artifact" doc:"the artifact allowed back"`
	Version  string `json:"version" doc:"the version allowed back"`
}

type pinResult struct {
	recorded
	Artifact     string         `json:"artifact" doc:"the artifact pinned"`
	Version      string         `json:"version" doc:"its version"`
	Platform     string         `json:"platform" doc:"GOOS/GOARCH"`
	BinaryDigest string         `json:"binary_digest" doc:"sha256:<hex> of the binary"`
	Size         uint64         `json:"size" doc:"the binary's size in bytes"`
	Build        *schemas.Build `json:"build" doc:"the Go build metadata pinned"`
}

type instructResult struct {
	recorded
	InstructionID string `json:"instruction_id" doc:"32 hex: the id admit and audit name it by"`
}

type initResult struct {
	vkeyResult
	RootDigest string `json:"root_digest" doc:"sha256:<hex> of the root record"`
	Index      int64  `json:"index" doc:"the root's index: 0"`
}

type vkeyResult struct {
	VKey   string `json:"vkey" doc:"the checkpoint verifier key"`
	Origin string `json:"origin" doc:"the log's origin"`
}

type appendResult struct {
	Index  int64        `json:"index" doc:"the record's index in the authority log"`
	Kind   schemas.Kind `json:"kind" doc:"the record's kind"`
	Digest string       `json:"digest" doc:"sha256:<hex> of the record"`
}

type checkpointResult struct {
	logResult
	Checkpoint string              `json:"checkpoint" doc:"the signed note with its cosignatures"`
	Witnessing *formats.Witnessing `json:"witnessing,omitempty" doc:"with --policy: the quorum that cosigned it"`
}

// logResult is one log's verified checkpoint.
type logResult struct {
	Log      string `json:"log" doc:"authority or decisions"`
	Origin   string `json:"origin" doc:"the log's origin"`
	Size     int64  `json:"size" doc:"entries"`
	RootHash string `json:"root_hash" doc:"the tree's root hash, hex"`
}

type verifiedResult struct {
	OK   bool        `json:"ok" doc:"true"`
	Logs []logResult `json:"logs" doc:"each log's log, origin, size, root_hash"`
}

type verifyFailedResult struct {
	OK    bool   `json:"ok" doc:"false"`
	Log   string `json:"log" doc:"the log that failed"`
	Index int64  `json:"index" doc:"the entry that failed"`
	Error string `json:"error" doc:"why"`
}

type exportResult struct {
	Out   string   `json:"out" doc:"the file written"`
	Bytes int      `json:"bytes" doc:"its size"`
	Logs  []string `json:"logs" doc:"the section names"`
}

type importResult struct {
	Log       string `json:"log" doc:"authority or decisions"`
	Origin    string `json:"origin" doc:"the log's origin"`
	Before    int64  `json:"before" doc:"entries before"`
	After     int64  `json:"after" doc:"entries after"`
	Recovered int64  `json:"recovered" doc:"entries an interrupted import left and this one dropped"`
	RootHash  string `json:"root_hash" doc:"the imported tree's root hash, hex"`
}

type proveResult struct {
	Index    int64    `json:"index" doc:"the entry"`
	TreeSize int64    `json:"tree_size" doc:"the tree proven into"`
	LeafHash string   `json:"leaf_hash" doc:"hex"`
	RootHash string   `json:"root_hash" doc:"hex"`
	Proof    []string `json:"proof" doc:"hashes, hex, RFC 9162 §2.1.3"`
}

type entryResult struct {
	Index  int64  `json:"index" doc:"the entry"`
	Out    string `json:"out" doc:"the file written"`
	Bytes  int    `json:"bytes" doc:"the entry's size"`
	Digest string `json:"digest" doc:"sha256:<hex> of the entry"`
}

type receiptResult struct {
	Index     int64  `json:"index" doc:"the entry"`
	TreeSize  int64  `json:"tree_size" doc:"the tree it is proven into"`
	Out       string `json:"out" doc:"the file written"`
	Digest    string `json:"digest" doc:"sha256:<hex> of the receipt"`
	Witnessed bool   `json:"witnessed" doc:"whether --policy's quorum cosigned its checkpoint"`
}

type receiptValid struct {
	Valid          bool                `json:"valid" doc:"true"`
	Index          int64               `json:"index" doc:"the entry, as the receipt says (not signed)"`
	TreeSize       int64               `json:"tree_size" doc:"the tree size, as the receipt says (not signed)"`
	PositionSigned bool                `json:"position_signed" doc:"false: RFC 9942 signs the root only"`
	RootHash       string              `json:"root_hash" doc:"the signed root hash, hex"`
	Witnessing     *formats.Witnessing `json:"witnessing,omitempty" doc:"with --policy: the quorum that cosigned the receipt's checkpoint"`
}

type listenResult struct {
	Listen  string `json:"listen" doc:"the host:port it listens on"`
	Message string `json:"message" doc:"the banner"`
}

// ruleResult is one rule of writ admit --rules.
type ruleResult struct {
	Rule     string       `json:"rule" doc:"the rule id"`
	Class    verify.Class `json:"class" doc:"its class"`
	Governed bool         `json:"governed" doc:"whether --mode governs it (else it refuses in every mode)"`
	Summary  string       `json:"summary" doc:"what it checks"`
	NextAct  string       `json:"next_act" doc:"what the operator does when it fails"`
}

type cosignResult struct {
	Origin     string   `json:"origin" doc:"the log's origin"`
	Size       int64    `json:"size" doc:"the checkpoint's size"`
	Signatures []string `json:"signatures" doc:"the witness's cosignature lines"`
}

type witnessCheckpointResult struct {
	Origin     string `json:"origin" doc:"the log's origin"`
	Checkpoint string `json:"checkpoint" doc:"the witness's latest cosigned checkpoint of that log as served, not verified here"`
}
