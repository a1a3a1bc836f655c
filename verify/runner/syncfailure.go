package runner

import (
	"errors"
	"fmt"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/ledger/tiles"
	"github.com/writ-ledger/writ/verify"
)

// SyncFailureKind says what a failed sync refuses, for a caller to give
// it an exit class.
type SyncFailureKind int

const (
	// SyncNotOpened: the replica could not be opened or written (a store
	// in use, damaged or unreadable): the error is Sync's own.
	SyncNotOpened SyncFailureKind = iota
	// SyncRefused: the published log, its checkpoint or its entries fail
	// a check (a verdict of no).
	SyncRefused
	// SyncRecordRefused: an entry's record is refused by the authority
	// replayed (a *delegation.RecordError, with its rule and next act).
	SyncRecordRefused
	// SyncBadInput: what was given cannot be used: a policy of another
	// log, a source that cannot be read, a key that is not the replica's.
	SyncBadInput
)

// SyncFailure is a failed sync (Replica.Sync, Replica.Watch) as a caller
// reports it: its kind, the error to print ("nothing synced: ..." but
// for a wrong key and a replica not opened, which are Sync's own error),
// and the next acts, in order.
type SyncFailure struct {
	Kind  SyncFailureKind
	Err   error
	Hints []string
}

// ClassifySync says what a sync's error refuses. A split view (a
// *replica.SplitViewError) and an inconsistency (a
// *ledger.InconsistencyError) carry both signed checkpoints as hint lines
// (replica.EvidenceLines).
func ClassifySync(err error) SyncFailure {
	nothing := fmt.Errorf("nothing synced: %w", err)
	var ie *ledger.InconsistencyError
	var re *delegation.RecordError
	var sv *replica.SplitViewError
	switch {
	case errors.As(err, &sv):
		return SyncFailure{SyncRefused, nothing,
			append(replica.EvidenceLines(sv.InconsistencyError, "the published signed checkpoint:", sv.Source+"'s signed checkpoint:"),
				"treat the log as split: its key signed both; stop trusting it until its operators explain them")}
	case errors.As(err, &ie):
		return SyncFailure{SyncRefused, nothing, replica.EvidenceLines(ie, "the replica's signed checkpoint:", "the published signed checkpoint:")}
	case errors.As(err, &re):
		return SyncFailure{SyncRecordRefused, nothing, nil}
	case errors.Is(err, replica.ErrSourceLog), errors.Is(err, formats.ErrCheckpointSignature), errors.Is(err, formats.ErrMalformedCheckpoint),
		errors.Is(err, ledger.ErrTampered), errors.Is(err, verify.ErrRootUntrusted), errors.Is(err, ledger.ErrHistory):
		return SyncFailure{SyncRefused, nothing, nil}
	case errors.Is(err, formats.ErrPolicyLog):
		return SyncFailure{SyncBadInput, nothing, []string{"give the policy of this log: its `log` line is the log's verifier key"}}
	case errors.Is(err, formats.ErrQuorum):
		return SyncFailure{SyncRefused, nothing, []string{
			"the writer collects its witnesses' cosignatures with `writ ledger checkpoint --refresh --policy`; sync again once they have cosigned",
			"if the writer asks other witnesses than this policy requires, the two policies must be made to agree"}}
	case errors.Is(err, tiles.ErrFetch):
		return SyncFailure{SyncBadInput, nothing, []string{"check --from; a source that stalls or sends more than a file can hold is cut off"}}
	case errors.Is(err, ledger.ErrWrongKey):
		return SyncFailure{SyncBadInput, err, nil}
	}
	return SyncFailure{SyncNotOpened, err, nil}
}
