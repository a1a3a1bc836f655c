package repair_test

import (
	"slices"
	"testing"

	"github.com/writ-ledger/writ/ledger/repair"
)

// TestSummarize: each action's line, the skipped files, the undo command
// (the directory shell-quoted) and the warning a rebuild or a restore
// calls for, exactly.
func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		name, from string
		res        repair.RepairResult
		lines      []string
		undo, warn string
	}{
		{name: "whole", res: repair.RepairResult{Logs: []repair.RepairedLog{{Name: "authority", Action: "whole", Size: 1, Checkpoint: 1}}},
			lines: []string{"authority log: whole, 1 entry verified against its signed checkpoint of 1 entry; nothing changed"}},
		{name: "rebuilt", res: repair.RepairResult{SetAside: "/l l/set-aside/S", Logs: []repair.RepairedLog{{Name: "decisions", Action: "rebuilt", Size: 2, Checkpoint: 3, Skipped: []string{"a.vlog", "b.sst"}}}},
			lines: []string{"decisions log: rebuilt from the damaged store's files, 2 entries verified against its signed checkpoint of 3 entries; the damaged store is kept in /l l/set-aside/S/decisions",
				"decisions log: not used, as they do not read back (kept in /l l/set-aside/S): a.vlog, b.sst",
				"undo: writ ledger repair --dir '/l l' --undo"},
			undo: "writ ledger repair --dir '/l l' --undo",
			warn: "a rebuilt log holds what its files still held: compare its checkpoint (writ ledger checkpoint --dir '/l l') with one you trust (a witness's cosigned checkpoint, a replica's) before appending"},
		{name: "restored", from: "x.export", res: repair.RepairResult{SetAside: "/l/set-aside/S", Logs: []repair.RepairedLog{
			{Name: "authority", Action: "restored", Size: 4, Checkpoint: 4}, {Name: "decisions", Action: "set-aside", Skipped: []string{"ignored"}}}},
			lines: []string{"authority log: restored from x.export, 4 entries verified against its signed checkpoint of 4 entries; the damaged store is kept in /l/set-aside/S/authority",
				"decisions log: not in x.export; the damaged store stays set aside in /l/set-aside/S/decisions: restore it from an export that holds it",
				"undo: writ ledger repair --dir /l --undo"},
			undo: "writ ledger repair --dir /l --undo",
			warn: "a restored ledger holds what the export held: anything appended after the export was made is not in it"},
	} {
		dir := "/l"
		if tc.name == "rebuilt" {
			dir = "/l l"
		}
		s := repair.Summarize(&tc.res, dir, tc.from)
		if !slices.Equal(s.Lines, tc.lines) || s.Undo != tc.undo || s.Warning != tc.warn || s.Dir != dir || s.SetAside != tc.res.SetAside {
			t.Errorf("%s: got %+v", tc.name, s)
		}
	}
}

// TestUndoResultLines: the stores put back, then what was kept, if any.
func TestUndoResultLines(t *testing.T) {
	got := (&repair.UndoResult{Restored: []string{"authority", "decisions"}}).Lines()
	if want := []string{"undone: the authority and decisions store put back as it was before the repair"}; !slices.Equal(got, want) {
		t.Errorf("got %q", got)
	}
	got = (&repair.UndoResult{Restored: []string{"authority"}, Kept: []string{"authority.repaired", "x"}}).Lines()
	if want := []string{"undone: the authority store put back as it was before the repair", "kept what the repair had made: authority.repaired, x"}; !slices.Equal(got, want) {
		t.Errorf("got %q", got)
	}
}
