package ledger

import (
	"errors"

	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/tiles"
)

// ErrUnsequenced wraps a Sequencer's refusal of a batch (nothing of it
// stored here); ErrOnEngine, a batch of a log that must go through a
// Sequencer (RequireSequencer) and has none (nothing appended or signed).
var (
	ErrUnsequenced = errors.New("the log's engine did not take the batch")
	ErrOnEngine    = errors.New("the log is on a distributed engine")
)

// Sequencer puts a log's batches on an engine shared with other writers
// (package engine). The committer calls it around each batch: Begin
// before the gate judges it (the engine's lock taken, this log brought
// to the engine's head through ReplicaWriter); Publish once its tiles
// are built and signed, before they are committed here (read gives a
// tile of the tree of cp.Size entries as ReadTile does, from the
// uncommitted transaction; old is the size before the batch); End after,
// whatever happened. An error from Begin or Publish fails every request
// of the batch, wrapped in ErrUnsequenced, and nothing is stored.
type Sequencer interface {
	Begin() error
	Publish(old int64, cp formats.Checkpoint, signed []byte, read func(tiles.Tile) ([]byte, error)) error
	End()
}

// SetSequencer installs the sequencer of every later batch (before the
// first append).
func (l *Log) SetSequencer(s Sequencer) { l.sequencer = s }

// RequireSequencer makes every later batch (an append, a refreshed
// checkpoint) fail with ErrOnEngine, saying where, unless a Sequencer is
// installed: a copy of an engine's log appending alone would fork.
func (l *Log) RequireSequencer(where string) { l.onEngine = where }

// OnEngine is RequireSequencer's where ("" when it was not called).
func (l *Log) OnEngine() string { return l.onEngine }
