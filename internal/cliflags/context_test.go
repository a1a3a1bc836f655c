package cliflags

import (
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/exitcode"
	"golang.org/x/mod/sumdb/note"
)

// runCtx runs args on an app with the command group "ledger append" and
// the command "verify", and returns what check returned for the
// command's context.
func runCtx(t *testing.T, args []string, check func(c *cli.Context) error) error {
	t.Helper()
	flags := func() []cli.Flag {
		return []cli.Flag{&cli.BoolFlag{Name: "json"}, &cli.StringFlag{Name: "vkey"}}
	}
	app := &cli.App{Name: "writ", Flags: []cli.Flag{&cli.BoolFlag{Name: "json"}}, Commands: []*cli.Command{
		{Name: "verify", Flags: flags(), Action: check},
		{Name: "ledger", Subcommands: []*cli.Command{{Name: "append", Flags: flags(), Action: check}}},
	}}
	return app.Run(args)
}

// TestWantJSONCmdPath: --json before or after the command name; the
// command's full name.
func TestWantJSONCmdPath(t *testing.T) {
	for _, tc := range []struct {
		args []string
		json bool
		path string
	}{
		{[]string{"writ", "verify"}, false, "verify"},
		{[]string{"writ", "--json", "verify"}, true, "verify"},
		{[]string{"writ", "ledger", "append", "--json"}, true, "ledger append"},
		{[]string{"writ", "--json", "ledger", "append", "x"}, true, "ledger append"},
	} {
		var json bool
		var path string
		if err := runCtx(t, tc.args, func(c *cli.Context) error {
			json, path = WantJSON(c), CmdPath(c)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if json != tc.json || path != tc.path {
			t.Errorf("%q: WantJSON %v, CmdPath %q; want %v, %q", tc.args, json, path, tc.json, tc.path)
		}
	}
}

// TestWantArgs: exactly n, at least one, else bad usage naming the
// command.
func TestWantArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		n    int
		want string // the error, "" for none
	}{
		{[]string{"writ", "verify", "a"}, 1, ""},
		{[]string{"writ", "verify", "a", "b"}, -1, ""},
		{[]string{"writ", "verify"}, -1, "verify takes FILE..."},
		{[]string{"writ", "ledger", "append", "a", "b"}, 1, "ledger append takes FILE..."},
	} {
		err := runCtx(t, tc.args, func(c *cli.Context) error { return WantArgs(c, tc.n, "FILE...") })
		var xe *exitcode.Error
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case tc.want != "" && (!errors.As(err, &xe) || xe.Code != exitcode.Usage || err.Error() != tc.want):
			t.Errorf("%q: %v, want bad usage %q", tc.args, err, tc.want)
		}
	}
}

// TestLogKey: none, a verifier key, and a value that is not one.
func TestLogKey(t *testing.T) {
	_, vkey, err := note.GenerateKey(rand.Reader, "example.com/log")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		value, want, err string
	}{
		{"", "", ""},
		{vkey, vkey, ""},
		{"nonsense", "", "--vkey: not a signed-note verifier key (<origin>+<8 hex>+<base64>): "},
	} {
		err := runCtx(t, []string{"writ", "verify", "--vkey", tc.value}, func(c *cli.Context) error {
			k, err := LogKey(c, "vkey")
			if err != nil {
				return err
			}
			got := ""
			if k != nil {
				got = k.String()
			}
			if got != tc.want {
				t.Errorf("LogKey(%q) = %v, want %q", tc.value, k, tc.want)
			}
			return nil
		})
		var xe *exitcode.Error
		if tc.err == "" && err != nil || tc.err != "" && (!errors.As(err, &xe) || xe.Code != exitcode.Usage || !strings.HasPrefix(err.Error(), tc.err)) {
			t.Errorf("LogKey(%q): %v, want %q", tc.value, err, tc.err)
		}
	}
}

// TestParseTime: an RFC 3339 time, a duration from now either way, and
// bad usage for anything else.
func TestParseTime(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Time
		err  string
	}{
		{"2026-12-01T00:00:00Z", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), ""},
		{"720h", now.Add(720 * time.Hour), ""},
		{"-1h30m", now.Add(-90 * time.Minute), ""},
		{"tomorrow", time.Time{}, `--expires "tomorrow": want an RFC 3339 time (2026-11-29T10:00:00Z) or a duration from now (720h later, -720h earlier)`},
	} {
		got, err := ParseTime("expires", tc.in, now)
		var xe *exitcode.Error
		if !got.Equal(tc.want) || (tc.err == "") != (err == nil) || err != nil && (err.Error() != tc.err || !errors.As(err, &xe) || xe.Code != exitcode.Usage) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v, %q", tc.in, got, err, tc.want, tc.err)
		}
	}
}
