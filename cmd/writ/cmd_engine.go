package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/engine"
	"github.com/writ-ledger/writ/internal/cliflags"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/failure"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
)

// migrateCommand is ledger migrate.
var migrateCommand = &cli.Command{
	Name:   "migrate",
	Usage:  "copy the authority log, verified, to the distributed engine: Tessera's AWS driver on a MySQL-compatible database and an S3-compatible bucket (credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)",
	Flags:  append(cliflags.Engine(true), dirFlag, jsonFlag),
	Action: ledgerMigrate,
}

func ledgerMigrate(c *cli.Context) error {
	if err := wantArgs(c, 0, "no arguments"); err != nil {
		return err
	}
	cfg, err := cliflags.EngineConfig(c)
	if err != nil {
		return err
	}
	l, err := ledgerdir.Dir(c.String("dir")).OpenLog(ledgerdir.AuthorityLog)
	if err != nil {
		return failure.OpenLog(err, c.String("dir"))
	}
	defer l.Close()
	res, err := engine.Migrate(c.Context, l, *cfg)
	var damaged *ledger.IntegrityError
	switch {
	case errors.Is(err, engine.ErrUnverified) || errors.As(err, &damaged):
		return exitcode.Refused(err, "run `writ ledger verify --dir "+c.String("dir")+"` for the evidence")
	case errors.Is(err, engine.ErrOtherLog):
		return exitcode.Refused(err, "give this log's database and bucket, or new ones")
	case errors.Is(err, engine.ErrConfig):
		return exitcode.Input(err)
	case errors.Is(err, engine.ErrBusy) || errors.Is(err, engine.ErrUnavailable):
		return &exitcode.Error{Code: exitcode.Busy, Err: fmt.Errorf("nothing migrated past what the engine holds: %w", err),
			Hints: []string{"migrate again once the engine answers (what was copied is kept); check --dsn, --bucket, --s3-endpoint and the credentials"}}
	case err != nil:
		return &exitcode.Error{Code: exitcode.Busy, Err: fmt.Errorf("nothing migrated past what the engine holds: %w", err)}
	}
	return emitSorted(c, res, fmt.Sprintf("migrated authority log %s: %d entries, root %s, %d history bundles, into bucket %s", res.Origin, res.Size, res.Root, res.History, c.String("bucket")))
}
