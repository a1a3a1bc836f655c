package runner

import (
	"fmt"

	"github.com/writ-ledger/writ/internal/humanize"
	"github.com/writ-ledger/writ/ledger/formats"
)

// PublishedResult is a publication's result as writ ledger publish
// prints it under --json (Published.Result).
type PublishedResult struct {
	After      int64               `json:"after" doc:"the published tree size after publishing (entries)"`
	Before     int64               `json:"before" doc:"the published tree size before (entries)"`
	Bytes      int64               `json:"bytes" doc:"bytes written"`
	Files      int                 `json:"files" doc:"files written, the checkpoint included"`
	Log        string              `json:"log" doc:"which log: authority or decisions"`
	Origin     string              `json:"origin" doc:"the log's origin (the first line of its checkpoint)"`
	Witnessing *formats.Witnessing `json:"witnessing,omitempty" doc:"what --policy found"`
}

// Result is p as the PublishedResult of the log named log ("authority"
// or "decisions") whose origin is origin.
func (p Published) Result(log, origin string) PublishedResult {
	return PublishedResult{Log: log, Origin: origin, Before: p.Before, After: p.After, Files: p.Files, Bytes: p.Bytes, Witnessing: p.Witnessing}
}

// Text says what the publication into the directory to did, for people,
// on one line: the log, its sizes before and after, the files and bytes
// written, and what a policy found.
func (r PublishedResult) Text(to string) string {
	text := fmt.Sprintf("published %s log %s: %d → %d entries, %s, %d bytes, into %s", r.Log, r.Origin, r.Before, r.After, humanize.Plural(int64(r.Files), "file", "files"), r.Bytes, to)
	if r.Witnessing != nil {
		text += "; " + humanize.Witnessed(*r.Witnessing)
	}
	return text
}
