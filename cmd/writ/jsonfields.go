package main

// The JSON result of each command, documented by its type: every field a
// command prints under --json is a field of a struct registered here,
// and its doc tag is what --help says about it.

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/admission"
	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/engine"
	"github.com/writ-ledger/writ/inspect"
	"github.com/writ-ledger/writ/internal/jsonobject"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/repair"
	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/ledger/witness"
	"github.com/writ-ledger/writ/monitor"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/sign"
	"github.com/writ-ledger/writ/transfer"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/audit"
	"github.com/writ-ledger/writ/verify/runner"
)

// resultDoc documents one command's JSON result (jsonobject.Doc: its
// struct types, or prose for a result without a type yet).
type resultDoc = jsonobject.Doc

// typed is a command's result printed as the struct types of the
// examples (jsonobject.Typed): the first always, each later one under its
// condition.
func typed(note string, first any, more ...any) resultDoc {
	return jsonobject.Typed(note, first, more...)
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
	"ledger repair":          typed("", repair.Summary{}, "with --undo", repair.UndoResult{}),
	"ledger export":          typed("nothing with --out -", exportResult{}),
	"ledger import":          typed("one object per imported log", replica.ImportedLog{}),
	"ledger prove":           typed("", formats.InclusionProof{}),
	"ledger consistency":     typed("the proof file witness add-checkpoint --proof reads", formats.ConsistencyProof{}),
	"ledger entry":           typed("nothing with --out -", entryResult{}, "with --inspect", inspect.Description{}),
	"inspect":                typed("", inspect.Description{}),
	"monitor":                typed("one object per record reported", monitor.Event{}),
	"ledger receipt":         typed("nothing with --out -", receiptResult{}),
	"ledger verify-receipt":  typed("", formats.VerifiedReceipt{}),
	"ledger publish":         typed("", runner.PublishedResult{}),
	"ledger migrate":         typed("", engine.Migrated{}),
	"ledger serve":           typed("one object once it listens", listenResult{}),
	"ledger sync":            typed("", replica.SyncedResult{}),
	"admit":                  typed("", admission.Decision{}, "with --rules, one object per rule", rules.Listing{}),
	"admission serve":        {Prose: "none: a server; it logs on stderr"},
	"admission request":      typed("", admission.Response{}),
	"token verify":           typed("", verify.TokenResult{}),
	"audit":                  typed("", audit.Report{}, "with --fleet", audit.FleetReport{}, "with --list, one object per decision", audit.Listed{}),
	"quickstart":             typed("one object per step", quickstartLine{}),
	"witness key generate":   typed("", witness.KeyFiles{}),
	"witness serve":          typed("one object once it listens", listenResult{}),
	"witness add-checkpoint": typed("", witness.Cosignatures{}),
	"witness checkpoint":     typed("", witness.ServedCheckpoint{}),
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
			c.Description += doc.Text()
		}
	}
}
