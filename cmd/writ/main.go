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
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/cliflags"
	"github.com/writ-ledger/writ/internal/diagnostic"
	"github.com/writ-ledger/writ/internal/profile"
	"github.com/writ-ledger/writ/ledger"
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
			code = exitInternal
		}
	}()
	defer profile.Start(func(msg string) { diagnostic.Write(stderr, cliflags.JSONRequested(args), diagnostic.Warning, msg) })()
	app := newApp(stdin, stdout, stderr)
	line, err := cliflags.Interspersed(app, args)
	if err != nil {
		return report(stderr, err, cliflags.JSONRequested(args))
	}
	asJSON = line.JSON
	app.Metadata = map[string]any{"args": line.Args}
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
			"stderr: {\"error\": message, \"exit\": code, \"rule\": rule id or \"\", \"hints\": [next acts]}; a note,\n" +
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
		// split their values themselves (commaList).
		DisableSliceFlagSeparator: true,
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
		},
	}
	onUsage(app.Commands, app.OnUsageError, "")
	cliflags.GroupActions(app.Commands, "")
	documentJSON(app.Commands, "")
	return app
}

// onUsage makes every command report flag errors, including a missing
// required flag, as bad usage (exit 2): urfave/cli would report a missing
// required flag as a plain error after printing the whole help. A flag
// that takes one value (or a switch) given twice, and a text flag given
// an empty value, are bad usage too: urfave/cli would keep the last value,
// or treat "" as not given, silently (a trust anchor such as --vkey or
// --trust-root must never be dropped).
func onUsage(cmds []*cli.Command, f cli.OnUsageErrorFunc, prefix string) {
	for _, c := range cmds {
		path := strings.TrimSpace(prefix + " " + c.Name)
		c.OnUsageError = func(ctx *cli.Context, err error, sub bool) error {
			return f(ctx, cliflags.SuggestFlag(err, c, path), sub)
		}
		var required []string
		single, valued, text := map[string]bool{}, map[string]bool{}, []string{}
		for _, fl := range c.Flags {
			name := fl.Names()[0]
			switch sf := fl.(type) {
			case *cli.BoolFlag:
				single[name] = name != "json" // --json goes before or after the command name
			case *cli.StringSliceFlag:
				// One value is one value, as typed: urfave/cli would trim
				// the spaces around it (and, without the app's
				// DisableSliceFlagSeparator, split it on commas).
				sf.KeepSpace = true
				valued[name] = true
			case *cli.StringFlag:
				valued[name], single[name] = true, true
				text = append(text, name)
			default:
				valued[name], single[name] = true, true
			}
			if takeRequired(fl) {
				required = append(required, name)
			}
		}
		if action := c.Action; action != nil {
			c.Action = func(ctx *cli.Context) error {
				args, _ := ctx.App.Metadata["args"].([]string)
				if c.ArgsUsage == "" && ctx.NArg() > 0 {
					// A stray word would otherwise be ignored: a mistyped flag
					// value, or a switch's value written apart (--x false).
					return usageErr("writ %s takes no arguments, and got %q (see writ %s --help)", path, ctx.Args().First(), path)
				}
				if name := cliflags.RepeatedFlag(args, single, valued); name != "" {
					return usageErr("--%s given more than once; it takes one value (see writ %s --help)", name, path)
				}
				for _, name := range text {
					if ctx.IsSet(name) && ctx.String(name) == "" {
						return usageErr("--%s is given an empty value; give a value, or leave the flag out (see writ %s --help)", name, path)
					}
				}
				for _, name := range required {
					if !ctx.IsSet(name) {
						err := &exitError{code: exitUsage, err: fmt.Errorf("--%s is required (see writ %s --help)", name, path)}
						if name == "dir" || name == "ledger" {
							for _, a := range ctx.Args().Slice() {
								if fi, serr := os.Stat(filepath.Join(a, ledger.AuthorityDir)); serr == nil && fi.IsDir() {
									err.hints = []string{fmt.Sprintf("%s is a ledger: give it as --%s %s", a, name, a)}
									break
								}
							}
						}
						return err
					}
				}
				return action(ctx)
			}
		}
		onUsage(c.Subcommands, f, path)
	}
}

// requiredFlags holds the flags onUsage took over the required check of.
// Flag values are shared between commands (one --dir for every ledger
// command): urfave/cli's Required is cleared on the first, and this set
// keeps it required for all the others.
var requiredFlags = map[cli.Flag]bool{}

// takeRequired reports whether fl is required, clearing urfave/cli's own
// Required (which would print the whole help before its error) and
// marking the usage text, once per flag value.
func takeRequired(fl cli.Flag) bool {
	if requiredFlags[fl] {
		return true
	}
	switch x := fl.(type) {
	case *cli.StringFlag:
		if !x.Required {
			return false
		}
		x.Required, x.Usage = false, withRequired(x.Usage)
	case *cli.StringSliceFlag:
		if !x.Required {
			return false
		}
		x.Required, x.Usage = false, withRequired(x.Usage)
	case *cli.Int64Flag:
		if !x.Required {
			return false
		}
		x.Required, x.Usage = false, withRequired(x.Usage)
	default:
		return false
	}
	requiredFlags[fl] = true
	return true
}

func withRequired(usage string) string {
	if strings.HasSuffix(usage, "(required)") {
		return usage
	}
	return strings.TrimSpace(usage + " (required)")
}

// version reports the module version and vcs revision this binary was
// built from, as Go recorded them.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := info.Main.Version
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision":
			v += " " + s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			v += " (modified)"
		}
	}
	return v
}

var jsonFlag = &cli.BoolFlag{Name: "json", Usage: "print one JSON object per result on stdout"}
