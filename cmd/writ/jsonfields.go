package main

// The JSON result of each command, documented by its type: every field a
// command prints under --json is a field of a struct registered here,
// and its doc tag is what --help says about it.

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/admission"
	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/jsonobject"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/repair"
	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/ledger/witness"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/sign"
	"github.com/writ-ledger/writ/transfer"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/audit"
)

// resultDoc documents one command's JSON result: the struct types it
// prints (each shape, and when it prints it), or, for a command whose
// result has no type yet, prose.
type resultDoc struct {
	note   string  // said first: how many objects, when
	shapes []shape // the struct types printed
	prose  string  // the fields in prose, for a result without a type
}

// shape is one struct type a command prints, and when.
type shape struct {
	when string // "" for the result, else the condition ("with --undo")
	t    reflect.Type
}

// typed is a command's result printed as the struct types of the
// examples: the first always, each later one under its condition. A
// type that writes itself (MarshalJSON) names the struct it writes with
// a JSONShape method.
func typed(note string, first any, more ...any) resultDoc {
	typeOf := func(v any) reflect.Type {
		if s, ok := v.(interface{ JSONShape() any }); ok {
			v = s.JSONShape()
		}
		return reflect.TypeOf(v)
	}
	d := resultDoc{note: note, shapes: []shape{{t: typeOf(first)}}}
	for i := 0; i+1 < len(more); i += 2 {
		d.shapes = append(d.shapes, shape{when: more[i].(string), t: typeOf(more[i+1])})
	}
	return d
}

// results documents each command's JSON result under --json (keyed by
// the command's full name). Shapes are listed in --help; the tests fail
// when a command prints a field its shapes do not declare, or a shape
// has a field without a doc tag. A command gets its entry as typed(note,
// its result struct, [condition, another struct]...), the struct's
// package wherever it lives; prose is left only for results that have no
// type yet. A failure is {"error", "exit", "rule", "hints"} on stderr for
// every command; that is not repeated here.
var results = map[string]resultDoc{
	"key generate":           typed("", keyResult{}),
	"key id":                 typed("", keyIDResult{}),
	"verify":                 typed("", sign.ForeignResult{}, "when the signature verifies but the payload is not its record", sign.ForeignRecordResult{}, "when it does not verify", sign.ForeignFailure{}),
	"root sign":              typed("", rootResult{}),
	"delegate":               typed("", delegateResult{}),
	"revoke":                 typed("", revokeResult{}),
	"issuer":                 typed("", issuerResult{}),
	"quarantine":             typed("", quarantineResult{}),
	"downgrade":              typed("", downgradeResult{}),
	"pin":                    typed("", pinResult{}),
	"instruct":               typed("", instructResult{}),
	"transfer verify":        typed("", transfer.Comparison{}),
	"authority explain":      typed("", delegation.Explanation{}),
	"ledger init":            typed("", verify.Created{}),
	"ledger vkey":            typed("", vkeyResult{}),
	"ledger append":          typed("one object per appended record", delegation.Applied{}),
	"ledger checkpoint":      typed("", checkpointResult{}),
	"ledger verify":          typed("", audit.Verified{}, "when not", audit.VerifyFailure{}),
	"ledger repair":          typed("", repairJSON{}, "with --undo", repair.UndoResult{}),
	"ledger export":          typed("nothing with --out -", exportResult{}),
	"ledger import":          typed("one object per imported log", replica.ImportedLog{}),
	"ledger prove":           typed("", formats.InclusionProof{}),
	"ledger consistency":     typed("the proof file witness add-checkpoint --proof reads", formats.ConsistencyProof{}),
	"ledger entry":           typed("nothing with --out -", entryResult{}),
	"ledger receipt":         typed("nothing with --out -", receiptResult{}),
	"ledger verify-receipt":  typed("", formats.VerifiedReceipt{}),
	"ledger publish":         typed("", publishedJSON{}),
	"ledger serve":           typed("one object once it listens", listenResult{}),
	"ledger sync":            typed("", syncedJSON{}),
	"admit":                  typed("", admission.Decision{}, "with --rules, one object per rule", rules.Listing{}),
	"admission serve":        {prose: "none: a server; it logs on stderr"},
	"admission request":      typed("", admission.Response{}),
	"token verify":           typed("", verify.TokenResult{}),
	"audit":                  typed("", audit.Report{}, "with --fleet", audit.FleetReport{}),
	"quickstart":             typed("one object per step", quickstartLine{}),
	"witness key generate":   typed("", witness.KeyFiles{}),
	"witness serve":          typed("one object once it listens", listenResult{}),
	"witness add-checkpoint": typed("", witness.Cosignatures{}),
	"witness checkpoint":     typed("", witness.ServedCheckpoint{}),
}

// text is the result's documentation as --help shows it.
func (d resultDoc) text() string {
	if d.prose != "" {
		return "JSON result (--json): " + d.prose + "."
	}
	var b strings.Builder
	b.WriteString("JSON result (--json)")
	if d.note != "" {
		b.WriteString(", " + d.note)
	}
	b.WriteString(":")
	for _, s := range d.shapes {
		if s.when != "" {
			b.WriteString("\n" + s.when + ":")
		}
		fs := jsonobject.Fields(s.t)
		width := 0
		for _, f := range fs {
			width = max(width, len(f.Name))
		}
		for _, f := range fs {
			fmt.Fprintf(&b, "\n  %-*s  %s", width, f.Name, f.Doc)
		}
	}
	return b.String()
}

// documentJSON appends each command's JSON fields to its --help, and
// gives every command the --json flag (also accepted before the command
// name).
func documentJSON(cmds []*cli.Command, prefix string) {
	for _, c := range cmds {
		name := strings.TrimSpace(prefix + " " + c.Name)
		if len(c.Subcommands) > 0 {
			documentJSON(c.Subcommands, name)
			continue
		}
		if !slices.ContainsFunc(c.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), "json") }) {
			c.Flags = append(c.Flags, jsonFlag)
		}
		if doc, ok := results[name]; ok {
			if c.Description != "" {
				c.Description += "\n\n"
			}
			c.Description += doc.text()
		}
	}
}
