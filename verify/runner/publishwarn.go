package runner

import (
	"path/filepath"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/tiles"
)

// warnUnwitnessed calls o.Unwitnessed (without a policy) when the log's
// checkpoint carries fewer signature lines (formats.CountSigLines) than
// the checkpoint published at to. A checkpoint that cannot be read, at
// to or in l, says nothing.
func (o PublishOptions) warnUnwitnessed(l *ledger.Log, to string) {
	if o.Policy != nil || o.Unwitnessed == nil {
		return
	}
	old, err := tiles.ReadFile(filepath.Join(to, "checkpoint"), formats.MaxCheckpointSize)
	if err != nil {
		return
	}
	signed, err := l.CosignedCheckpoint()
	if err != nil {
		return
	}
	if had, has := formats.CountSigLines(old), formats.CountSigLines(signed); has < had {
		o.Unwitnessed(had, has)
	}
}
