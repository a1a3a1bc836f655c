package ledger

import (
	"errors"

	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/tiles"
)

// ErrUnsequenced wraps a Sequencer's refusal of a batch: nothing of it
// was stored here (and, Sequencer.Publish promises, nothing a reader of
// the engine trusts).
var ErrUnsequenced = errors.New("the log's engine did not take the batch")

// Sequencer puts a log's batches on an engine shared with other writers
// (package engine: Tessera's AWS driver). The committer calls it from
// its goroutine around each batch: Begin before the gate judges the
// batch (the engine's lock taken, and this log brought up to the
// engine's head through ReplicaWriter, so the batch is judged against
// every writer's entries); Publish with the batch's tiles once they are
// built and signed, before they are committed here (read gives a tile of
// the tree of cp.Size entries as ReadTile does, from the uncommitted
// transaction; old is the log's size before the batch); End after the
// commit, whatever happened. An error from Begin or Publish fails every
// request of the batch, wrapped in ErrUnsequenced, and nothing is stored.
type Sequencer interface {
	Begin() error
	Publish(old int64, cp formats.Checkpoint, signed []byte, read func(tiles.Tile) ([]byte, error)) error
	End()
}

// SetSequencer installs the sequencer every later batch goes through.
// Call it before the first append.
func (l *Log) SetSequencer(s Sequencer) { l.sequencer = s }
