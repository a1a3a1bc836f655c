package ledger

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/tiles"
	"golang.org/x/mod/sumdb/tlog"
)

// Group commit limits. A batch closes when the queue is empty or when
// adding the next request would pass either bound; a single request larger
// than MaxBatchBytes is refused (ErrBatchTooLarge) without touching others.
const (
	// MaxBatchEntries bounds the entries of one durable transaction.
	MaxBatchEntries = 4096
	// MaxBatchBytes bounds the entry bytes of one durable transaction,
	// inside Badger's transaction limit (15% of the 16 MiB memtable, keys
	// and tree hashes included).
	MaxBatchBytes = 1536 << 10
)

// ErrClosed: the log was closed; nothing was appended.
var ErrClosed = errors.New("log is closed")

// Gate decides, in log order, whether each entry may join the log. The
// committer calls it from one goroutine: Mark before a request's entries,
// Admit for each (as if every entry admitted before it were already in the
// log), Reset to undo a refused request or a batch that failed to commit,
// and Settle once a batch is durable. Admit is given the time the batch
// is accepted at (whole seconds): the signed time of the checkpoint the
// batch will carry, which is what a reader of the log's history replays
// the entry at. Admit returns the entry's keys in the log's state index
// (state.go), written with the entry; a log whose index covers every
// entry before the batch (its binding at the log's size) moves the
// binding past the batch in the same transaction, so a gate of a log
// with a state index returns every entry's keys.
type Gate interface {
	Mark() int64
	Admit(entry []byte, prepared any, accepted time.Time) (StateKeys, error)
	Reset(mark int64)
	Settle()
}

type appendReq struct {
	entries  [][]byte
	keys     []string // lookup keys for the first entry (EnqueueWithKeys)
	prepared []any
	state    []StateKeys // per entry, from the gate
	bytes    int
	first    int64
	err      error
	done     chan struct{}
}

// committer batches concurrent appends into one durable transaction.
type committer struct {
	mu      sync.Mutex // guards closed and sends on reqs
	closed  bool
	started bool
	reqs    chan *appendReq
	exited  chan struct{}
	gate    Gate
}

// SetGate installs the gate every later append passes through. Call it
// before the first append.
func (l *Log) SetGate(g Gate) { l.gate = g }

// Append adds entries at the end of the log, with their tree hashes, the
// new size and a new signed checkpoint, in one durable transaction that
// it may share with concurrent appends (group commit: SyncWrites on, one
// fsync and one checkpoint signature per batch). It returns the index of
// the first entry once the batch is durable. The entries of one call are
// appended together or not at all: an entry the gate refuses fails the
// whole call and stores none of it; a batch that fails to commit fails
// every call in it and stores nothing. Errors: ErrEntrySize, ErrNoSigner,
// ErrBatchTooLarge, ErrClosed, the gate's refusal, an *IntegrityError
// when the stored log no longer matches its checkpoint.
func (l *Log) Append(entries [][]byte) (int64, error) { return l.AppendPrepared(entries, nil) }

// AppendPrepared is Append with a value per entry handed to the gate's
// Admit (work done ahead of the committer, such as parsed and
// pre-verified records); prepared may be nil.
func (l *Log) AppendPrepared(entries [][]byte, prepared []any) (int64, error) {
	if l.signer == nil {
		return 0, ErrNoSigner
	}
	if prepared != nil && len(prepared) != len(entries) {
		return 0, fmt.Errorf("%d prepared values for %d entries", len(prepared), len(entries))
	}
	req := &appendReq{entries: entries, prepared: prepared, done: make(chan struct{})}
	for i, e := range entries {
		if len(e) == 0 || len(e) > MaxEntrySize {
			return 0, fmt.Errorf("%w: entry %d of the batch is %d bytes, allowed 1 to %d", ErrEntrySize, i, len(e), MaxEntrySize)
		}
		req.bytes += len(e)
	}
	if len(entries) == 0 {
		return l.Size(), nil
	}
	return l.submit(req)
}

