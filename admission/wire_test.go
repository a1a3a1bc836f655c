package admission_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/admission"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify"
)

// FuzzDecodeRequest: any bytes a client sends get a request or an error
// naming the request, never a panic, never a request without a dispatch
// and an agent binary; and a request decoded, encoded as a client does
// and decoded again is the same request.
func FuzzDecodeRequest(f *testing.F) {
	for _, seed := range []string{
		`{"dispatch":"AAE=","agent_binary":"/bin/true"}`,
		`{"dispatch":"AAE=","agent_binary":"/a","engine_binary":"/e","provision_dir":"/p","receipt":"AA=="}`,
		`{"dispatch":"AAE=","agent_binary":"/a","receipt":""}`,
		`{"dispatch":"","agent_binary":"/a"}`,
		`{"dispatch":"AAE=","agent_binary":"a"}`,
		`{"dispatch":"AAE=","agent_binary":"/a","extra":1}`,
		`{"dispatch":"!!!","agent_binary":"/a"}`,
		`[]`, `null`, `{`, ``, strings.Repeat(`[`, 10000),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := admission.DecodeRequest(bytes.NewReader(body))
		if err != nil {
			if req != nil || !errors.Is(err, admission.ErrMalformedRequest) || !strings.HasPrefix(err.Error(), "request") {
				t.Fatalf("DecodeRequest = %+v, %v; want nil and an ErrMalformedRequest naming the request", req, err)
			}
			return
		}
		if len(req.Dispatch) == 0 || req.AgentBinary == "" {
			t.Fatalf("accepted a request without a dispatch or an agent binary: %+v", req)
		}
		wire, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		again, err := admission.DecodeRequest(bytes.NewReader(wire))
		if err != nil || !reflect.DeepEqual(again, req) {
			t.Fatalf("round trip: %s decoded to %+v, %v; want %+v", wire, again, err, req)
		}
	})
}

// TestRequestWireFormat: a client writes every field, base64 for bytes,
// null for no receipt and "" for an empty one.
func TestRequestWireFormat(t *testing.T) {
	for _, tc := range []struct {
		req  admission.Request
		want string
	}{
		{admission.Request{Dispatch: []byte{0, 1}, AgentBinary: "/a"},
			`{"dispatch":"AAE=","agent_binary":"/a","engine_binary":"","provision_dir":"","receipt":null}`},
		{admission.Request{Dispatch: []byte{0, 1}, AgentBinary: "/a", EngineBinary: "/e", ProvisionDir: "/p", Receipt: []byte{}},
			`{"dispatch":"AAE=","agent_binary":"/a","engine_binary":"/e","provision_dir":"/p","receipt":""}`},
	} {
		b, err := json.Marshal(tc.req)
		if err != nil || string(b) != tc.want {
			t.Errorf("Marshal = %s, %v; want %s", b, err, tc.want)
		}
		back, err := admission.DecodeRequest(bytes.NewReader(b))
		if err != nil || (back.Receipt != nil) != (tc.req.Receipt != nil) || back.ToDispatch().ReceiptGiven != (tc.req.Receipt != nil) {
			t.Errorf("decoded %+v, %v: the receipt given is lost", back, err)
		}
	}
}

// TestResponseWireFormat: a Response encodes byte for byte as the map
// the server wrote before the protocol had types (keys sorted, nested
// objects in their types' order), with claim and decision_index present
// or absent alike.
func TestResponseWireFormat(t *testing.T) {
	index := int64(41)
	v := &verify.Verdict{Verdict: verify.Refused, Rule: rules.Replay, Class: rules.ClassIntegrity, Reason: "a <replay> & more",
		NextAct: "n", Mode: verify.ModeWarn, InstructionID: "0123", InstructionDigest: schemas.SHA256Digest(nil), Signer: "ab",
		Machine: "runner-1", Stream: "demo", Passed: []string{"envelope"}, Failed: []verify.Finding{{Rule: "replay", Reason: "again"}},
		Compared: []schemas.DigestCheck{{Subject: "agent", Expected: "sha256:1", Actual: "sha256:2"}},
		Claim:    &schemas.Claim{Session: "s1", Until: 1700000000}}
	for _, tc := range []struct {
		name    string
		claim   *schemas.Claim
		failure string // the error of a decision not recorded
	}{{"recorded", v.Claim, ""}, {"no claim", nil, ""}, {"not recorded", nil, "decision log: closed"}} {
		v.Claim = tc.claim
		res := admission.NewResponse(v, index)
		res.Run, res.HashUS, res.RecordUS, res.TotalUS = true, 1, 2, 3
		old := map[string]any{
			"verdict": v.Verdict, "rule": v.Rule, "class": v.Class, "reason": v.Reason, "next_act": v.NextAct,
			"mode": v.Mode, "instruction_id": v.InstructionID, "instruction_digest": v.InstructionDigest,
			"signer": v.Signer, "machine": v.Machine, "stream": v.Stream, "decision_index": index,
			"passed": v.Passed, "failed": v.Failed, "compared": v.Compared,
			"run": true, "hash_us": int64(1), "record_us": int64(2), "total_us": int64(3),
		}
		if v.Claim != nil {
			old["claim"] = v.Claim
		}
		if tc.failure != "" {
			res.Error, res.DecisionIndex, old["error"] = tc.failure, nil, tc.failure
			delete(old, "decision_index")
		}
		got, want := encode(t, res), encode(t, old)
		if got != want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, want)
		}
	}
}

// encode is v as the server writes it: json.Encoder's defaults.
func encode(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
