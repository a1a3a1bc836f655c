package replica

import (
	"fmt"
	"io"
	"strings"

	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/progress"
)

// ExportedDir is what ExportDir wrote: each section's log name
// (ledgerdir.AuthorityLog, then ledgerdir.DecisionsLog when exported) and
// its log's size in entries, in the file's order, and the file's size in
// bytes.
type ExportedDir struct {
	Logs  []string
	Sizes []int64
	Bytes int
}

// ExportDir writes an export of the ledger directory d to w
// (ExportWith, progress told the entries written): its authority log,
// and its decision log when it has one and authorityOnly is false
// (ledgerdir.Dir.OpenExport). The logs are opened for reading and closed
// again. Errors: the open's as a *ledgerdir.OpenError; else ExportWith's
// (w's, and the logs' read and checkpoint errors).
func ExportDir(w io.Writer, d ledgerdir.Dir, authorityOnly bool, progress progress.Func) (*ExportedDir, error) {
	names, logs, err := d.OpenExport(authorityOnly)
	if err != nil {
		return nil, &ledgerdir.OpenError{Err: err}
	}
	for _, l := range logs {
		defer l.Close()
	}
	cw := &countingWriter{w: w}
	if err := ExportWith(cw, names, logs, progress); err != nil {
		return nil, err
	}
	out := &ExportedDir{Logs: names, Sizes: make([]int64, len(logs)), Bytes: cw.n}
	for i, l := range logs {
		out.Sizes[i] = l.Size()
	}
	return out, nil
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += n
	return n, err
}

// Text is writ ledger export's line for people: each log's section name
// and entry count, the file written (out) and its size in bytes.
func (x *ExportedDir) Text(out string) string {
	sizes := make([]string, len(x.Logs))
	for i, name := range x.Logs {
		sizes[i] = fmt.Sprintf("%s %d", name, x.Sizes[i])
	}
	return fmt.Sprintf("exported %s to %s (%d bytes)", strings.Join(sizes, ", "), out, x.Bytes)
}
