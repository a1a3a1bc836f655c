package verify

import (
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/schemas"
)

// Created is a ledger NewLedger created: writ ledger init's JSON result.
type Created struct {
	VKey       string `json:"vkey" doc:"the checkpoint verifier key"`
	Origin     string `json:"origin" doc:"the log's origin"`
	RootDigest string `json:"root_digest" doc:"sha256:<hex> of the root record"`
	Index      int64  `json:"index" doc:"the root's index: 0"`
}

// NewLedger creates the ledger at d with root, a signed root record, as
// its first entry. The root is judged first, by the rules the ledger
// applies when it accepts it, at now (whole seconds, the checkpoints'
// resolution), before anything is made; only then is key called for the
// checkpoint key (so that a passphrase is asked for only for a root the
// ledger would accept), and the ledger made with InitAuthority (nothing
// is left when that fails). An empty origin is a new one
// (ledgerdir.NewOrigin). The authority log is closed again. Errors: the
// root's refusal (a *delegation.RecordError and the like) as a
// *ledgerdir.FirstEntryError; key's error as it is; else those of
// ledgerdir.Dir.Init (a directory that is not empty, an origin out of
// range, sign.ErrExists and kin).
func NewLedger(d ledgerdir.Dir, origin string, root []byte, now time.Time, key func() (ledgerdir.NewKey, error)) (*Created, error) {
	if _, err := delegation.NewState().Apply(root, time.Unix(now.Unix(), 0)); err != nil {
		return nil, &ledgerdir.FirstEntryError{Err: err}
	}
	if origin == "" {
		origin = ledgerdir.NewOrigin()
	}
	k, err := key()
	if err != nil {
		return nil, err
	}
	a, err := InitAuthority(d, origin, k, root)
	if err != nil {
		return nil, err
	}
	defer a.Log.Close()
	return &Created{VKey: a.Log.VerifierKey(), Origin: origin, RootDigest: schemas.SHA256Digest(root)}, nil
}
