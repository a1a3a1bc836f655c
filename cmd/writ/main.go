// Command writ signs instructions and the delegations behind them, pins
// agent binaries, keeps both in an append-only ledger, admits or refuses
// dispatches on a runner, and audits the ledger. Its command line is
// specified in CLI.md; this package only parses flags, calls the writ
// packages and prints.
//
// Exit codes: 0 success, 1 a verdict of no (refused, verification failed),
// 2 bad usage or bad input, 3 internal error.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

func main() {
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}

// run executes one writ command line and returns its exit code. It never
// panics: a panic is reported as an internal error (exit 3).
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "writ: error: internal error: %v\n", p)
			if os.Getenv("WRIT_DEBUG") != "" {
				stderr.Write(debug.Stack())
			}
			code = exitInternal
		}
	}()
	app := newApp(stdin, stdout, stderr)
	return report(stderr, app.Run(args))
}

func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:  "writ",
		Usage: "signed instructions, pinned binaries, an append-only ledger and a runner that can say no",
		Description: "writ lets operators sign instructions and delegations, release engineers pin the exact\n" +
			"agent binaries a runner may execute, runners admit or refuse each dispatch on their own,\n" +
			"and auditors prove from the ledger what was admitted and refused.",
		Reader:          stdin,
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: true,
		Flags:           []cli.Flag{jsonFlag},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return usageErr("%v", err)
		},
		ExitErrHandler: func(*cli.Context, error) {},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usageErr("unknown command %q (see writ --help)", c.Args().First())
			}
			return cli.ShowAppHelp(c)
		},
		Commands: []*cli.Command{
			keyCommand(),
			rootCommand(),
			delegateCommand(),
			pinCommand(),
			instructCommand(),
			ledgerCommand(),
			admitCommand(),
			auditCommand(),
			quickstartCommand(),
		},
	}
	onUsage(app.Commands, app.OnUsageError)
	return app
}

// onUsage makes every command report flag errors as bad usage (exit 2).
func onUsage(cmds []*cli.Command, f cli.OnUsageErrorFunc) {
	for _, c := range cmds {
		c.OnUsageError = f
		onUsage(c.Subcommands, f)
	}
}

var jsonFlag = &cli.BoolFlag{Name: "json", Usage: "print one JSON object per result on stdout"}
