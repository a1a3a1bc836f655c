package cliflags

import (
	"errors"
	"slices"
	"testing"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/exitcode"
)

func testApp() *cli.App {
	return &cli.App{Commands: []*cli.Command{{
		Name: "verify",
		Flags: []cli.Flag{&cli.StringFlag{Name: "key"}, &cli.BoolFlag{Name: "json"},
			&cli.BoolFlag{Name: "lift"}},
	}, {
		Name:        "ledger",
		Subcommands: []*cli.Command{{Name: "append", Flags: []cli.Flag{&cli.StringFlag{Name: "dir"}}}},
	}}}
}

func TestInterspersed(t *testing.T) {
	for _, tc := range []struct {
		in, want []string
		json     bool
	}{
		{[]string{"writ", "verify", "F", "--key", "P"}, []string{"writ", "verify", "--key", "P", "--", "F"}, false},
		{[]string{"writ", "--json", "verify", "F", "--key=P"}, []string{"writ", "--json", "verify", "--key=P", "--", "F"}, true},
		{[]string{"writ", "verify", "F", "--json=false", "--", "--key"}, []string{"writ", "verify", "--json=false", "--", "F", "--key"}, false},
		{[]string{"writ", "ledger", "append", "R", "--dir", "L"}, []string{"writ", "ledger", "append", "--dir", "L", "--", "R"}, false},
		{[]string{"writ", "verify", "F", "-h"}, []string{"writ", "verify", "--help"}, false},
		{[]string{"writ", "nosuch", "F", "--key", "P"}, []string{"writ", "nosuch", "F", "--key", "P"}, false},
	} {
		got, err := Interspersed(testApp(), tc.in)
		if err != nil || !slices.Equal(got.Args, tc.want) || got.JSON != tc.json {
			t.Errorf("Interspersed(%q) = %q, json %v, %v; want %q, json %v", tc.in, got.Args, got.JSON, err, tc.want, tc.json)
		}
	}
	for _, in := range [][]string{
		{"writ", "verify", "F", "--key"},
		{"writ", "verify", "--lift", "false", "F"},
	} {
		_, err := Interspersed(testApp(), in)
		var xe *exitcode.Error
		if !errors.As(err, &xe) || xe.Code != exitcode.Usage {
			t.Errorf("Interspersed(%q): %v, want bad usage", in, err)
		}
	}
}

func TestSuggestFlag(t *testing.T) {
	cmd := testApp().Commands[0]
	err := SuggestFlag(errors.New("flag provided but not defined: -kye"), cmd, "verify")
	if want := "writ verify has no flag --kye; did you mean --key? (see writ verify --help)"; err.Error() != want {
		t.Errorf("got %q, want %q", err, want)
	}
	err = SuggestFlag(errors.New("flag provided but not defined: -zzzzz"), cmd, "verify")
	if want := "writ verify has no flag --zzzzz (see writ verify --help)"; err.Error() != want {
		t.Errorf("got %q, want %q", err, want)
	}
	if d := editDistance("ab", "ba"); d != 1 {
		t.Errorf("a swap of neighbours costs %d, want 1", d)
	}
}

func TestRepeatedFlagAndJSON(t *testing.T) {
	single, valued := map[string]bool{"key": true}, map[string]bool{"key": true}
	if got := RepeatedFlag([]string{"writ", "--key", "--key", "--key=x"}, single, valued); got != "key" {
		t.Errorf("RepeatedFlag = %q, want key", got)
	}
	if got := RepeatedFlag([]string{"writ", "--key", "a", "--", "--key"}, single, valued); got != "" {
		t.Errorf("RepeatedFlag after -- = %q", got)
	}
	if !JSONRequested([]string{"writ", "x", "--json"}) || JSONRequested([]string{"writ", "--json", "--json=false"}) || JSONRequested([]string{"writ", "--", "--json"}) {
		t.Error("JSONRequested misreads --json")
	}
}

func TestStrict(t *testing.T) {
	ran := false
	app := &cli.App{Commands: []*cli.Command{{
		Name:   "verify",
		Flags:  []cli.Flag{&cli.StringFlag{Name: "key", Required: true}, &cli.StringFlag{Name: "dir"}},
		Action: func(*cli.Context) error { ran = true; return nil },
	}}}
	Strict(app.Commands, func(_ *cli.Context, err error, _ bool) error { return exitcode.Usagef("%v", err) }, "")
	for _, tc := range []struct {
		args []string
		want string // "" : the command runs
	}{
		{[]string{"writ", "verify", "--key", "k"}, ""},
		{[]string{"writ", "verify"}, "--key is required (see writ verify --help)"},
		{[]string{"writ", "verify", "--key", "a", "--key", "b"}, "--key given more than once; it takes one value (see writ verify --help)"},
		{[]string{"writ", "verify", "--key", "k", "--dir="}, "--dir is given an empty value; give a value, or leave the flag out (see writ verify --help)"},
		{[]string{"writ", "verify", "--key", "k", "stray"}, `writ verify takes no arguments, and got "stray" (see writ verify --help)`},
		{[]string{"writ", "verify", "--kye", "k"}, "writ verify has no flag --kye; did you mean --key? (see writ verify --help)"},
	} {
		ran = false
		app.Metadata = map[string]any{ArgsKey: tc.args}
		err := app.Run(tc.args)
		var xe *exitcode.Error
		switch {
		case tc.want == "" && (err != nil || !ran):
			t.Errorf("%q: %v, ran %v; want it run", tc.args, err, ran)
		case tc.want != "" && (ran || !errors.As(err, &xe) || xe.Code != exitcode.Usage || err.Error() != tc.want):
			t.Errorf("%q: %v, ran %v; want bad usage %q", tc.args, err, ran, tc.want)
		}
	}
}
