package main

// The JSON results of the commands whose result no library call returns:
// one struct each, its doc tags the documentation --help shows
// (jsonfields.go). These print with their keys sorted (emitSorted), as
// they did before they had types.

import (
	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/clicmd"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/provenance"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify/audit"
)

// emitSorted is clicmd.EmitSorted: emit with the top-level keys sorted.
func emitSorted(c *cli.Context, v any, human ...string) error {
	return clicmd.EmitSorted(c, v, human...)
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
	Artifact     string               `json:"artifact" doc:"the artifact pinned"`
	Version      string               `json:"version" doc:"its version"`
	Platform     string               `json:"platform" doc:"GOOS/GOARCH"`
	BinaryDigest string               `json:"binary_digest" doc:"sha256:<hex> of the binary"`
	Size         uint64               `json:"size" doc:"the binary's size in bytes"`
	Build        *schemas.Build       `json:"build" doc:"the Go build metadata pinned"`
	Provenance   *provenance.Attested `json:"provenance,omitempty" doc:"what the provenance attestation vouched for (--provenance), checked offline"`
}

type instructResult struct {
	recorded
	InstructionID string `json:"instruction_id" doc:"32 hex: the id admit and audit name it by"`
}

type vkeyResult struct {
	VKey   string `json:"vkey" doc:"the checkpoint verifier key"`
	Origin string `json:"origin" doc:"the log's origin"`
}

type checkpointResult struct {
	audit.LogSummary
	Checkpoint string              `json:"checkpoint" doc:"the signed note with its cosignatures"`
	Witnessing *formats.Witnessing `json:"witnessing,omitempty" doc:"with --policy: the quorum that cosigned it"`
}

type exportResult struct {
	Out   string   `json:"out" doc:"the file written"`
	Bytes int      `json:"bytes" doc:"its size"`
	Logs  []string `json:"logs" doc:"the section names"`
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

type listenResult struct {
	Listen  string `json:"listen" doc:"the host:port it listens on"`
	Message string `json:"message" doc:"the banner"`
}