// Refresh signs a new checkpoint for the same entries, with the current
// time in its cosignature: what a writer does when nothing was appended
// for a while, so that runners enforcing a maximum ledger age keep
// accepting it. It goes through the committer like an append.
func (l *Log) Refresh() error {
	if l.signer == nil {
		return ErrNoSigner
	}
	_, err := l.submit(&appendReq{done: make(chan struct{})})
	return err
}

// submit hands a request to the committer and waits for its batch.
func (l *Log) submit(req *appendReq) (int64, error) {
	if err := l.enqueue(req); err != nil {
		return 0, err
	}
	<-req.done
	return req.first, req.err
}

// enqueue hands a request to the committer without waiting. Requests are
// committed in the order they are enqueued.
func (l *Log) enqueue(req *appendReq) error {
	entries := req.entries
	if len(entries) > MaxBatchEntries || req.bytes > MaxBatchBytes {
		return fmt.Errorf("%w: %d entries, %d bytes (limits %d, %d)", ErrBatchTooLarge, len(entries), req.bytes, MaxBatchEntries, MaxBatchBytes)
	}
	l.committer.mu.Lock()
	if l.closed {
		l.committer.mu.Unlock()
		return ErrClosed
	}
	if !l.started {
		l.started = true
		l.reqs = make(chan *appendReq, 1024)
		l.exited = make(chan struct{})
		go l.run()
	}
	l.reqs <- req
	l.committer.mu.Unlock()
	return nil
}

// stop refuses further appends and waits for the committer to finish.
func (l *Log) stop() (already bool) {
	l.committer.mu.Lock()
	already = l.closed
	l.closed = true
	started := l.started && !already
	if started {
		close(l.reqs)
	}
	l.committer.mu.Unlock()
	if started {
		<-l.exited
	}
	return already
}

// run is the committer goroutine.
func (l *Log) run() {
	defer close(l.exited)
	var next *appendReq
	for {
		req := next
		next = nil
		if req == nil {
			var ok bool
			if req, ok = <-l.reqs; !ok {
				return
			}
		}
		batch, n, size := []*appendReq{req}, len(req.entries), req.bytes
	fill:
		for {
			select {
			case r, ok := <-l.reqs:
				if !ok {
					break fill
				}
				if n+len(r.entries) > MaxBatchEntries || size+r.bytes > MaxBatchBytes {
					next = r
					break fill
				}
				batch, n, size = append(batch, r), n+len(r.entries), size+r.bytes
			default:
				break fill
			}
		}
		l.commit(batch)
		for _, r := range batch {
			close(r.done)
		}
	}
}

// commit admits each request's entries through the gate, then writes the
// admitted ones, their hashes, the size and a new checkpoint in one
// transaction.
func (l *Log) commit(batch []*appendReq) {
	at, err := l.begin()
	if l.sequencer != nil {
		defer l.sequencer.End()
	}
	if err != nil {
		for _, r := range batch {
			r.err = err
		}
		return
	}
	var start int64
	if l.gate != nil {
		start = l.gate.Mark()
	}
	var accepted []*appendReq
	for _, r := range batch {
		if l.gate != nil {
			mark := l.gate.Mark()
			r.state = make([]StateKeys, len(r.entries))
			for i, e := range r.entries {
				var p any
				if r.prepared != nil {
					p = r.prepared[i]
				}
				var err error
				if r.state[i], err = l.gate.Admit(e, p, at); err != nil {
					l.gate.Reset(mark)
					r.err = fmt.Errorf("record %d of %d: %w", i+1, len(r.entries), err)
					break
				}
			}
			if r.err != nil {
				continue
			}
		}
		accepted = append(accepted, r)
	}
	if len(accepted) == 0 {
		if l.gate != nil {
			l.gate.Settle()
		}
		return
	}
	err = l.write(accepted, at)
	if l.gate != nil {
		if err != nil {
			l.gate.Reset(start)
		}
		l.gate.Settle()
	}
	if err != nil {
		for _, r := range accepted {
			r.err = err
		}
	}
}

