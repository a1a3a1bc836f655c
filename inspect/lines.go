package inspect

import (
	"fmt"
)

// Lines renders d for people: what the file is (and that it is not
// verified), its digest, the command that verifies it, then its signers
// and fields, one per line, names padded to one column.
func (d *Description) Lines() []string {
	how := " (not verified: inspect only parses)"
	if d.Record != nil && d.Record.Ledger != nil {
		how = " (judged against the ledger: see the ledger line)"
	}
	out := []string{"what:     " + d.what() + how,
		fmt.Sprintf("digest:   %s (%d bytes)", d.Digest, d.Bytes), "verify:   " + d.VerifyWith}
	switch {
	case d.Record != nil:
		out = append(out, d.Record.lines(d.Zone)...)
	case d.Receipt != nil:
		r := d.Receipt
		out = append(out, fmt.Sprintf("origin:   %s", text(r.Origin)), "log key:  "+r.KeyID,
			fmt.Sprintf("entry:    %d of a tree of %d (stated, not signed: the proof checks it)", r.Index, r.TreeSize),
			fmt.Sprintf("path:     %d hashes", r.PathHashes))
		if r.Carried != nil {
			out = append(out, "carries a checkpoint:")
			out = append(out, indent(r.Carried.lines(d.Zone))...)
		}
	case d.Checkpoint != nil:
		out = append(out, d.Checkpoint.lines(d.Zone)...)
	case d.Export != nil:
		s := d.Export.First
		out = append(out, fmt.Sprintf("sections: %d", d.Export.Logs), fmt.Sprintf("first:    the %s log, %s, %d entries", s.Name, text(s.Origin), s.Size),
			"vkey:     "+text(s.VKey))
	case d.Key != nil:
		if d.Key.KeyID != "" {
			out = append(out, "key id:   "+d.Key.KeyID)
		}
		switch {
		case d.Format == FormatWitnessKey:
			out = append(out, "witness:  "+text(d.Key.Origin))
		case d.Key.Origin != "":
			out = append(out, "origin:   "+text(d.Key.Origin))
		}
	}
	return out
}

// what says in words what the file is.
func (d *Description) what() string {
	switch d.Format {
	case FormatRecord:
		return fmt.Sprintf("a signed writ %s record (%s, %d signature%s)", d.Record.Kind, d.Record.Envelope, len(d.Record.Signers), plural(len(d.Record.Signers)))
	case FormatUnsigned:
		return "an unsigned writ instruction (bare CBOR, no signature)"
	case FormatDecision:
		return "a writ decision record (a runner's decision log entry, bare CBOR: the log's checkpoints sign it)"
	case FormatReceipt:
		return "a receipt (RFC 9942 COSE_Sign1 with an inclusion proof)"
	case FormatCheckpoint:
		return "a signed checkpoint (c2sp.org/tlog-checkpoint)"
	case FormatExport:
		return "a writ ledger export"
	}
	return d.Key.Kind
}

// lines lists a record's validity problem, signers and fields.
func (r *Record) lines(zone string) []string {
	var out []string
	if r.Invalid != "" {
		out = append(out, "INVALID:  "+text(r.Invalid)+" (writ refuses this record)")
	}
	switch v := r.Ledger; {
	case v == nil:
	case v.Entry != nil:
		out = append(out, fmt.Sprintf("ledger:   entry %d of the ledger, accepted when it was appended", *v.Entry))
	case v.Accepted:
		out = append(out, "ledger:   ledger append would accept it now (signatures and authority checked)")
	default:
		out = append(out, fmt.Sprintf("ledger:   ledger append would REFUSE it now: %s", text(v.Reason)))
	}
	for _, s := range r.Signers {
		out = append(out, "signer:   key "+s.KeyID)
		switch {
		case s.RootKey != "":
			out = append(out, "          a key of "+s.RootKey)
		case s.Authority != nil && s.Authority.Allowed:
			for i, l := range s.Authority.Chain {
				word := "under"
				if i > 0 {
					word = "from"
				}
				out = append(out, fmt.Sprintf("          %s delegation %s (ledger index %d), issued by %s, valid %s to %s", word, l.Digest, l.Index, l.IssuedBy, l.NotBefore, l.NotAfter))
			}
		case s.Authority != nil:
			out = append(out, fmt.Sprintf("          may not %s now: %s (rule %s)", s.Authority.Action, s.Authority.Reason, s.Authority.Rule))
		}
	}
	width := 0
	for _, f := range r.Fields {
		width = max(width, len(f.Name))
	}
	out = append(out, "fields:")
	for _, f := range r.Fields {
		v := f.Value
		if f.Time != nil {
			v = f.Time.text(zone)
		}
		out = append(out, fmt.Sprintf("  %-*s  %s", width, f.Name, v))
	}
	return out
}

// lines lists a checkpoint's body and signature lines.
func (c *Checkpoint) lines(zone string) []string {
	out := []string{"origin:   " + text(c.Origin), fmt.Sprintf("size:     %d entries", c.Size), "root:     " + c.Root}
	for _, l := range c.Lines {
		s := fmt.Sprintf("signed:   %s (key hash %s)", text(l.Name), l.Hash)
		if l.Cosigned != nil {
			s += ", a cosignature at " + l.Cosigned.text(zone)
		}
		out = append(out, s)
	}
	return out
}

func indent(lines []string) []string {
	for i := range lines {
		lines[i] = "  " + lines[i]
	}
	return lines
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// text is the UTC time, with the local one beside it when the zone is
// not UTC.
func (t *Time) text(zone string) string {
	if t.Local == t.UTC {
		return t.UTC
	}
	return fmt.Sprintf("%s (local %s %s)", t.UTC, t.Local, zone)
}
