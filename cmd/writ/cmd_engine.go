package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/engine"
	"github.com/writ-ledger/writ/internal/cliflags"
	"github.com/writ-ledger/writ/internal/failure"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
)

// migrateCommand is ledger migrate.
var migrateCommand = &cli.Command{
	Name:  "migrate",
	Usage: "copy the authority log, verified, to the distributed engine: Tessera's AWS driver on a MySQL-compatible database and an S3-compatible bucket (credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY); with --back, bring the log to the engine's head instead, to go on without it",
	Flags: append(cliflags.Engine(true), dirFlag, jsonFlag,
		&cli.BoolFlag{Name: "back", Usage: "take the log back: store in --dir every batch the engine's writers sequenced, verified and judged, and close the engine to them"}),
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
	d, open := ledgerdir.Dir(c.String("dir")), ledgerdir.Dir.OpenLog
	if c.Bool("back") { // stores entries: for writing, which needs no key
		open = func(d ledgerdir.Dir, _ string) (*ledger.Log, error) {
			return ledgerdir.OpenWaiting(d.AuthorityStore(), nil, ledgerdir.WriterLockWait)
		}
	}
	l, err := open(d, ledgerdir.AuthorityLog)
	if err != nil {
		return failure.OpenLog(err, c.String("dir"))
	}
	defer l.Close()
	act := map[bool]func(context.Context, *ledger.Log, engine.Config) (*engine.Migrated, error){false: engine.Migrate, true: engine.Back}[c.Bool("back")]
	m, err := act(c.Context, l, *cfg)
	if err == nil { // on the engine now, or alone again (ledgerdir.EngineFile)
		err = d.SetEngine(map[bool]string{false: "bucket " + cfg.Bucket + " " + cfg.Endpoint}[c.Bool("back")])
	}
	if err != nil {
		return failure.Engine(err, c.String("dir"), c.Bool("back"))
	}
	msg := fmt.Sprintf("migrated authority log %s: %d entries, root %s, %d history bundles, into bucket %s", m.Origin, m.Size, m.Root, m.History, c.String("bucket"))
	if c.Bool("back") {
		msg = fmt.Sprintf("took authority log %s back from bucket %s: %d entries, root %s", m.Origin, c.String("bucket"), m.Size, m.Root)
	}
	return emitSorted(c, m, msg)
}
