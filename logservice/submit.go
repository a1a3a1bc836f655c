package logservice

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/fxamacker/cbor/v2"
	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/endpoint"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/failure"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/verify"
)

// Media types of a submission's body.
const (
	// ContentTypeBatch: a CBOR array (RFC 8949) of 1 to MaxRecords byte
	// strings, each a signed record as its file holds it.
	ContentTypeBatch = "application/cbor"
	// ContentTypeRecord: the body is one signed record, as its file
	// holds it.
	ContentTypeRecord = "application/octet-stream"
)

// batchMode decodes a submission's array: definite lengths, no tags.
var batchMode = func() cbor.DecMode {
	m, err := cbor.DecOptions{IndefLength: cbor.IndefLengthForbidden, TagsMd: cbor.TagsForbidden,
		MaxArrayElements: ledger.MaxBatchEntries, MaxNestedLevels: 4}.DecMode()
	if err != nil {
		panic(err)
	}
	return m
}()

// submit answers one submission (AddPath).
func (s *Service) submit(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	status, rule, n := s.add(w, r)
	s.subs.observe(status, rule, n, time.Since(start))
}

// add does submit's work and returns the answer's status, the refusal's
// rule ("" for none) and the records appended.
func (s *Service) add(w http.ResponseWriter, r *http.Request) (int, string, int) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		return refuse(w, http.StatusMethodNotAllowed, exitcode.Usagef("%s takes POST, not %s", AddPath, r.Method), nil)
	}
	a := s.auth.Load()
	if a == nil {
		w.Header().Set("Retry-After", "1")
		return refuse(w, http.StatusServiceUnavailable, &exitcode.Error{Code: exitcode.Busy,
			Err: errors.New("nothing appended: the service is loading the authority state"), Hints: []string{"retry in a second"}}, nil)
	}
	body, err := readBody(r)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return refuse(w, http.StatusRequestEntityTooLarge, exitcode.Input(fmt.Errorf("nothing appended: the body is over %d bytes, this service's limit", tooLarge.Limit),
				"append the records in smaller batches"), nil)
		}
		return refuse(w, http.StatusBadRequest, exitcode.Input(fmt.Errorf("nothing appended: reading the body: %w", err)), nil)
	}
	records, status, err := s.records(r.Header.Get("Content-Type"), body)
	if err != nil {
		return refuse(w, status, err, nil)
	}
	client := s.clientOf(r)
	if ok, retry, full := s.limit.allow(client, len(records), s.opts.Now()); !ok {
		secs := max(1, int((retry+time.Second-1)/time.Second))
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		if full {
			return refuse(w, http.StatusServiceUnavailable, &exitcode.Error{Code: exitcode.Busy, Err: fmt.Errorf("nothing appended: busy (max-clients): %d clients submitted lately, the limit set by --max-clients; retry after %ds", s.opts.MaxClients, secs)}, nil)
		}
		return refuse(w, http.StatusTooManyRequests, &exitcode.Error{Code: exitcode.Busy, Err: fmt.Errorf("nothing appended: too many records (rate): %s may submit %g records a second, %d at once (--rate, --burst); retry after %ds", client, s.opts.Rate, s.opts.Burst, secs)}, nil)
	}
	applied, proofs, err := a.AppendProven(records)
	if err != nil && applied == nil {
		return s.refused(w, err)
	}
	if s.witness != nil {
		s.witness.committed()
	}
	added, err := s.answer(applied, proofs, err)
	if err != nil {
		return refuse(w, http.StatusInternalServerError, fmt.Errorf("appended as entries %d to %d, but the answer failed: %w", applied[0].Index, applied[len(applied)-1].Index, err), nil)
	}
	writeJSON(w, http.StatusOK, added)
	return http.StatusOK, "", len(records)
}

// records splits a submission's body by its media type, or returns the
// refusal's status and error.
func (s *Service) records(contentType string, body []byte) ([][]byte, int, error) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil && contentType != "" {
		return nil, http.StatusUnsupportedMediaType, exitcode.Input(fmt.Errorf("nothing appended: Content-Type %q: %v", contentType, err))
	}
	switch mt {
	case ContentTypeRecord:
		return [][]byte{body}, 0, nil
	case ContentTypeBatch:
		var records [][]byte
		if err := batchMode.Unmarshal(body, &records); err != nil {
			return nil, http.StatusBadRequest, exitcode.Input(fmt.Errorf("nothing appended: the body is not a CBOR array of records (byte strings): %v", err))
		}
		switch {
		case len(records) == 0:
			return nil, http.StatusBadRequest, exitcode.Input(errors.New("nothing appended: the body holds no record"))
		case len(records) > s.opts.MaxRecords:
			return nil, http.StatusRequestEntityTooLarge, exitcode.Input(fmt.Errorf("nothing appended: %d records, at most %d in one submission (--max-records)", len(records), s.opts.MaxRecords),
				"append the records in smaller batches")
		}
		return records, 0, nil
	}
	return nil, http.StatusUnsupportedMediaType, exitcode.Input(fmt.Errorf("nothing appended: Content-Type %q: want %s (one record) or %s (an array of records)", contentType, ContentTypeRecord, ContentTypeBatch))
}

