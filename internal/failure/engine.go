package failure

import (
	"errors"
	"fmt"

	"github.com/writ-ledger/writ/engine"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/ledger"
)

// Engine codes the error of ledger migrate (back, when it took the log
// back) on the authority log in dir: a log that does not verify, an
// engine that holds another log or has writers 1 with where to look; a
// configuration 2; a busy or unavailable engine 4, nothing claimed past
// what the engine (or the log, taken back) already holds.
func Engine(err error, dir string, back bool) error {
	var damaged *ledger.IntegrityError
	what := "nothing migrated past what the engine holds"
	if back {
		what = "nothing taken back past what the log holds"
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, engine.ErrUnverified) || errors.As(err, &damaged):
		return exitcode.Refused(err, "run `writ ledger verify --dir "+dir+"` for the evidence")
	case errors.Is(err, engine.ErrHasWriters):
		return exitcode.Refused(err, "stop the engine's writers, then `writ ledger migrate --back --dir "+dir+"` brings this log to the engine's head")
	case errors.Is(err, engine.ErrOtherLog):
		return exitcode.Refused(err, "give this log's database and bucket, or new ones")
	case errors.Is(err, engine.ErrConfig):
		return exitcode.Input(err)
	case errors.Is(err, engine.ErrBusy) || errors.Is(err, engine.ErrUnavailable):
		return &exitcode.Error{Code: exitcode.Busy, Err: fmt.Errorf("%s: %w", what, err),
			Hints: []string{"run it again once the engine answers (what was copied is kept); check --dsn, --bucket, --s3-endpoint and the credentials"}}
	}
	return &exitcode.Error{Code: exitcode.Busy, Err: fmt.Errorf("%s: %w", what, err)}
}
