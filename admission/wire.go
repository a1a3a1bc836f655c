package admission

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"

	"github.com/writ-ledger/writ/internal/jsonobject"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify"
)

// Limits on what is read from the socket.
const (
	// MaxRequestSize bounds one request, in bytes: a dispatch and a
	// receipt of schemas.MaxRecordSize bytes each, base64 in JSON (4/3 of
	// that, and escaping), plus three paths. A request that is larger is
	// cut there, and so is malformed.
	MaxRequestSize = 4*schemas.MaxRecordSize + 64<<10

	// MaxResponseSize bounds one response, in bytes: a verdict's reasons
	// are short, an internal error's carries a stack trace, and neither
	// comes near 1 MiB.
	MaxResponseSize = 1 << 20
)

// Request is one admission request: the dispatch a runner is about to
// run and where the runner keeps what it would run. On the wire it is one
// JSON object; []byte fields are standard padded base64, as encoding/json
// writes them.
type Request struct {
	// Dispatch is the dispatch bytes as received (a COSE_Sign1 instruction,
	// or an unsigned one): required, at most schemas.MaxRecordSize bytes.
	Dispatch []byte `json:"dispatch"`
	// AgentBinary is the absolute path, on the server's machine, of the
	// agent binary the dispatch would run: required.
	AgentBinary string `json:"agent_binary"`
	// EngineBinary is the absolute path of the engine binary when the
	// instruction names one, else "".
	EngineBinary string `json:"engine_binary"`
	// ProvisionDir is the absolute path of the directory holding the
	// provisioned files (.provision/NAME is ProvisionDir/NAME), or "".
	ProvisionDir string `json:"provision_dir"`
	// Receipt is an RFC 9942 receipt for Dispatch in the authority log. A
	// non-nil Receipt, even empty ("receipt": ""), is a receipt given and
	// checked (an empty one fails); nil ("receipt": null, or absent) is
	// none.
	Receipt []byte `json:"receipt"`
}

// DecodeRequest reads one request from r: the first JSON value of at most
// MaxRequestSize bytes (the client need not close its side). Unknown
// fields, a missing or oversized dispatch, a missing agent_binary and a
// relative path are refused. Every error matches ErrMalformedRequest and
// its text, which the server sends back, names the field ("request.dispatch:
// required ..."); on error the request is nil.
func DecodeRequest(r io.Reader) (*Request, error) {
	dec := json.NewDecoder(io.LimitReader(r, MaxRequestSize))
	dec.DisallowUnknownFields()
	var req Request
	if err := dec.Decode(&req); err != nil {
		return nil, wrap(ErrMalformedRequest, "request: %v (one JSON object of at most %d bytes)", err, MaxRequestSize)
	}
	switch {
	case len(req.Dispatch) == 0:
		return nil, wrap(ErrMalformedRequest, "request.dispatch: required (the dispatch bytes, base64)")
	case len(req.Dispatch) > schemas.MaxRecordSize:
		return nil, wrap(ErrMalformedRequest, "request.dispatch: %d bytes, at most %d", len(req.Dispatch), schemas.MaxRecordSize)
	case req.AgentBinary == "":
		return nil, wrap(ErrMalformedRequest, "request.agent_binary: required (the path of the agent binary)")
	}
	for _, p := range []struct{ field, path string }{
		{"agent_binary", req.AgentBinary}, {"engine_binary", req.EngineBinary}, {"provision_dir", req.ProvisionDir},
	} {
		if p.path != "" && !filepath.IsAbs(p.path) {
			return nil, wrap(ErrMalformedRequest, "request.%s: %q is relative; send an absolute path (the server's working directory is not the client's)", p.field, p.path)
		}
	}
	return &req, nil
}

// ToDispatch is the request as runner.Runner.Admit takes it.
func (req *Request) ToDispatch() verify.Dispatch {
	return verify.Dispatch{Raw: req.Dispatch, AgentBinary: req.AgentBinary, EngineBinary: req.EngineBinary,
		ProvisionDir: req.ProvisionDir, Receipt: req.Receipt, ReceiptGiven: req.Receipt != nil}
}

// Decision is a verdict and the index of the decision that records it in
// the runner's decision log: what writ admit prints, and the verdict part
// of a Response. Its JSON is verify.Verdict's fields and decision_index.
type Decision struct {
	verify.Verdict
	// DecisionIndex is the decision's index in the runner's decision log;
	// nil when the decision was not recorded (then Response.Error says why).
	DecisionIndex *int64 `json:"decision_index,omitempty" doc:"the decision's index in the runner's decision log; absent when it was not recorded"`
}