// refused answers Append's error: a refused record with the CLI's rule
// and next act (400 malformed, 409 duplicate, 403 any other rule: no
// authority), a record of no or too many bytes and a batch too large
// 413, a closed log or a batch the log's engine did not take 503, else
// 500.
func (s *Service) refused(w http.ResponseWriter, err error) (int, string, int) {
	var ae *verify.AppendError
	var re *delegation.RecordError
	switch {
	case errors.As(err, &ae) && errors.As(err, &re):
		status := http.StatusForbidden
		switch re.Rule {
		case delegation.RuleMalformed:
			status = http.StatusBadRequest
		case delegation.RuleDuplicate:
			status = http.StatusConflict
		}
		return refuse(w, status, failure.Record(ae.Err), &ae.Record)
	case errors.Is(err, ledger.ErrEntrySize): // as a local append says it
		return refuse(w, http.StatusRequestEntityTooLarge, exitcode.Refused(fmt.Errorf("nothing appended: %w", err)), nil)
	case errors.Is(err, ledger.ErrBatchTooLarge):
		return refuse(w, http.StatusRequestEntityTooLarge, exitcode.Input(fmt.Errorf("nothing appended: %w", err), "append the records in smaller batches"), nil)
	case errors.Is(err, ledger.ErrUnsequenced):
		w.Header().Set("Retry-After", "1")
		return refuse(w, http.StatusServiceUnavailable, &exitcode.Error{Code: exitcode.Busy, Err: fmt.Errorf("not acknowledged: %w", err),
			Hints: []string{"submit the same records again once the engine answers: one already in the log (a database that failed while taking the batch may have kept it) is refused as a duplicate, never appended twice"}}, nil)
	case errors.Is(err, ledger.ErrClosed):
		w.Header().Set("Retry-After", "1")
		return refuse(w, http.StatusServiceUnavailable, &exitcode.Error{Code: exitcode.Busy, Err: fmt.Errorf("nothing appended: the service is shutting down: %w", err)}, nil)
	}
	return refuse(w, http.StatusInternalServerError, exitcode.Refused(fmt.Errorf("nothing appended: %w", err)), nil)
}

// refuse answers status with err as the CLI describes it
// (failure.Describe) and, for a refused record, its position; it returns
// what submit counts.
func refuse(w http.ResponseWriter, status int, err error, record *int) (int, string, int) {
	f := failure.Describe(err)
	rf := Refusal{Err: f.Error, Exit: f.Exit, Rule: f.Rule, Hints: f.Hints, Record: record}
	if rf.Hints == nil {
		rf.Hints = []string{}
	}
	writeJSON(w, status, rf)
	return status, f.Rule, 0
}

// answer builds the answer to an appended submission from what
// AppendProven read as its batch became durable: the batch's signed
// checkpoint and each entry's inclusion proof in its tree. err is
// AppendProven's when it appended the records but could not read them
// back.
func (s *Service) answer(applied []*delegation.Applied, proofs []verify.Proven, err error) (*Added, error) {
	if err != nil {
		return nil, err
	}
	out := &Added{Checkpoint: string(proofs[len(proofs)-1].Signed), Entries: make([]AddedEntry, len(applied))}
	last := proofs[len(proofs)-1].Checkpoint
	s.metrics.Checkpoint(last.Size, time.Now())
	for i, a := range applied {
		p := proofs[i].Proof
		if proofs[i].Checkpoint.Size != last.Size {
			// A submission's records are in one batch: not reached.
			return nil, fmt.Errorf("entries %d and %d proven in checkpoints of %d and %d entries", applied[0].Index, a.Index, proofs[0].Checkpoint.Size, last.Size)
		}
		out.Entries[i] = AddedEntry{Index: a.Index, Kind: string(a.Kind), Digest: a.Digest, InclusionProof: p}
	}
	return out, nil
}

// writeJSON answers status with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// clientOf is the client a submission is rate-limited as: the peer's IP
// address, or, from a loopback peer (a proxy on this host), the address
// in Options.ClientIPHeader when it holds one.
func (s *Service) clientOf(r *http.Request) string {
	ip := clientIP(r.RemoteAddr)
	if s.opts.ClientIPHeader == "" || !endpoint.IsLoopbackHost(ip) {
		return ip
	}
	if a, err := netip.ParseAddr(strings.TrimSpace(r.Header.Get(s.opts.ClientIPHeader))); err == nil {
		return a.Unmap().String()
	}
	return ip
}

// clientIP is the remote address's IP (httpbound's client).
func clientIP(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}

// readBody reads r's body whole, into one buffer of its declared length
// when it has one (io.ReadAll would grow its buffer by doubling, leaving
// up to twice the body as garbage while 64 submissions are read).
func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength <= 0 {
		return io.ReadAll(r.Body)
	}
	buf := make([]byte, r.ContentLength)
	n, err := io.ReadFull(r.Body, buf)
	if err == nil { // a declared length is a promise: nothing may follow
		var one [1]byte
		if k, _ := r.Body.Read(one[:]); k > 0 {
			err = fmt.Errorf("the body is longer than its Content-Length %d", r.ContentLength)
		}
	}
	return buf[:n], err
}
