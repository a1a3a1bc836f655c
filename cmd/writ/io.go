package main

// File I/O: thin adapters over internal/fileio (inputs read whole under
// a bound, outputs written as new files, never over an existing one),
// reading stdin and stdout from the command's context.

import (
	"io"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/dirhint"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/fileio"
)

// readInput is fileio.ReadInput on the command's stdin.
func readInput(c *cli.Context, path string, limit int64) ([]byte, bool, error) {
	return fileio.ReadInput(c.App.Reader, path, limit)
}

// readWhole is fileio.ReadWhole on the command's stdin.
func readWhole(c *cli.Context, path string, limit int64) ([]byte, error) {
	return fileio.ReadWhole(c.App.Reader, path, limit)
}

// writeOutput is fileio.WriteOutput on the command's stdout.
func writeOutput(c *cli.Context, path string, data []byte) error {
	return fileio.WriteOutput(c.App.Writer, path, data)
}

// streamOutput is fileio.StreamOutput on the command's stdout.
func streamOutput(c *cli.Context, path string, write func(io.Writer) error) error {
	return fileio.StreamOutput(c.App.Writer, path, write)
}

// checkOutput is fileio.CheckOutput on the command's stdout.
func checkOutput(c *cli.Context, flag, path string) error {
	return fileio.CheckOutput(c.App.Writer, flag, path)
}

// explainDirectory is dirhint.Explain for bad input: a verdict of no, or
// an internal error, keeps its code and message.
func explainDirectory(args []string, err error) error {
	if xe := exitcode.Of(err); xe != nil && xe.Code != exitcode.Usage {
		return err
	}
	return dirhint.Explain(args, err)
}
