// Package cliflags reads writ's command lines the way its users write
// them, on top of urfave/cli: flags after the positional arguments
// (Interspersed), a mistyped flag answered with the nearest one
// (SuggestFlag), an unknown subcommand named as such (GroupActions), a
// one-value flag given twice, an empty value, a missing required flag or
// a stray argument refused before the command runs (Strict,
// RepeatedFlag). Every refusal is bad usage
// (an *exitcode.Error, exit 2) that says where the help is.
package cliflags

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/fileio"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/provenance"
	"github.com/writ-ledger/writ/transfer"
)

// Line is a command line after Interspersed: the arguments urfave/cli
// parses, and whether --json asks for JSON output (errors included).
type Line struct {
	Args []string
	JSON bool
}

// Interspersed returns args with the flags given after a command's
// positional arguments moved before them, so that `writ verify FILE --key
// P` means `writ verify --key P FILE`, as on cosign's command line:
// urfave/cli stops reading flags at the first positional argument and
// would take "--key" and "P" for files. It finds the command by its names
// (after any global flags), then reads the rest in order: a word that
// starts with "-" (not "-" alone) is a flag, followed by its value when
// the command's flag of that name takes one and is not written with "=";
// anything else is positional; after "--" every word is positional. The
// result is the command, its flags, "--" and the positional arguments, so
// that none of them is read as a flag. With --help or -h anywhere, it is
// the command and --help alone. Bad usage:
//   - a flag that takes a value given last, with no value (moved, it
//     would take the first file for its value);
//   - a switch followed by a word that reads as a boolean (`--lift
//     false`): the word would be a positional argument and the switch on.
//
// Command lines that name no command, or a group of subcommands, keep
// their order. It also reports whether --json is set (the last of
// --json[=BOOL], global or the command's), read the way urfave/cli reads
// it: never a value of another flag.
func Interspersed(app *cli.App, args []string) (Line, error) {
	if len(args) < 2 {
		return Line{Args: args}, nil
	}
	var asJSON bool
	readSwitch := func(a string) {
		name, v, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name != "json" {
			return
		}
		asJSON = true
		if hasValue {
			asJSON, _ = strconv.ParseBool(v)
		}
	}
	i := 1
	for i < len(args) && IsFlagWord(args[i]) {
		readSwitch(args[i]) // global flags: --json, --help, --version (none takes a value)
		i++
	}
	cmd, i, path := commandIn(app, args, i)
	if cmd == nil || len(cmd.Subcommands) > 0 {
		return Line{Args: args, JSON: asJSON}, nil
	}
	valued, switches := flagKinds(cmd)
	where := strings.Join(path, " ")
	prefix := args[:i] // the program, global flags and the command's names
	var flags, positional []string
	help := false
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if !IsFlagWord(a) {
			positional = append(positional, a)
			continue
		}
		flags = append(flags, a)
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case name == "help" || name == "h":
			help = true
		case valued[name] && !hasValue:
			if i+1 == len(args) {
				return Line{}, exitcode.Usagef("--%s needs a value (see writ %s --help)", name, where)
			}
			i++
			flags = append(flags, args[i])
		case switches[name] && !hasValue && i+1 < len(args):
			if _, err := strconv.ParseBool(args[i+1]); err == nil {
				return Line{}, exitcode.Usagef("--%s %s: a switch takes no separate value; write --%s=%s (see writ %s --help)", name, args[i+1], name, args[i+1], where)
			}
		}
		if switches[name] {
			readSwitch(a)
		}
	}
	out := append([]string(nil), prefix...)
	if help {
		return Line{Args: append(out, "--help"), JSON: asJSON}, nil
	}
	out = append(out, flags...)
	if len(positional) > 0 {
		out = append(append(out, "--"), positional...)
	}
	return Line{Args: out, JSON: asJSON}, nil
}

// commandIn reads the command's names in args from index i on: the
// command named (nil if none is), the index after its names, and the
// names.
func commandIn(app *cli.App, args []string, i int) (*cli.Command, int, []string) {
	var cmd *cli.Command
	var path []string
	for cmds := app.Commands; i < len(args); {
		c := findCommand(cmds, args[i])
		if c == nil {
			break
		}
		cmd, i, path = c, i+1, append(path, c.Name)
		if len(c.Subcommands) == 0 {
			break
		}
		cmds = c.Subcommands
	}
	return cmd, i, path
}

// flagKinds sorts cmd's flag names (and --help, -h) into those that take
// a value and the switches.
func flagKinds(cmd *cli.Command) (valued, switches map[string]bool) {
	valued, switches = map[string]bool{}, map[string]bool{"help": true, "h": true}
	for _, fl := range cmd.Flags {
		_, isBool := fl.(*cli.BoolFlag)
		for _, n := range fl.Names() {
			valued[n], switches[n] = !isBool, isBool
		}
	}
	return valued, switches
}

