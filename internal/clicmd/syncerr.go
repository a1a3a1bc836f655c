package clicmd

import (
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/failure"
	"github.com/writ-ledger/writ/verify/runner"
)

// SyncErr gives a sync failure (runner.ClassifySync) its exit code and
// evidence: 1 for what the published log or its entries fail, 2 for a
// source that cannot be read or a replica that cannot be opened.
func SyncErr(err error) error {
	switch f := runner.ClassifySync(err); f.Kind {
	case runner.FailRefused:
		return &exitcode.Error{Code: exitcode.No, Err: f.Err, Hints: f.Hints, Evidence: f.Evidence}
	case runner.FailRecordRefused:
		return failure.Record(f.Err)
	case runner.FailBadInput:
		return exitcode.Input(f.Err, f.Hints...)
	}
	return failure.Open(err)
}
