package verify

import (
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/stateview"
	"github.com/writ-ledger/writ/sign"
	"github.com/writ-ledger/writ/verify/internal/replay"
	"golang.org/x/mod/sumdb/tlog"
)

// MaxClockSkew is how far a time a runner judges (an instruction's
// issued_at, a checkpoint's signed time) may lie after its own clock: the
// same skew the authority log allows between a record's issued_at and the
// time it accepted the record (delegation.MaxClockSkew).
const MaxClockSkew = delegation.MaxClockSkew

// Authority is an authority log together with the state its verified
// entries build. Append is safe for concurrent use: appends are batched
// (group commit) and checked in log order; signatures are verified by the
// appending goroutines, ahead of the batch.
type Authority struct {
	Log        *ledger.Log
	State      *delegation.State
	Checkpoint formats.Checkpoint
	// Key is the verifier key the log verified under, and KeyGiven
	// reports whether the reader gave it (OpenAuthority's Trust.VKey) or
	// took the one the ledger stores.
	Key      *formats.LogKey
	KeyGiven bool
	// Replayed, when not empty, says why the state the log persisted
	// could not be used and the whole log was replayed instead (a note
	// for the operator; the result is the same).
	Replayed string

	// persisted: the log's state index covers every entry State holds,
	// so the gate's appends keep it (and State's lookups go to it).
	persisted bool

	mu sync.RWMutex // guards State while the committer applies a batch
	// OnCommit, when set, is told the records of each batch that became
	// durable (the group commit's size), from the committer; set it
	// before the first Append.
	OnCommit func(records int)
	// inBatch, batchStart: a batch is open, and the state's size at its
	// start (the gate's first Mark after a Settle).
	inBatch    bool
	batchStart int64
	// proving: the items of the open batch whose callers want the
	// batch's checkpoint and their inclusion proofs (AppendProven),
	// proven by the gate's Settle.
	proving []*item
	// extendErr: Extend refused another writer's entry; every later
	// Extend returns it.
	extendErr error
}

// LoadAuthority returns the authority log's state, verified under k (nil:
// the key the log stores), at a cost that grows with what is new, not
// with the log: it extends the state the log persisted (stateview.Open:
// the signed checkpoint verified, the state's binding proven a prefix of
// it), replaying the records that changed the state and every entry past
// the binding, each proven into the signed tree and re-verified (its
// signatures and its signers' authority) at the time the log accepted
// it. A state it cannot use (none yet, a binding or index that does not
// match the log, an entry that does not verify) is never used: the whole
// log is verified and replayed instead (ledger.Log.Verify, its
// checkpoint history included; every entry's signatures and authority at
// its accepted time), and, on a log open for writing, the state is
// written again from that replay; Authority.Replayed says why. Any
// failure is returned with the entry's index: an *ledger.IntegrityError
// or a *delegation.RecordError; a checkpoint k did not sign is a
// *ledger.TrustError. A log without a checkpoint history is refused
// (ledger.ErrHistory): its entries' times cannot be judged. The returned
// Authority appends through log.
func LoadAuthority(log *ledger.Log, k *formats.LogKey) (*Authority, error) {
	if k == nil {
		k = log.Key()
	}
	if err := replay.RequireHistory(log); err != nil {
		return nil, err
	}
	a, err := loadPersisted(log, k)
	if err != nil {
		again, why := replayInstead(err)
		if !again {
			return nil, err
		}
		if a, err = loadReplayed(log, k); err != nil {
			return nil, err
		}
		a.Replayed = why
	}
	log.SetGate(gate{a})
	return a, nil
}

// ReplayNote is the note a command prints when LoadAuthority could not
// use the log's persisted state ("" when it did): why, and that the whole
// log was replayed (and the state written again, on a log open for
// writing).
func (a *Authority) ReplayNote() string {
	switch {
	case a.Replayed == "":
		return ""
	case a.Log.ReadOnly():
		return "the authority log's persisted state was not used (" + a.Replayed + "): the whole log was verified and replayed instead; the next command that writes the log writes the state again"
	}
	return "the authority log's persisted state was not used (" + a.Replayed + "): the whole log was verified and replayed instead, and the state written again from it"
}

// Append checks every record against the authority state, in order, as if
// the earlier ones had been appended, and appends them all in one durable
// batch (possibly shared with concurrent callers). If any record is
// refused, nothing of this call is appended and the error is an
// *AppendError whose Record is the refused record's position in entries,
// wrapping the *delegation.RecordError naming the rule (its message
// "record N of M: ..."). Each record is judged at the time its batch is
// accepted (delegation's time rule), the time the batch's checkpoint
// carries. It returns what was applied. Other errors are
// ledger.Log.AppendPrepared's.
func (a *Authority) Append(entries [][]byte) ([]*delegation.Applied, error) {
	items, preps := prepare(entries, a.State.Directory)
	if _, err := a.Log.AppendPrepared(entries, preps); err != nil {
		for i, it := range items {
			if it.refused {
				return nil, &AppendError{Record: i, Err: err}
			}
		}
		return nil, err
	}
	out := make([]*delegation.Applied, len(items))
	for i, it := range items {
		out[i] = it.applied
	}
	return out, nil
}