// IsFlagWord reports whether a command-line word is a flag: it starts
// with "-" and is neither "-" (stdin) nor "--" (the end of the flags).
func IsFlagWord(a string) bool { return strings.HasPrefix(a, "-") && a != "-" && a != "--" }

// findCommand returns the command of cmds named (or aliased) name.
func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// SuggestFlag rewrites urfave/cli's "flag provided but not defined: -x"
// for the command at path: the flag in writ's spelling, the nearest flag
// cmd has when one is close enough to be a typo (at most 2 edits, a
// swap of neighbours counting as one, and fewer than the name's length),
// and where the help is. Other errors are returned unchanged.
func SuggestFlag(err error, cmd *cli.Command, path string) error {
	const undefined = "flag provided but not defined: "
	msg := err.Error()
	if cmd == nil || !strings.HasPrefix(msg, undefined) {
		return err
	}
	given := strings.TrimLeft(strings.TrimPrefix(msg, undefined), "-")
	best, bestDist := "", 3
	for _, fl := range cmd.Flags {
		for _, n := range fl.Names() {
			if d := editDistance(given, n); d < bestDist && d < len(n) {
				best, bestDist = n, d
			}
		}
	}
	if best == "" {
		return fmt.Errorf("writ %s has no flag --%s (see writ %s --help)", path, given, path)
	}
	return fmt.Errorf("writ %s has no flag --%s; did you mean --%s? (see writ %s --help)", path, given, best, path)
}

// editDistance is the optimal string alignment distance between a and b
// (bytes): insertions, deletions, substitutions and swaps of neighbours.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// GroupActions makes every command that has subcommands refuse an
// unknown one as bad usage (exit 2), naming the subcommands, instead of
// urfave/cli's "No help topic" internal error; without an argument it
// prints its help.
func GroupActions(cmds []*cli.Command, prefix string) {
	for _, c := range cmds {
		path := strings.TrimSpace(prefix + " " + c.Name)
		if len(c.Subcommands) > 0 && c.Action == nil {
			var names []string
			for _, s := range c.Subcommands {
				if !s.Hidden {
					names = append(names, s.Name)
				}
			}
			sort.Strings(names)
			c.Action = func(ctx *cli.Context) error {
				if !ctx.Args().Present() {
					return cli.ShowSubcommandHelp(ctx)
				}
				return exitcode.Usagef("unknown command %q: writ %s has the subcommands %s (see writ %s --help)",
					ctx.Args().First(), path, strings.Join(names, ", "), path)
			}
		}
		GroupActions(c.Subcommands, path)
	}
}

// JSONRequested reports whether a command line that Interspersed refused
// asks for --json (the last --json[=BOOL] before "--").
func JSONRequested(args []string) bool {
	asJSON := false
	for _, a := range args[min(1, len(args)):] {
		if a == "--" {
			break
		}
		if name, v, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "="); IsFlagWord(a) && name == "json" {
			asJSON = true
			if hasValue {
				asJSON, _ = strconv.ParseBool(v)
			}
		}
	}
	return asJSON
}

// RepeatedFlag returns the first flag of single given more than once in
// args ("--name V", "--name=V", "-name V"), skipping the value each flag
// of valued takes when it is not written with "=".
func RepeatedFlag(args []string, single, valued map[string]bool) string {
	seen := map[string]bool{}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if valued[name] && !hasValue {
			i++ // the next argument is this flag's value
		}
		if single[name] {
			if seen[name] {
				return name
			}
			seen[name] = true
		}
	}
	return ""
}

// ArgsKey is the key of cli.App.Metadata under which the caller stores
// the command line being run (a []string), for Strict.
const ArgsKey = "args"

