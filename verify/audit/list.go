package audit

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
)

// MaxList bounds the decisions one audit keeps to list (Filter.Limit):
// about 400 bytes each, 40 MB at most, whatever the log's size.
const MaxList = 100_000

// DetailsPerRule is how many decisions the report keeps per rule for
// the page's details tables (Report.Details): the first of the period.
const DetailsPerRule = 50

// MaxKeyLabels bounds the keys the audit labels from the authority log
// (Report.KeyLabels), before it keeps those of the signers it counted.
const MaxKeyLabels = 1000

// DetailRules bounds the rules Report.Details keeps decisions for (the
// first met): a decision log whose every decision names a rule of its
// own cannot make an audit hold a table per decision. The rule table
// has fewer.
const DetailRules = 128

// Filter selects the decisions an audit lists (writ audit --list): each
// field given must match (an empty field matches everything), within the
// audit's period (Options.Since, Until). Rules match the deciding rule,
// the one Report.ByRule counts by. Machines and Streams are
// path.Match patterns ('*' within a segment); Signers are key ids or
// prefixes of at least 8 hex digits, or "unsigned". Limit is how many
// matches are kept (1 to MaxList); the rest are counted.
type Filter struct {
	Verdicts, Rules, Machines, Streams, Signers []string
	Limit                                       int
}

// Listed is one decision, as writ audit --list prints it.
type Listed struct {
	Index         int64  `json:"decision_index" doc:"the decision's index in the decision log"`
	Time          string `json:"time" doc:"when the runner decided, RFC 3339 UTC"`
	Machine       string `json:"machine" doc:"the runner's machine name"`
	InstructionID string `json:"instruction_id" doc:"the instruction's id, empty when it had none that decoded"`
	Stream        string `json:"stream" doc:"the instruction's stream"`
	Signer        string `json:"signer" doc:"the signer's key id, empty for an unsigned dispatch"`
	Mode          string `json:"mode" doc:"off, warn or enforce"`
	Verdict       string `json:"verdict" doc:"admitted, admitted-unsigned, would-refuse or refused"`
	Rule          string `json:"rule" doc:"the deciding rule id; ok when nothing failed"`
	Reason        string `json:"reason" doc:"the check the deciding rule names, which failed (empty for ok), and for a digest that did not match, expected and found"`
}

// List is what a filtered audit found: the decisions kept (Shown, in log
// order) and how many matched in all.
type List struct {
	Matched int64    `json:"matched" doc:"decisions in the period that match the filters"`
	Shown   []Listed `json:"-"`
}

// Check refuses a filter that could never match or could hold too much:
// an unknown verdict or rule (rules.Lookup), an empty or bad pattern, a
// signer that is neither a key id
// prefix of at least 8 hex digits nor "unsigned", a limit outside 1 to
// MaxList. Errors name the field and the rule.
func (f *Filter) Check() error {
	for _, v := range f.Verdicts {
		if !slices.Contains(schemas.Verdicts, schemas.Verdict(v)) {
			return fmt.Errorf("verdict %q: one of %v", v, schemas.Verdicts)
		}
	}
	for _, r := range f.Rules {
		if _, ok := rules.Lookup(r); !ok {
			return fmt.Errorf("rule %q: not a rule this writ knows (writ admit --rules lists them)", r)
		}
	}
	for _, p := range append(slices.Clone(f.Machines), f.Streams...) {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("pattern %q: %w", p, err)
		} else if p == "" {
			return fmt.Errorf("pattern \"\": an empty pattern matches nothing")
		}
	}
	for _, s := range f.Signers {
		if s != "unsigned" && (len(s) < 8 || len(s) > 64 || strings.Trim(s, "0123456789abcdef") != "") {
			return fmt.Errorf("signer %q: a key id or a prefix of at least 8 lowercase hex digits, or unsigned", s)
		}
	}
	if f.Limit < 1 || f.Limit > MaxList {
		return fmt.Errorf("limit %d: from 1 to %d", f.Limit, MaxList)
	}
	return nil
}

// matches reports whether d passes every filter given.
func (f *Filter) matches(d *schemas.Decision) bool {
	anyOf := func(list []string, ok func(string) bool) bool { return len(list) == 0 || slices.ContainsFunc(list, ok) }
	glob := func(s string) func(string) bool {
		return func(p string) bool { m, _ := path.Match(p, s); return m }
	}
	return anyOf(f.Verdicts, func(v string) bool { return v == string(d.Verdict) }) &&
		anyOf(f.Rules, func(r string) bool { return r == d.Rule }) &&
		anyOf(f.Machines, glob(d.Machine)) && anyOf(f.Streams, glob(d.Stream)) &&
		anyOf(f.Signers, func(s string) bool {
			return (s == "unsigned" && d.Signer == "") || (d.Signer != "" && strings.HasPrefix(d.Signer, s))
		})
}

// listed is decision i as a Listed.
func listed(i int64, d *schemas.Decision) Listed {
	reason := ""
	if r, ok := rules.Lookup(d.Rule); ok && d.Rule != rules.OK {
		reason = fmt.Sprintf("failed the check that %s", r.Summary)
	}
	for _, c := range d.Compared {
		if c.Expected != c.Actual {
			reason += fmt.Sprintf(" (%s: expected %s, found %s)", c.Subject, c.Expected, c.Actual)
		}
	}
	return Listed{Index: i, Time: time.Unix(d.Time, 0).UTC().Format(time.RFC3339), Machine: d.Machine, InstructionID: d.InstructionID,
		Stream: d.Stream, Signer: d.Signer, Mode: d.Mode, Verdict: string(d.Verdict), Rule: d.Rule, Reason: strings.TrimSpace(reason)}
}

// note lists decision i, in the period, when the filter matches it, and
// keeps the first DetailsPerRule of each rule for the page.
func (rep *Report) note(i int64, d *schemas.Decision) {
	if f := rep.opts.List; f != nil && f.matches(d) {
		rep.List.Matched++
		if len(rep.List.Shown) < f.Limit {
			rep.List.Shown = append(rep.List.Shown, listed(i, d))
		}
	}
	if rows, ok := rep.Details[d.Rule]; (ok || len(rep.Details) < DetailRules) && len(rows) < DetailsPerRule {
		rep.Details[d.Rule] = append(rep.Details[d.Rule], listed(i, d))
	}
}
