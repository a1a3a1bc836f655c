package clicmd

import (
	"errors"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/failure"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/verify"
)

// LedgerCheckFlag is --ledger on the commands that sign a record for
// the authority log (delegate, revoke, issuer, quarantine, pin): judge the
// signed record against that ledger before writing it (CheckBeforeWriting).
var LedgerCheckFlag = &cli.StringFlag{Name: "ledger", Usage: "judge the signed record against this ledger `DIR` as ledger append would, now, and write nothing if it would be refused (a re-delegation wider than its parent: exceeds-parent)"}

// CheckBeforeWriting judges entry, the record a command just signed, in
// memory, against the ledger --ledger names (verify.CheckRecord), when
// the command has the flag and it is given; else it does nothing. A
// record the ledger would refuse is a verdict of no (exit 1) with the
// rule and its next act, or bad input for a malformed one
// (failure.Record); the command then writes nothing. A ledger that does
// not open or verify is as failure.OpenLog says.
func CheckBeforeWriting(c *cli.Context, entry []byte) error {
	dir := c.String("ledger")
	if dir == "" {
		return nil
	}
	_, err := verify.CheckRecord(ledgerdir.Dir(dir), verify.Trust{}, entry, time.Now())
	if ae := (*verify.AuthorityError)(nil); errors.As(err, &ae) {
		return failure.OpenLog(ae.Err, dir)
	} else if err != nil {
		return failure.Record(err)
	}
	return nil
}
