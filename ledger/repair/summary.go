package repair

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/writ-ledger/writ/internal/humanize"
)

// Summary is a repair's result as writ ledger repair prints it: the
// RepairResult, the command that undoes it, and the same for people (one
// line for each log, its skipped files, the undo command) with the
// warning a rebuilt or restored ledger calls for.
type Summary struct {
	Dir      string        `json:"dir" doc:"the ledger directory"`
	SetAside string        `json:"set_aside" doc:"DIR/set-aside/STAMP, where the damaged stores are kept; \"\" when nothing was moved"`
	Logs     []RepairedLog `json:"logs" doc:"each log's log, action (whole, rebuilt or restored), size and checkpoint (entries), skipped (files not used)"`
	Undo     string        `json:"undo" doc:"the command that undoes it"`
	// Lines is the summary for people, one line each, without newlines.
	Lines []string `json:"-"`
	// Warning, when not "", is what to check before trusting a rebuilt
	// (or restored) ledger: said on stderr, not in the result.
	Warning string `json:"-"`
}

// Summarize says what the repair res of the ledger at dir did; from is
// the export it restored from ("" for a rebuild). Undo is "writ ledger
// repair --dir DIR --undo" (DIR shell-quoted) when the repair set a store
// aside, else "".
func Summarize(res *RepairResult, dir, from string) Summary {
	s := Summary{Dir: dir, SetAside: res.SetAside, Logs: res.Logs}
	if res.SetAside != "" {
		s.Undo = "writ ledger repair --dir " + humanize.ShellQuote(dir) + " --undo"
	}
	for _, l := range res.Logs {
		verified := fmt.Sprintf("%s verified against its signed checkpoint of %s", humanize.Plural(l.Size, "entry", "entries"), humanize.Plural(l.Checkpoint, "entry", "entries"))
		kept := filepath.Join(res.SetAside, l.Name)
		switch l.Action {
		case "whole":
			s.Lines = append(s.Lines, fmt.Sprintf("%s log: whole, %s; nothing changed", l.Name, verified))
		case "rebuilt":
			s.Warning = fmt.Sprintf("a rebuilt log holds what its files still held: compare its checkpoint (writ ledger checkpoint --dir %s) with one you trust (a witness's cosigned checkpoint, a replica's) before appending", humanize.ShellQuote(dir))
			s.Lines = append(s.Lines, fmt.Sprintf("%s log: rebuilt from the damaged store's files, %s; the damaged store is kept in %s", l.Name, verified, kept))
		case "set-aside":
			s.Lines = append(s.Lines, fmt.Sprintf("%s log: not in %s; the damaged store stays set aside in %s: restore it from an export that holds it", l.Name, from, kept))
			continue
		default:
			s.Warning = "a restored ledger holds what the export held: anything appended after the export was made is not in it"
			s.Lines = append(s.Lines, fmt.Sprintf("%s log: restored from %s, %s; the damaged store is kept in %s", l.Name, from, verified, kept))
		}
		if len(l.Skipped) > 0 {
			s.Lines = append(s.Lines, fmt.Sprintf("%s log: not used, as they do not read back (kept in %s): %s", l.Name, res.SetAside, strings.Join(l.Skipped, ", ")))
		}
	}
	if s.Undo != "" {
		s.Lines = append(s.Lines, "undo: "+s.Undo)
	}
	return s
}

// Lines says what the undo did, for people: the stores put back and,
// when there were any, what the repair had made and the undo kept.
func (r *UndoResult) Lines() []string {
	lines := []string{fmt.Sprintf("undone: the %s store put back as it was before the repair", strings.Join(r.Restored, " and "))}
	if len(r.Kept) > 0 {
		lines = append(lines, "kept what the repair had made: "+strings.Join(r.Kept, ", "))
	}
	return lines
}
