package replica

import (
	"bufio"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"

	"github.com/fxamacker/cbor/v2"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/progress"
	"github.com/writ-ledger/writ/schemas"
	"golang.org/x/mod/sumdb/tlog"
)

// exportFormat is the header's "format" (the format: [ExportReader]).
const exportFormat = "writ-ledger-export"

// ErrExport is wrapped by every error for an export file that is
// malformed or does not verify.
var ErrExport = errors.New("invalid ledger export")

type exportHeader struct {
	Format string `cbor:"format"`
	V      uint64 `cbor:"v"`
	Logs   uint64 `cbor:"logs"`
}

// ExportedLog is one section header of an export.
type ExportedLog struct {
	Name       string `cbor:"name"`
	Origin     string `cbor:"origin"`
	VKey       string `cbor:"vkey"`
	Size       int64  `cbor:"size"`
	Checkpoint string `cbor:"checkpoint"`
	History    bool   `cbor:"history"`
}

// Export writes the logs (name → log, in the order given) to w as one
// export file. Each section is a consistent snapshot: the latest signed
// checkpoint and exactly the entries it covers.
func Export(w io.Writer, names []string, logs []*ledger.Log) error {
	return ExportWith(w, names, logs, nil)
}

// ExportWith is Export that tells progress (when not nil) the entries
// written, of all the sections' checkpoint sizes. Every section's
// checkpoint is read before the first entry is written.
func ExportWith(w io.Writer, names []string, logs []*ledger.Log, progress progress.Func) error {
	bw := bufio.NewWriter(w)
	if err := writeItem(bw, exportHeader{Format: exportFormat, V: exportVersion, Logs: uint64(len(logs))}); err != nil {
		return err
	}
	signed, cps := make([][]byte, len(logs)), make([]formats.Checkpoint, len(logs))
	var total, done int64
	for i, l := range logs {
		var err error
		if signed[i], err = l.CosignedCheckpoint(); err != nil {
			return err
		}
		if cps[i], err = formats.OpenCheckpoint(signed[i], l.Key()); err != nil {
			return err
		}
		total += cps[i].Size
	}
	for i, l := range logs {
		cp := cps[i]
		if err := writeItem(bw, ExportedLog{Name: names[i], Origin: l.Origin(), VKey: l.VerifierKey(), Size: cp.Size, Checkpoint: string(signed[i]), History: l.HasHistory()}); err != nil {
			return err
		}
		err := l.Walk(cp.Size, func(_ int64, e, h []byte) error {
			if h != nil {
				if err := writeItem(bw, string(h)); err != nil {
					return err
				}
			}
			if err := writeItem(bw, e); err != nil {
				return err
			}
			done++
			progress.Tick(done, total)
			return nil
		})
		if err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	progress.Report(total, total)
	return nil
}

// exportVersion is the export format version this build writes and
// reads: 2 carries the authority log's checkpoint history.
const exportVersion = 2

func writeItem(w io.Writer, v any) error {
	b, err := schemas.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// ExportReader reads an export file item by item, with every item's size
// bounded before it is allocated.
//
// The export format (what [Export] writes) is a CBOR sequence (RFC 8742) of items, each a
// deterministic CBOR value of at most MaxEntrySize+64 bytes:
//
//	file    = header, 1*section
//	header  = {"format": "writ-ledger-export", "v": 2, "logs": uint}
//	section = log, *bstr                 ; "history": false
//	section =/ log, *(tstr, 1*bstr)      ; "history": true
//	log     = {"name": "authority" / "decisions", "origin": tstr,
//	           "vkey": tstr, "size": uint, "checkpoint": tstr,
//	           "history": bool}
//
// Exactly "size" entries (bstr) follow a section's header. "checkpoint"
// is the log's latest signed C2SP checkpoint, for exactly "size"
// entries. In a section with "history" (the authority log), each batch of
// entries is preceded by its history checkpoint (tstr): the signed,
// timestamped checkpoint the log wrote for the batch, whose size is the
// index after the batch's last entry; it gives every entry the time the
// log accepted it. That time is the one signed in the checkpoint's
// cosignature/v1 line by the log key (c2sp.org/tlog-cosignature; see
// [formats.CheckpointTime]), beside its signed-note signature. An export
// carries everything an auditor needs to
// verify the logs offline; nothing in it is trusted until the
// checkpoints verify under a key the auditor chose and the entries hash
// to their roots.
type ExportReader struct {
	dec    *cbor.Decoder
	budget *budgetReader
	logs   uint64
	read   uint64
	items  hash.Hash // SHA-256 of the current section's items, as read
}

// itemBudget is how many bytes the decoder may pull from the file for one
// item (with its read-ahead): a hostile length prefix exhausts it instead
// of memory.
const itemBudget = 4 * (ledger.MaxEntrySize + formats.MaxCheckpointSize)

// budgetReader fails a read once more than its budget has been read since
// the last reset.
type budgetReader struct {
	r    io.Reader
	left int
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("%w: an item larger than %d bytes", ErrExport, itemBudget)
	}
	if len(p) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= n
	return n, err
}

func (x *ExportReader) decode(v any) error {
	x.budget.left = itemBudget
	return x.dec.Decode(v)
}

var exportMode = func() cbor.DecMode {
	m, err := cbor.DecOptions{
		DupMapKey:         cbor.DupMapKeyEnforcedAPF,
		IndefLength:       cbor.IndefLengthForbidden,
		TagsMd:            cbor.TagsForbidden,
		MaxNestedLevels:   4,
		MaxArrayElements:  16,
		MaxMapPairs:       16,
		ExtraReturnErrors: cbor.ExtraDecErrorUnknownField,
	}.DecMode()
	if err != nil {
		panic(err)
	}
	return m
}()

// NewExportReader reads and checks the header of an export file.
func NewExportReader(r io.Reader) (*ExportReader, error) {
	x := &ExportReader{budget: &budgetReader{r: bufio.NewReader(r)}}
	x.dec = exportMode.NewDecoder(x.budget)
	var h exportHeader
	if err := x.decode(&h); err != nil {
		return nil, fmt.Errorf("%w: header: %w", ErrExport, err)
	}
	if h.Format != exportFormat || h.V != exportVersion || h.Logs == 0 || h.Logs > 2 {
		return nil, fmt.Errorf("%w: not a version %d writ ledger export with 1 or 2 logs", ErrExport, exportVersion)
	}
	x.logs = h.Logs
	return x, nil
}

// Next returns the next section's header, or io.EOF after the last one.
// The caller must read exactly Size entries with Entry before calling
// Next again.
func (x *ExportReader) Next() (*ExportedLog, error) {
	if x.read == x.logs {
		var extra any
		if err := x.decode(&extra); err != io.EOF {
			return nil, fmt.Errorf("%w: data after the last section", ErrExport)
		}
		return nil, io.EOF
	}
	x.read++
	x.items = sha256.New()
	var l ExportedLog
	if err := x.decode(&l); err != nil {
		return nil, fmt.Errorf("%w: section header: %w", ErrExport, err)
	}
	if (l.Name != "authority" && l.Name != "decisions") || !formats.ValidOrigin(l.Origin) || l.Size < 0 || len(l.Checkpoint) > formats.MaxCheckpointSize ||
		l.History != (l.Name == "authority") {
		return nil, fmt.Errorf("%w: section header %q is malformed (an authority section carries its checkpoint history, a decisions section none)", ErrExport, l.Name)
	}
	return &l, nil
}

// SectionDigest is the SHA-256 of the items (entries and history
// checkpoints, as encoded) of the current section read so far: two
// passes over one export that read the same bytes of a section have the
// same digest (an import compares them, the history checkpoints not
// being in the tree the root check covers).
func (x *ExportReader) SectionDigest() [32]byte {
	var d [32]byte
	if x.items != nil {
		x.items.Sum(d[:0])
	}
	return d
}

// item returns the next item of the current section: an entry (a byte
// string of 1 to MaxEntrySize bytes) or a history checkpoint (a text
// string of at most MaxCheckpointSize bytes), exactly one of them set.
func (x *ExportReader) item() (entry, checkpoint []byte, err error) {
	var raw cbor.RawMessage
	if err := x.decode(&raw); err != nil {
		return nil, nil, fmt.Errorf("%w: entry: %w", ErrExport, err)
	}
	if x.items != nil {
		x.items.Write(raw)
	}
	switch {
	case len(raw) > 0 && raw[0]>>5 == 3: // text string
		var s string
		if err := exportMode.Unmarshal(raw, &s); err != nil || len(s) > formats.MaxCheckpointSize {
			return nil, nil, fmt.Errorf("%w: a history checkpoint that is not a bounded text string", ErrExport)
		}
		return nil, []byte(s), nil
	case len(raw) > 0 && raw[0]>>5 == 2: // byte string
		var e []byte
		if err := exportMode.Unmarshal(raw, &e); err != nil {
			return nil, nil, fmt.Errorf("%w: entry: %w", ErrExport, err)
		}
		if len(e) == 0 || len(e) > ledger.MaxEntrySize {
			return nil, nil, fmt.Errorf("%w: an entry of %d bytes", ErrExport, len(e))
		}
		return e, nil, nil
	}
	return nil, nil, fmt.Errorf("%w: an item that is neither an entry nor a history checkpoint", ErrExport)
}

// sectionCursor reads one section's items in order: each entry with the
// history checkpoint covering it, checking the history as it goes.
type sectionCursor struct {
	x    *ExportReader
	sec  *ExportedLog
	key  *formats.LogKey
	tree ledger.TreeBuilder
	next int64                   // index of the next entry
	cov  formats.TimedCheckpoint // the history checkpoint covering entries below cov.Size
	have bool
}

// entry returns the next entry, the history checkpoint covering it (zero
// without history), and the signed history checkpoint when one preceded
// it in the file (nil otherwise); after the batch's last entry it checks
// the recomputed root against the checkpoint's.
func (c *sectionCursor) entry() ([]byte, formats.TimedCheckpoint, []byte, error) {
	var fresh []byte
	for {
		e, signed, err := c.x.item()
		if err != nil {
			return nil, formats.TimedCheckpoint{}, nil, fmt.Errorf("%s entry %d: %w", c.sec.Name, c.next, err)
		}
		if signed == nil {
			if c.sec.History && (!c.have || c.next >= c.cov.Size) {
				return nil, formats.TimedCheckpoint{}, nil, fmt.Errorf("%w: %s entry %d is not preceded by the history checkpoint of its batch", ErrExport, c.sec.Name, c.next)
			}
			c.tree.Add(tlog.RecordHash(e))
			c.next++
			if c.sec.History && c.next == c.cov.Size {
				if root := c.tree.Root(); root != c.cov.Hash {
					return nil, formats.TimedCheckpoint{}, nil, &ledger.IntegrityError{Index: c.next - 1, What: fmt.Sprintf("%s history checkpoint of size %d", c.sec.Name, c.cov.Size),
						Expected: hexHash(c.cov.Hash), Found: hexHash(root), Detail: ledger.ErrHistory.Error() + ": its root is not the root of the exported entries"}
				}
			}
			return e, c.cov, fresh, nil
		}
		if !c.sec.History || fresh != nil || (c.have && c.next != c.cov.Size) {
			return nil, formats.TimedCheckpoint{}, nil, fmt.Errorf("%w: a history checkpoint where none belongs (%s, before entry %d)", ErrExport, c.sec.Name, c.next)
		}
		tc, err := c.key.Cosig().Open(signed)
		if err != nil {
			return nil, formats.TimedCheckpoint{}, nil, fmt.Errorf("%s history checkpoint before entry %d: %w: %w", c.sec.Name, c.next, ledger.ErrHistory, err)
		}
		switch {
		case tc.Size <= c.next || tc.Size > c.sec.Size:
			return nil, formats.TimedCheckpoint{}, nil, fmt.Errorf("%w: %s history checkpoint of size %d before entry %d (section size %d)", ledger.ErrHistory, c.sec.Name, tc.Size, c.next, c.sec.Size)
		case c.have && tc.Time.Before(c.cov.Time):
			return nil, formats.TimedCheckpoint{}, nil, fmt.Errorf("%w: %s history checkpoint of size %d is signed at %s, before the previous one (%s)", ledger.ErrHistory, c.sec.Name, tc.Size,
				tc.Time.UTC().Format(time.RFC3339), c.cov.Time.UTC().Format(time.RFC3339))
		}
		c.cov, c.have, fresh = tc, true, signed
	}
}

// finish checks that the history ended with the section's last entry and
// that the section's latest checkpoint is signed no earlier.
func (c *sectionCursor) finish() error {
	if !c.sec.History || c.sec.Size == 0 {
		return nil
	}
	if c.cov.Size != c.sec.Size {
		return fmt.Errorf("%w: the %s history ends at size %d, the section at %d", ledger.ErrHistory, c.sec.Name, c.cov.Size, c.sec.Size)
	}
	if t, err := formats.CheckpointTime([]byte(c.sec.Checkpoint), c.key); err != nil || t.Before(c.cov.Time) {
		return fmt.Errorf("%w: the %s section's checkpoint is signed before its last batch, or carries no signed time", ledger.ErrHistory, c.sec.Name)
	}
	return nil
}

// VerifySection reads the current section's entries, hands each to fn
// (if not nil) with the time the log accepted it (from the section's
// checkpoint history, zero without one), and checks them against the
// section's checkpoint, which must verify under k (nil means the
// section's own key, which proves only self-consistency), and against
// every history checkpoint. It returns the verified checkpoint, or an
// error naming the entry or the mismatch (ErrExport, ErrHistory,
// ErrCheckpointSignature, a section key that does not parse, or fn's
// error; a checkpoint that a key other than the section's own did not
// sign is a *TrustError, rules.VKeyMismatch). Memory stays constant in
// the section size.
func (x *ExportReader) VerifySection(l *ExportedLog, k *formats.LogKey, fn ledger.EntryFunc) (formats.Checkpoint, error) {
	open := formats.OpenCheckpoint
	if k == nil {
		var err error
		if k, err = formats.ParseLogKey(l.VKey); err != nil {
			return formats.Checkpoint{}, fmt.Errorf("%w: the %s section's key: %w", ErrExport, l.Name, err)
		}
	} else if k.String() != l.VKey {
		// A reader's assertion: a checkpoint that key did not sign is a
		// *TrustError listing the keys that did.
		open = func(signed []byte, k *formats.LogKey) (formats.Checkpoint, error) {
			return ledger.OpenTrusted(signed, k, l.Name)
		}
	}
	cp, err := open([]byte(l.Checkpoint), k)
	if err != nil {
		return formats.Checkpoint{}, err
	}
	if cp.Origin != l.Origin || cp.Size != l.Size {
		return cp, fmt.Errorf("%w: the %s checkpoint is for %s size %d, the section says %s size %d", ErrExport, l.Name, cp.Origin, cp.Size, l.Origin, l.Size)
	}
	c := &sectionCursor{x: x, sec: l, key: k}
	for i := int64(0); i < l.Size; i++ {
		e, cov, _, err := c.entry()
		if err != nil {
			return cp, err
		}
		if fn != nil {
			if err := fn(i, e, cov.Time); err != nil {
				return cp, err
			}
		}
	}
	if err := c.finish(); err != nil {
		return cp, err
	}
	if root := c.tree.Root(); root != cp.Hash {
		return cp, &ledger.IntegrityError{Index: -1, What: l.Name + " root hash", Expected: hexHash(cp.Hash), Found: hexHash(root),
			Detail: fmt.Sprintf("the %d exported entries do not hash to the signed checkpoint's root", l.Size)}
	}
	return cp, nil
}

// Logs returns the number of sections the export's header states (1 or
// 2).
func (x *ExportReader) Logs() int { return int(x.logs) }
