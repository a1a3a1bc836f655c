package audit

import (
	"fmt"

	"github.com/writ-ledger/writ/internal/humanize"
)

// LogSummary is one log's verified checkpoint, named: part of writ ledger
// verify's and writ ledger checkpoint's JSON results.
type LogSummary struct {
	Log      string `json:"log" doc:"authority or decisions"`
	Origin   string `json:"origin" doc:"the log's origin"`
	Size     int64  `json:"size" doc:"entries"`
	RootHash string `json:"root_hash" doc:"the tree's root hash, hex"`
}

// Verified is the summary of a report whose audit passed (Report.Verified):
// writ ledger verify's JSON result.
type Verified struct {
	OK   bool         `json:"ok" doc:"true"`
	Logs []LogSummary `json:"logs" doc:"each log's log, origin, size, root_hash"`
}

// VerifyFailure is the summary of a report whose audit failed
// (Report.Verified): writ ledger verify's JSON result then.
type VerifyFailure struct {
	OK    bool   `json:"ok" doc:"false"`
	Log   string `json:"log" doc:"the log that failed"`
	Index int64  `json:"index" doc:"the entry that failed"`
	Error string `json:"error" doc:"why"`
}

// Verified summarises r: for a passed audit, each verified log's
// checkpoint (the authority log's, then the decision log's when there is
// one) and a nil *VerifyFailure; for a failed one, the failure.
func (r *Report) Verified() (Verified, *VerifyFailure) {
	if !r.OK {
		f := r.Failure
		return Verified{}, &VerifyFailure{Log: f.Log, Index: f.Index, Error: f.Error}
	}
	v := Verified{OK: true}
	for _, l := range []struct {
		name string
		cp   *CheckpointSummary
	}{{"authority", r.Authority}, {"decisions", r.DecisionLog}} {
		if l.cp != nil {
			v.Logs = append(v.Logs, LogSummary{l.name, l.cp.Origin, l.cp.Size, l.cp.RootHash})
		}
	}
	return v, nil
}

// Lines is writ ledger verify's text for people: one "ok:" line per log
// with its origin, size and root hash.
func (v *Verified) Lines() []string {
	lines := make([]string, 0, len(v.Logs))
	for _, r := range v.Logs {
		lines = append(lines, fmt.Sprintf("ok: %s log %s: %s, root %s", r.Log, r.Origin, humanize.Plural(r.Size, "entry", "entries"), r.RootHash))
	}
	return lines
}