// AppendProven is Append for a caller that answers with proof (a writer
// service): it also returns, for each record, the signed checkpoint of
// the batch that holds it (as stored, without cosignatures) and the
// record's inclusion proof into that checkpoint's tree, read as soon as
// the batch is durable, before the next batch is written. Errors:
// Append's, and those of reading the checkpoint and the proofs (the
// records are then appended).
func (a *Authority) AppendProven(entries [][]byte) ([]*delegation.Applied, []Proven, error) {
	items, preps := prepare(entries, a.State.Directory)
	for _, it := range items {
		it.prove = true
	}
	if _, err := a.Log.AppendPrepared(entries, preps); err != nil {
		for i, it := range items {
			if it.refused {
				return nil, nil, &AppendError{Record: i, Err: err}
			}
		}
		return nil, nil, err
	}
	out := make([]*delegation.Applied, len(items))
	proofs := make([]Proven, len(items))
	for i, it := range items {
		out[i] = it.applied
		if it.proven == nil {
			return out, nil, fmt.Errorf("entry %d appended without its proof", it.applied.Index)
		} else if it.proven.Err != nil {
			return out, nil, it.proven.Err
		}
		proofs[i] = *it.proven
	}
	return out, proofs, nil
}

// Proven is an appended record's proof (AppendProven): the signed
// checkpoint of its batch, as stored, its body, and the record's
// inclusion proof (RFC 9162 §2.1.3) in that checkpoint's tree.
type Proven struct {
	Signed     []byte
	Checkpoint formats.Checkpoint
	Proof      []tlog.Hash
	Err        error // why it could not be read (the record is appended)
}

// proveBatch reads the log's latest checkpoint and each item's
// inclusion proof in its tree (one read, the root computed once).
func proveBatch(l *ledger.Log, items []*item) {
	signed, err := l.Checkpoint()
	var cp formats.Checkpoint
	if err == nil {
		cp, err = formats.OpenCheckpoint(signed, l.Key())
	}
	var proofs []*formats.InclusionProof
	if err == nil {
		indexes := make([]int64, len(items))
		for i, it := range items {
			indexes[i] = it.applied.Index
		}
		proofs, err = l.ProveInclusions(cp.Size, indexes...)
	}
	for i, it := range items {
		it.proven = &Proven{Signed: signed, Checkpoint: cp, Err: err}
		if err == nil {
			if proofs[i].RootHash != cp.Hash {
				it.proven.Err = fmt.Errorf("entry %d: the stored tree's root %x is not the checkpoint's %x", it.applied.Index, proofs[i].RootHash[:], cp.Hash[:])
			} else {
				it.proven.Proof = proofs[i].Path
			}
		}
	}
}

// verifying holds a token per core for the signature verification of
// Append's callers: more verifying goroutines than cores only lengthen the
// run queue the committer, Badger's writer and every fsync return wait in
// (with 64 appenders each verification finished later and every batch's
// commit waited behind them), without verifying any faster.
var verifying = make(chan struct{}, runtime.GOMAXPROCS(0))

// prepare parses and pre-verifies entries, holding a core's token.
func prepare(entries [][]byte, dir sign.KeyLookup) ([]*item, []any) {
	verifying <- struct{}{}
	defer func() { <-verifying }()
	preps := make([]any, len(entries))
	items := make([]*item, len(entries))
	for i, e := range entries {
		items[i] = &item{p: delegation.Prepare(e, dir)}
		preps[i] = items[i]
	}
	return items, preps
}

// item carries a prepared entry to the gate and its result back.
type item struct {
	p       *delegation.Prepared
	applied *delegation.Applied
	refused bool // the gate refused it
	prove   bool // AppendProven: Settle proves it into its batch's checkpoint
	proven  *Proven
}

// gate adapts the authority state to ledger.Gate.
type gate struct{ a *Authority }

func (g gate) Mark() int64 {
	g.a.mu.Lock()
	defer g.a.mu.Unlock()
	m := g.a.State.Mark()
	if !g.a.inBatch { // the committer marks a batch's start first
		g.a.inBatch, g.a.batchStart = true, m
	}
	return m
}

func (g gate) Reset(mark int64) {
	g.a.mu.Lock()
	defer g.a.mu.Unlock()
	g.a.State.Reset(mark)
	kept := g.a.proving[:0]
	for _, it := range g.a.proving {
		if it.applied.Index < mark {
			kept = append(kept, it)
		}
	}
	g.a.proving = kept
}

func (g gate) Settle() {
	g.a.mu.Lock()
	defer g.a.mu.Unlock()
	if len(g.a.proving) > 0 {
		// The batch is durable and the next one not begun: the log reads
		// without waiting for a commit in flight (a read begun during one
		// waits for its flushes).
		proveBatch(g.a.Log, g.a.proving)
		g.a.proving = g.a.proving[:0]
	}
	if n := g.a.State.Size() - g.a.batchStart; g.a.inBatch && n > 0 && g.a.OnCommit != nil {
		g.a.OnCommit(int(n))
	}
	g.a.inBatch = false
	g.a.State.Settle()
	if g.a.persisted {
		// What was applied is durable with its keys, or was reset.
		g.a.State.Persisted(stateview.NewIndex(g.a.Log))
	}
}

func (g gate) Admit(entry []byte, prepared any, accepted time.Time) (ledger.StateKeys, error) {
	it, _ := prepared.(*item)
	if it == nil {
		it = &item{p: delegation.Prepare(entry, nil)}
	}
	g.a.mu.Lock()
	defer g.a.mu.Unlock()
	applied, err := g.a.State.ApplyPrepared(it.p, accepted)
	if err != nil {
		it.refused = true
		return ledger.StateKeys{}, err
	}
	it.applied = applied
	if it.prove {
		g.a.proving = append(g.a.proving, it)
	}
	return stateKeys(applied), nil
}