// Response is the server's answer: a verdict (verify.Verdict set, its
// one JSON shape), or, for a request it rejected, only Error and Run
// false.
//
// On the wire it is one JSON object whose keys are sorted, as
// encoding/json writes a map (MarshalJSON); nested objects keep their
// types' order. A verdict has every field but claim (only when the
// verdict records a work claim), decision_index (absent when the decision
// was not recorded) and error (only then). Passed, Failed and Compared
// are [] when empty, never null. Durations are whole microseconds.
type Response struct {
	Decision
	Error string `json:"error,omitempty" doc:"why nothing was recorded, or why the request was rejected"`
	// HashUS is the time the server spent hashing binaries and provisioned
	// files, in microseconds.
	HashUS int64 `json:"hash_us" doc:"the server's time hashing binaries and files, microseconds"`
	// RecordUS is the time the server waited for the decision to be
	// durable (commit and fsync), in microseconds.
	RecordUS int64 `json:"record_us" doc:"the server's time making the decision durable, microseconds"`
	// RetryAfter is set only on a busy answer (a rejection past the
	// server's limits, its request unread): the whole seconds to wait
	// before trying again.
	RetryAfter int64 `json:"retry_after,omitempty" doc:"on a busy answer only: whole seconds to wait before trying again"`
	// Run is true only when the verdict lets the dispatch run and the
	// decision is durable: the one field a runner acts on.
	Run bool `json:"run" doc:"whether the runner may run the dispatch: the verdict lets it and the decision is durable"`
	// TotalUS is the time from the request read to the durable verdict,
	// in microseconds.
	TotalUS int64 `json:"total_us" doc:"the server's time from the request read to the durable verdict, microseconds"`
}

// NewResponse is the response for verdict v recorded at decision index
// (run false and no timings; the server sets those), its lists [] rather
// than null when empty.
func NewResponse(v *verify.Verdict, index int64) *Response {
	res := &Response{Decision: Decision{Verdict: *v, DecisionIndex: &index}}
	res.Passed, res.Failed, res.Compared = nonNil(v.Passed), nonNil(v.Failed), nonNil(v.Compared)
	return res
}

// MarshalJSON writes the response as the server sends it: one object,
// its keys sorted, nested objects in their types' order, nothing
// HTML-escaped (an encoder escapes as it is told).
func (r Response) MarshalJSON() ([]byte, error) {
	type plain Response // the default encoding, without this method
	return jsonobject.Sorted(plain(r))
}

// rejection is the answer to a request the server rejected, on the wire.
type rejection struct {
	Error      string `json:"error"`
	RetryAfter int64  `json:"retry_after,omitempty"` // seconds, on a busy answer only
	Run        bool   `json:"run"`                   // always false
}

// decodeResponse parses the server's answer body (at most
// MaxResponseSize bytes, read whole) strictly: one JSON object, no
// unknown field, nothing after it, and run true only beside a verdict
// that lets the dispatch run and no error.
func decodeResponse(body []byte) (*Response, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var res Response
	if err := dec.Decode(&res); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, wrap(ErrMalformedResponse, "the server's answer is not JSON: %v", err)
		}
		return nil, wrap(ErrMalformedResponse, "the server's answer is not a verdict: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, wrap(ErrMalformedResponse, "the server's answer is not JSON: data after the object")
	}
	if res.Run && (res.Error != "" || res.Verdict.Verdict == verify.Refused || res.Verdict.Verdict == "") {
		return nil, wrap(ErrMalformedResponse, "the server's answer says run beside verdict %q and error %q", res.Verdict.Verdict, res.Error)
	}
	if res.RetryAfter != 0 && (res.Verdict.Verdict != "" || res.RetryAfter < 0) {
		return nil, wrap(ErrMalformedResponse, "the server's answer has retry_after %d beside verdict %q", res.RetryAfter, res.Verdict.Verdict)
	}
	return &res, nil
}

// nonNil makes an empty list [] rather than null in JSON.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// NewRequest returns the request for dispatch with the paths, each as the
// client names it ("" for none), made absolute in the client's working
// directory (the server resolves paths in its own). Errors are
// filepath.Abs's.
func NewRequest(dispatch []byte, agentBinary, engineBinary, provisionDir string) (Request, error) {
	req := Request{Dispatch: dispatch}
	for _, p := range []struct {
		path string
		dst  *string
	}{{agentBinary, &req.AgentBinary}, {engineBinary, &req.EngineBinary}, {provisionDir, &req.ProvisionDir}} {
		if p.path == "" {
			continue
		}
		abs, err := filepath.Abs(p.path)
		if err != nil {
			return Request{}, err
		}
		*p.dst = abs
	}
	return req, nil
}
