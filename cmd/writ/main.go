// Command writ signs instructions and the delegations behind them, pins
// agent binaries, keeps both in an append-only ledger, admits or refuses
// dispatches on a runner, and audits the ledger. Its command line is
// documented by `writ COMMAND --help` and pinned by the scripts in
// testdata/script (streams, exit codes, --json fields); this package only
// parses flags, calls the writ packages and prints.
//
// Exit codes: 0 success, 1 a verdict of no (refused, verification failed),
// 2 bad usage or bad input, 3 internal error, 4 busy (another process
// holds the ledger now).
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/buildinfo"
	"github.com/writ-ledger/writ/internal/clicmd"
	"github.com/writ-ledger/writ/internal/cliflags"
	"github.com/writ-ledger/writ/internal/diagnostic"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/profile"
)

func main() {
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}

// run executes one writ command line and returns its exit code. It never
// panics: a panic is reported as an internal error (exit 3).
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	var asJSON bool
	defer func() {
		if p := recover(); p != nil {
			if asJSON {
				code = report(stderr, fmt.Errorf("%v", p), true) // unclassified: internal (exit 3)
				return
			}
			fmt.Fprintf(stderr, "writ: error: internal error: %v\n", p)
			if os.Getenv("WRIT_DEBUG") != "" {
				stderr.Write(debug.Stack())
			}
			code = exitcode.Internal
		}
	}()
	defer profile.Start(func(msg string) { diagnostic.Write(stderr, cliflags.JSONRequested(args), diagnostic.Warning, msg) })()
	app := newApp(stdin, stdout, stderr)
	line, err := cliflags.Interspersed(app, args)
	if err != nil {
		return report(stderr, err, cliflags.JSONRequested(args))
	}
	asJSON = line.JSON
	app.Metadata = map[string]any{cliflags.ArgsKey: line.Args}
	return report(stderr, explainDirectory(line.Args, app.Run(line.Args)), asJSON)
}

func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:  "writ",
		Usage: "signed instructions, pinned binaries, an append-only ledger and a runner that can say no",
		Description: "writ lets operators sign instructions and delegations, release engineers pin the exact\n" +
			"agent binaries a runner may execute, runners admit or refuse each dispatch on their own,\n" +
			"and auditors prove from the ledger what was admitted and refused.\n\n" +
			"Environment: WRIT_PASSPHRASE (key passphrase), WRIT_PKCS11_MODULE (token module path),\n" +
			"WRIT_CPUPROFILE and WRIT_MEMPROFILE (write pprof profiles of the run to FILE),\n" +
			"WRIT_PROGRESS (1: draw progress bars on any stderr; 0: never; default: on a terminal,\n" +
			"for work that runs longer than a second: audit, export, import, publish, sync).\n\n" +
			"Exit codes: 0 success, 1 a verdict of no, 2 bad usage or input, 3 internal error, 4 busy\n" +
			"(another writ process holds the ledger or the witness state; retry).\n\n" +
			"Under --json every result is one JSON object on stdout, and a failure one JSON object on\n" +
			"stderr: {\"error\": message, \"exit\": code, \"rule\": rule id or \"\", \"hints\": [next acts]}, and for a fork or\n" +
			"split view \"evidence\" or \"evidence_lines\" (both signed checkpoints, to keep); a note,\n" +
			"warning or progress line is one {\"level\": \"note\"|\"warning\"|\"info\", \"message\": text} on stderr.\n" +
			"Each command's --help lists the fields of its JSON result.",
		Reader:    stdin,
		Writer:    stdout,
		ErrWriter: stderr,
		Version:   version(),
		Flags:     []cli.Flag{jsonFlag},
		// One flag value is one value: urfave/cli would split every
		// repeatable flag's value on commas, so --machine 'a,b' signed two
		// patterns. The flags documented as lists (--action, --refuse)
		// split their values themselves (cliflags.CommaList).
		DisableSliceFlagSeparator: true,
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return exitcode.Usagef("%v", err)
		},
		ExitErrHandler: func(*cli.Context, error) {},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return exitcode.Usagef("unknown command %q (see writ --help)", c.Args().First())
			}
			return cli.ShowAppHelp(c)
		},
		Commands: []*cli.Command{
			keyCommand(),
			verifyCommand(),
			rootCommand(),
			delegateCommand(),
			revokeCommand(),
			issuerCommand(),
			quarantineCommand(),
			authorityCommand(),
			downgradeCommand(),
			transferCommand(),
			pinCommand(),
			instructCommand(),
			ledgerCommand(),
			admitCommand(),
			admissionCommand(),
			tokenCommand(),
			auditCommand(),
			quickstartCommand(),
			witnessCommand(),
			clicmd.Inspect(),
			clicmd.Monitor(),
		},
	}
	cliflags.Strict(app.Commands, app.OnUsageError, "")
	cliflags.GroupActions(app.Commands, "")
	documentJSON(app.Commands, "")
	return app
}

// version reports the module version and vcs revision this binary was
// built from, as Go recorded them (buildinfo.Version).
func version() string { return buildinfo.Version() }

var jsonFlag = &cli.BoolFlag{Name: "json", Usage: "print one JSON object per result on stdout"}
