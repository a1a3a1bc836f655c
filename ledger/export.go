package ledger

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/fxamacker/cbor/v2"
	"github.com/writ-ledger/writ/schemas"
	"golang.org/x/mod/sumdb/tlog"
)

// The export format is a CBOR sequence (RFC 8742) of items, each a
// deterministic CBOR value of at most MaxEntrySize+64 bytes:
//
//	file    = header, 1*section
//	header  = {"format": "writ-ledger-export", "v": 1, "logs": uint}
//	section = log, *bstr            ; exactly "size" entries follow
//	log     = {"name": "authority" / "decisions", "origin": tstr,
//	           "vkey": tstr, "size": uint, "checkpoint": tstr}
//
// "checkpoint" is the log's signed C2SP checkpoint for exactly "size"
// entries. An export carries everything an auditor needs to verify the
// logs offline; nothing in it is trusted until the checkpoint verifies
// under a key the auditor chose and the entries hash to its root.
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
}

// Export writes the logs (name → log, in the order given) to w as one
// export file. Each section is a consistent snapshot: the latest signed
// checkpoint and exactly the entries it covers.
func Export(w io.Writer, names []string, logs []*Log) error {
	bw := bufio.NewWriter(w)
	if err := writeItem(bw, exportHeader{Format: exportFormat, V: 1, Logs: uint64(len(logs))}); err != nil {
		return err
	}
	for i, l := range logs {
		signed, err := l.Checkpoint()
		if err != nil {
			return err
		}
		cp, err := OpenCheckpoint(signed, l.vkey)
		if err != nil {
			return err
		}
		if err := writeItem(bw, ExportedLog{Name: names[i], Origin: l.origin, VKey: l.vkey, Size: cp.Size, Checkpoint: string(signed)}); err != nil {
			return err
		}
		for j := int64(0); j < cp.Size; j++ {
			e, err := l.Entry(j)
			if err != nil {
				return err
			}
			if err := writeItem(bw, e); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

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
type ExportReader struct {
	dec    *cbor.Decoder
	budget *budgetReader
	logs   uint64
	read   uint64
}

// itemBudget is how many bytes the decoder may pull from the file for one
// item (with its read-ahead): a hostile length prefix exhausts it instead
// of memory.
const itemBudget = 4 * (MaxEntrySize + MaxCheckpointSize)

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
		return nil, fmt.Errorf("%w: header: %v", ErrExport, err)
	}
	if h.Format != exportFormat || h.V != 1 || h.Logs == 0 || h.Logs > 2 {
		return nil, fmt.Errorf("%w: not a version 1 writ ledger export with 1 or 2 logs", ErrExport)
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
	var l ExportedLog
	if err := x.decode(&l); err != nil {
		return nil, fmt.Errorf("%w: section header: %v", ErrExport, err)
	}
	if (l.Name != "authority" && l.Name != "decisions") || !ValidOrigin(l.Origin) || l.Size < 0 || len(l.Checkpoint) > MaxCheckpointSize {
		return nil, fmt.Errorf("%w: section header %q is malformed", ErrExport, l.Name)
	}
	return &l, nil
}

// Entry returns the next entry of the current section.
func (x *ExportReader) Entry() ([]byte, error) {
	var e []byte
	if err := x.decode(&e); err != nil {
		return nil, fmt.Errorf("%w: entry: %v", ErrExport, err)
	}
	if len(e) == 0 || len(e) > MaxEntrySize {
		return nil, fmt.Errorf("%w: an entry of %d bytes", ErrExport, len(e))
	}
	return e, nil
}

// VerifySection reads the current section's entries, hands each to fn
// (if not nil) and checks them against the section's checkpoint, which
// must verify under vkey ("" means the section's own key, which proves
// only self-consistency). It returns the verified checkpoint, or an error
// naming the entry or the mismatch (ErrExport, ErrCheckpointSignature, or
// fn's error). Memory stays constant in the section size.
func (x *ExportReader) VerifySection(l *ExportedLog, vkey string, fn EntryFunc) (Checkpoint, error) {
	if vkey == "" {
		vkey = l.VKey
	}
	cp, err := OpenCheckpoint([]byte(l.Checkpoint), vkey)
	if err != nil {
		return Checkpoint{}, err
	}
	if cp.Origin != l.Origin || cp.Size != l.Size {
		return cp, fmt.Errorf("%w: the %s checkpoint is for %s size %d, the section says %s size %d", ErrExport, l.Name, cp.Origin, cp.Size, l.Origin, l.Size)
	}
	var tree TreeBuilder
	for i := int64(0); i < l.Size; i++ {
		e, err := x.Entry()
		if err != nil {
			return cp, fmt.Errorf("%s entry %d: %w", l.Name, i, err)
		}
		tree.Add(tlog.RecordHash(e))
		if fn != nil {
			if err := fn(i, e); err != nil {
				return cp, err
			}
		}
	}
	if root := tree.Root(); root != cp.Hash {
		return cp, &IntegrityError{Index: -1, What: l.Name + " root hash", Expected: hexHash(cp.Hash), Found: hexHash(root),
			Detail: fmt.Sprintf("the %d exported entries do not hash to the signed checkpoint's root", l.Size)}
	}
	return cp, nil
}
