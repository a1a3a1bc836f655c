package clicmd

import (
	"encoding/csv"
	"fmt"
	"strconv"
	"text/tabwriter"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/cliflags"
	"github.com/writ-ledger/writ/internal/diagnostic"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/verify/audit"
)

// AuditListFlags are writ audit's flags for --list: which decisions of
// the period to print.
func AuditListFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "list", Usage: "after the audit verifies, print the decisions themselves (time, index, machine, stream, verdict, rule, instruction id, signer, reason), filtered by --verdict, --rule, --machine, --stream, --signer and the period: a table, JSON lines with --json, or CSV with --csv"},
		&cli.StringSliceFlag{Name: "verdict", Usage: "with --list: only this `VERDICT` (admitted, admitted-unsigned, would-refuse, refused; repeat)"},
		&cli.StringSliceFlag{Name: "rule", Usage: "with --list: only decisions this rule `ID` decided, as the report's by_rule counts them (repeat)"},
		&cli.StringSliceFlag{Name: "machine", Usage: "with --list: only machines matching `PATTERN` (repeat)"},
		&cli.StringSliceFlag{Name: "stream", Usage: "with --list: only streams matching `PATTERN` (repeat)"},
		&cli.StringSliceFlag{Name: "signer", Usage: "with --list: only this signer: a key `ID` or a prefix of at least 8 hex digits, or unsigned (repeat)"},
		&cli.IntFlag{Name: "limit", Value: 1000, Usage: fmt.Sprintf("with --list: print at most `N` decisions (1 to %d), the first of the period; all matches are counted", audit.MaxList)},
	}
}

// AuditListFilter reads --list and its filters: nil without --list; bad
// usage for a filter without --list, --list with --fleet or --html, or a
// filter that does not check (audit.Filter.Check).
func AuditListFilter(c *cli.Context) (*audit.Filter, error) {
	given := cliflags.Given(c, "verdict", "rule", "machine", "stream", "signer", "limit")
	if !c.Bool("list") {
		if len(given) > 0 {
			return nil, exitcode.Usagef("--%s goes with --list", given[0])
		}
		return nil, nil
	}
	if other := cliflags.Given(c, "fleet", "html"); len(other) > 0 {
		return nil, exitcode.Usagef("--list lists one ledger's decisions; it does not go with --%s", other[0])
	}
	f := &audit.Filter{Verdicts: c.StringSlice("verdict"), Rules: c.StringSlice("rule"), Machines: c.StringSlice("machine"),
		Streams: c.StringSlice("stream"), Signers: c.StringSlice("signer"), Limit: c.Int("limit")}
	if err := f.Check(); err != nil {
		return nil, exitcode.Usagef("--list: %v", err)
	}
	return f, nil
}

// PrintAuditList prints the decisions a verified audit listed: one JSON
// object per line with --json, CSV with --csv (a header row first), else
// a table and a line that counts them. When more matched than were kept
// a note on stderr says so.
func PrintAuditList(c *cli.Context, rep *audit.Report) error {
	l := rep.List
	if int64(len(l.Shown)) < l.Matched {
		diagnostic.Write(c.App.ErrWriter, cliflags.WantJSON(c), diagnostic.Note,
			fmt.Sprintf("%d decisions matched; the first %d are listed (raise --limit, up to %d, or narrow the filters)", l.Matched, len(l.Shown), audit.MaxList))
	}
	switch {
	case cliflags.WantJSON(c):
		for _, d := range l.Shown {
			if err := Emit(c, d); err != nil {
				return err
			}
		}
		return nil
	case c.Bool("csv"):
		w := csv.NewWriter(c.App.Writer)
		w.Write([]string{"decision_index", "time", "machine", "stream", "verdict", "rule", "instruction_id", "signer", "mode", "reason"})
		for _, d := range l.Shown {
			w.Write([]string{strconv.FormatInt(d.Index, 10), d.Time, d.Machine, d.Stream, d.Verdict, d.Rule, d.InstructionID, d.Signer, d.Mode, d.Reason})
		}
		w.Flush()
		return w.Error()
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tINDEX\tMACHINE\tSTREAM\tVERDICT\tRULE\tINSTRUCTION\tSIGNER\tREASON")
	for _, d := range l.Shown {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.Time, d.Index, cell(d.Machine), cell(d.Stream), d.Verdict, d.Rule,
			cell(d.InstructionID), shortKey(d.Signer), d.Reason)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(c.App.Writer, "%d of %d matching decisions listed, from a verified audit of %d decisions in the period\n", len(l.Shown), l.Matched, rep.Decisions)
	return err
}

// cell is s, or "-" when empty.
func cell(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// shortKey is a key id's first 16 hex digits, "unsigned" for none.
func shortKey(id string) string {
	if id == "" {
		return "unsigned"
	}
	return id[:min(16, len(id))]
}
