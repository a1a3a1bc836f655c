package main

// File I/O: thin adapters over internal/fileio (inputs read whole under
// a bound, outputs written as new files, never over an existing one),
// reading stdin and stdout from the command's context.

import (
	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/dirhint"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/fileio"
)

// maxInput is fileio.MaxInput.
const maxInput = fileio.MaxInput

// readInput is fileio.ReadInput on the command's stdin.
func readInput(c *cli.Context, path string, limit int64) ([]byte, bool, error) {
	data, over, err := fileio.ReadInput(c.App.Reader, path, limit)
	return data, over, asExit(err)
}

// readWhole is fileio.ReadWhole on the command's stdin.
func readWhole(c *cli.Context, path string, limit int64) ([]byte, error) {
	data, err := fileio.ReadWhole(c.App.Reader, path, limit)
	return data, asExit(err)
}

// writeOutput is fileio.WriteOutput on the command's stdout.
func writeOutput(c *cli.Context, path string, data []byte) error {
	return asExit(fileio.WriteOutput(c.App.Writer, path, data))
}

// checkOutput is fileio.CheckOutput on the command's stdout.
func checkOutput(c *cli.Context, flag, path string) error {
	return asExit(fileio.CheckOutput(c.App.Writer, flag, path))
}

// writeNew is fileio.WriteNew.
func writeNew(path string, data []byte) error { return asExit(fileio.WriteNew(path, data)) }

// directoryErr is dirhint.Error.
func directoryErr(flag, path string) error { return asExit(dirhint.Error(flag, path)) }

// explainDirectory is dirhint.Explain for bad input: a verdict of no, or
// an internal error, keeps its code and message.
func explainDirectory(args []string, err error) error {
	if xe := exitcode.Of(err); xe != nil && xe.Code != exitUsage {
		return err
	}
	return asExit(dirhint.Explain(args, err))
}

// asExit turns an *exitcode.Error that err is (not merely wraps) into
// the command line's *exitError, so that every command sees one type;
// any other error is returned as it is.
func asExit(err error) error {
	if xe, ok := err.(*exitcode.Error); ok {
		return &exitError{code: xe.Code, err: xe.Err, hints: xe.Hints}
	}
	return err
}