// Strict makes every command of cmds (and their subcommands, named
// after prefix) report flag errors, including a missing
// required flag, as bad usage (exit 2): urfave/cli would report a missing
// required flag as a plain error after printing the whole help. A flag
// that takes one value (or a switch) given twice, and a text flag given
// an empty value, are bad usage too: urfave/cli would keep the last value,
// or treat "" as not given, silently (a trust anchor such as --vkey or
// --trust-root must never be dropped). A stray argument to a command
// without ArgsUsage is bad usage. The repeated flags are found in the
// command line app.Metadata[ArgsKey] holds (a []string, as Interspersed
// left it); f reports the flag errors urfave/cli finds.
func Strict(cmds []*cli.Command, f cli.OnUsageErrorFunc, prefix string) {
	for _, c := range cmds {
		path := strings.TrimSpace(prefix + " " + c.Name)
		c.OnUsageError = func(ctx *cli.Context, err error, sub bool) error {
			return f(ctx, SuggestFlag(err, c, path), sub)
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
				args, _ := ctx.App.Metadata[ArgsKey].([]string)
				if c.ArgsUsage == "" && ctx.NArg() > 0 {
					// A stray word would otherwise be ignored: a mistyped flag
					// value, or a switch's value written apart (--x false).
					return exitcode.Usagef("writ %s takes no arguments, and got %q (see writ %s --help)", path, ctx.Args().First(), path)
				}
				if name := RepeatedFlag(args, single, valued); name != "" {
					return exitcode.Usagef("--%s given more than once; it takes one value (see writ %s --help)", name, path)
				}
				for _, name := range text {
					if ctx.IsSet(name) && ctx.String(name) == "" {
						return exitcode.Usagef("--%s is given an empty value; give a value, or leave the flag out (see writ %s --help)", name, path)
					}
				}
				for _, name := range required {
					if !ctx.IsSet(name) {
						err := &exitcode.Error{Code: exitcode.Usage, Err: fmt.Errorf("--%s is required (see writ %s --help)", name, path)}
						if name == "dir" || name == "ledger" {
							for _, a := range ctx.Args().Slice() {
								if fi, serr := os.Stat(filepath.Join(a, ledgerdir.AuthorityDir)); serr == nil && fi.IsDir() {
									err.Hints = []string{fmt.Sprintf("%s is a ledger: give it as --%s %s", a, name, a)}
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
		Strict(c.Subcommands, f, path)
	}
}

// requiredFlags holds the flags Strict took over the required check of.
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

// Pin are writ pin's flags, then more.
func Pin(more ...cli.Flag) []cli.Flag {
	return append([]cli.Flag{
		&cli.StringSliceFlag{Name: "key", Required: true, Usage: "private key `FILE` or PKCS#11 URI (pkcs11:token=T;object=O) delegated the pin action (one: a pin carries one signature)"},
		&cli.StringFlag{Name: "artifact", Required: true, Usage: "artifact `NAME` (letters, digits, . _ - +)"},
		&cli.StringFlag{Name: "version", Required: true, Usage: "semantic version of this release"},
		&cli.StringFlag{Name: "platform", Usage: "GOOS/GOARCH (default: the binary's, else this machine's)"},
		&cli.StringFlag{Name: "expires", Value: "2160h", Usage: "RFC 3339 time or duration from now"},
		&cli.BoolFlag{Name: "allow-dirty", Usage: "pin a binary built from a modified tree (vcs.modified=true)"},
		&cli.BoolFlag{Name: "allow-unknown-build", Usage: "pin a binary that records no source revision"},
		&cli.StringFlag{Name: "provenance", Usage: "a build provenance attestation `FILE` (a DSSE envelope, or a Sigstore bundle holding one, of an in-toto statement with an SLSA provenance v1 predicate) that must vouch for the binary: its subject, builder, source commit and clean tree, checked offline"},
		&cli.StringFlag{Name: "provenance-key", Usage: "the builder's public key `FILE` (PEM) the provenance must be signed by"},
		&cli.StringFlag{Name: "provenance-root", Usage: "instead of a key: a Sigstore trusted root `FILE` (trusted_root.json) a keyless bundle's certificate, log entry and timestamps must verify under"},
		&cli.StringSliceFlag{Name: "builder", Usage: "a builder `ID` the provenance may name (repeat; none: any, recorded)"},
	}, more...)
}

// PinOptions reads Pin's flags but the times, the provenance and its key
// read from their files (each at most provenance.MaxEnvelopeSize).
// Errors: bad usage for a provenance without its key or the reverse, or
// --builder without a provenance; a file that cannot be read.
func PinOptions(c *cli.Context) (transfer.PinOptions, error) {
	o := transfer.PinOptions{Artifact: c.String("artifact"), Version: c.String("version"), Platform: c.String("platform"),
		AllowDirty: c.Bool("allow-dirty"), AllowUnknown: c.Bool("allow-unknown-build"), Builders: c.StringSlice("builder")}
	env, key, root := c.String("provenance"), c.String("provenance-key"), c.String("provenance-root")
	switch {
	case key != "" && root != "":
		return o, exitcode.Usagef("--provenance-key or --provenance-root, one of them: a key, or a Sigstore trusted root for a keyless bundle")
	case (env == "") != (key == "" && root == ""):
		return o, exitcode.Usagef("--provenance comes with --provenance-key or --provenance-root: the attestation and what it is signed under")
	case env == "" && len(o.Builders) > 0:
		return o, exitcode.Usagef("--builder names the builders a --provenance may name")
	case env == "":
		return o, nil
	}
	var err error
	if o.Provenance, err = fileio.ReadWhole(c.App.Reader, env, provenance.MaxEnvelopeSize); err != nil {
		return o, exitcode.Input(fmt.Errorf("--provenance %s: %w", env, err))
	}
	if root != "" {
		if o.ProvenanceRoot, err = fileio.ReadWhole(c.App.Reader, root, provenance.MaxTrustedRootSize); err != nil {
			return o, exitcode.Input(fmt.Errorf("--provenance-root %s: %w", root, err))
		}
		return o, nil
	}
	if o.ProvenanceKey, err = fileio.ReadWhole(c.App.Reader, key, 64<<10); err != nil {
		return o, exitcode.Input(fmt.Errorf("--provenance-key %s: %w", key, err))
	}
	return o, nil
}