// begin starts a batch: the sequencer's Begin, then batchTime.
func (l *Log) begin() (time.Time, error) {
	if l.sequencer != nil {
		if err := l.sequencer.Begin(); err != nil {
			return time.Time{}, fmt.Errorf("%w: %w", ErrUnsequenced, err)
		}
	} else if l.onEngine != "" {
		return time.Time{}, fmt.Errorf("%w (%s): append through its writers, or take it back from the engine first", ErrOnEngine, l.onEngine)
	}
	return l.batchTime()
}

// batchTime is the time the next batch is accepted at, in whole seconds:
// the log's clock, but never before the signed time of the latest
// checkpoint, so that times never decrease along the history. It reads
// and verifies the stored checkpoint the first time.
func (l *Log) batchTime() (time.Time, error) {
	if l.head == nil {
		signed, err := l.Checkpoint()
		if err != nil {
			return time.Time{}, err
		}
		cp, err := formats.OpenCheckpoint(signed, l.lkey)
		if err != nil {
			return time.Time{}, fmt.Errorf("refusing to append: %w", err)
		}
		t, err := formats.CheckpointTime(signed, l.lkey)
		if err != nil {
			return time.Time{}, fmt.Errorf("refusing to append: the latest checkpoint: %w", err)
		}
		l.head, l.headParsed, l.headTime = signed, cp, t
	}
	t := time.Unix(l.clock()().Unix(), 0)
	if t.Before(l.headTime) {
		t = l.headTime
	}
	return t, nil
}

// write stores the accepted requests' entries in one durable transaction,
// with a checkpoint signed at time at (and kept in the history, for a
// log that keeps one), and sets each request's first index.
func (l *Log) write(reqs []*appendReq, at time.Time) error {
	first := l.size.Load()
	txn := l.db.Begin()
	defer txn.Discard()
	r := txnHashReader(txn)
	if err := l.checkHead(txn, r); err != nil {
		return err
	}
	n := first
	for _, req := range reqs {
		req.first = n
		for _, e := range req.entries {
			hashes, err := tlog.StoredHashes(n, e, r)
			if err != nil {
				return err
			}
			if err := putEntry(txn, n, e, hashes); err != nil {
				return err
			}
			if req.state != nil {
				if err := putStateKeys(txn, n, req.state[n-req.first]); err != nil {
					return batchErr(err)
				}
			}
			n++
		}
		for _, k := range req.keys {
			if err := txn.Set(lookupKey(k), sizeBytes(req.first)); err != nil {
				return batchErr(err)
			}
		}
	}
	root, err := tlog.TreeHash(n, r)
	if err != nil {
		return err
	}
	cp, err := l.signCheckpoint(formats.Checkpoint{Origin: l.origin, Size: n, Hash: root}, at)
	if err != nil {
		return err
	}
	if l.history && n > first {
		if err := txn.Set(historyKey(n), cp); err != nil {
			return batchErr(err)
		}
		if err := l.moveBinding(txn, first, StateBinding{Size: n, Root: root}, reqs); err != nil {
			return batchErr(err)
		}
	}
	if err := txn.Set(keySize, sizeBytes(n)); err != nil {
		return batchErr(err)
	}
	if err := txn.Set(keyCheckpoint, cp); err != nil {
		return batchErr(err)
	}
	if l.sequencer != nil {
		read := func(t tiles.Tile) ([]byte, error) { return l.readTile(txn, t, n) }
		if err := l.sequencer.Publish(first, formats.Checkpoint{Origin: l.origin, Size: n, Hash: root}, cp, read); err != nil {
			return fmt.Errorf("%w: %w", ErrUnsequenced, err)
		}
	}
	if err := txn.Commit(); err != nil {
		return fmt.Errorf("committing %d entries: %w", n-first, batchErr(err))
	}
	l.head, l.headParsed, l.headTime = cp, formats.Checkpoint{Origin: l.origin, Size: n, Hash: root}, at
	l.size.Store(n)
	return nil
}

func batchErr(err error) error {
	if errors.Is(err, ErrTxnFull) {
		return fmt.Errorf("%w: %w", ErrBatchTooLarge, err)
	}
	return err
}
