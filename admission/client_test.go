package admission_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/writ-ledger/writ/admission"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/runner"
)

// nextAct is the next act verify's vocabulary gives rule.
func nextAct(t *testing.T, rule string) string {
	t.Helper()
	for _, r := range verify.Rules {
		if r.ID == rule {
			return r.NextAct
		}
	}
	t.Fatalf("no rule %q", rule)
	return ""
}

// TestRequestVerdicts: a signed, delegated instruction is admitted and
// may run; the same again is a replay; an unsigned one is refused under
// enforce. Each verdict is bound to the bytes sent and keeps its rule's
// next act.
func TestRequestVerdicts(t *testing.T) {
	_, _, socket := started(t, verify.ModeEnforce, nil)
	c := admission.NewClient(socket)
	unsigned, err := schemas.Encode(testkit.Instruction(fmt.Sprintf("%032x", 7)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		dispatch []byte
		verdict  schemas.Verdict
		rule     string
		class    rules.Class
		run      bool
		index    int64
	}{
		{"signed", instruction(1), verify.Admitted, rules.OK, rules.ClassPass, true, 0},
		{"replay", instruction(1), verify.Refused, rules.Replay, rules.ClassIntegrity, false, 1},
		{"unsigned", unsigned, verify.Refused, rules.Unsigned, rules.ClassAuthenticity, false, 2},
	} {
		res, err := c.Request(context.Background(), admission.Request{Dispatch: tc.dispatch, AgentBinary: agentPath})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if res.Verdict.Verdict != tc.verdict || res.Rule != tc.rule || res.Class != tc.class || res.Run != tc.run {
			t.Errorf("%s: verdict %s, rule %s (%s), run %v; want %s, %s (%s), %v (reason: %s)",
				tc.name, res.Verdict.Verdict, res.Rule, res.Class, res.Run, tc.verdict, tc.rule, tc.class, tc.run, res.Reason)
		}
		if res.DecisionIndex == nil || *res.DecisionIndex != tc.index || res.Error != "" {
			t.Errorf("%s: decision %v, error %q; want decision %d", tc.name, res.DecisionIndex, res.Error, tc.index)
		}
		if want := schemas.SHA256Digest(tc.dispatch); res.InstructionDigest != want {
			t.Errorf("%s: instruction_digest %s, want %s", tc.name, res.InstructionDigest, want)
		}
		if res.NextAct != nextAct(t, tc.rule) || res.Machine != "runner-1" || res.Mode != verify.ModeEnforce {
			t.Errorf("%s: next act %q, machine %q, mode %q", tc.name, res.NextAct, res.Machine, res.Mode)
		}
	}
}

// TestRequestRejected: a request the server cannot read is rejected with
// its message, and recorded nowhere: the next decision is still 0.
func TestRequestRejected(t *testing.T) {
	_, _, socket := started(t, verify.ModeEnforce, nil)
	c := admission.NewClient(socket)
	for _, tc := range []struct {
		req  admission.Request
		want string
	}{
		{admission.Request{AgentBinary: agentPath}, "the server rejected the request: request.dispatch: required (the dispatch bytes, base64)"},
		{admission.Request{Dispatch: []byte{1}}, "the server rejected the request: request.agent_binary: required (the path of the agent binary)"},
		{admission.Request{Dispatch: []byte{1}, AgentBinary: "agent"}, `the server rejected the request: request.agent_binary: "agent" is relative; send an absolute path (the server's working directory is not the client's)`},
	} {
		res, err := c.Request(context.Background(), tc.req)
		if res != nil || !errors.Is(err, admission.ErrRejected) || err.Error() != tc.want {
			t.Errorf("Request(%+v) = %v, %v; want nil, %s", tc.req, res, err, tc.want)
		}
	}
	res, err := c.Request(context.Background(), admission.Request{Dispatch: instruction(1), AgentBinary: agentPath})
	if err != nil || *res.DecisionIndex != 0 || !res.Run {
		t.Fatalf("after rejected requests: %+v, %v; want decision 0 admitted", res, err)
	}
}

// otherDispatch is a server that answers every request with a real
// verdict on another dispatch: a replayed or swapped answer.
type otherDispatch struct {
	r     *runner.Runner
	other []byte
}

func (o otherDispatch) Admit(d verify.Dispatch) (*verify.Verdict, int64, error) {
	d.Raw = o.other
	return o.r.Admit(d)
}

// TestRequestOtherDispatch: a verdict bound to another dispatch's digest
// is refused, even an admission, and none of it is returned.
func TestRequestOtherDispatch(t *testing.T) {
	other, sent := instruction(2), instruction(3)
	_, _, socket := started(t, verify.ModeEnforce, func(vr *runner.Runner) admission.Admitter {
		return otherDispatch{r: vr, other: other}
	})
	res, err := admission.NewClient(socket).Request(context.Background(), admission.Request{Dispatch: sent, AgentBinary: agentPath})
	var wd *admission.WrongDispatchError
	if res != nil || !errors.Is(err, admission.ErrWrongDispatch) || !errors.As(err, &wd) {
		t.Fatalf("Request = %+v, %v; want nil, ErrWrongDispatch", res, err)
	}
	if wd.Got != schemas.SHA256Digest(other) || wd.Sent != schemas.SHA256Digest(sent) {
		t.Errorf("evidence: got %s sent %s; want %s and %s", wd.Got, wd.Sent, schemas.SHA256Digest(other), schemas.SHA256Digest(sent))
	}
	want := "the server's verdict is for dispatch " + wd.Got + ", this one is " + wd.Sent + ": refusing it"
	if err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

// TestRequestOtherUser: a server that does not run as the user the client
// expects is refused before anything is sent (the runner decides
// nothing). The test cannot run a server as another user; it expects
// another uid instead, which is the same comparison.
func TestRequestOtherUser(t *testing.T) {
	_, _, socket := started(t, verify.ModeEnforce, nil)
	c := &admission.Client{Socket: socket, UID: os.Getuid() + 1}
	res, err := c.Request(context.Background(), admission.Request{Dispatch: instruction(1), AgentBinary: agentPath})
	var pe *admission.PeerUIDError
	if res != nil || !errors.Is(err, admission.ErrUntrustedServer) || !errors.As(err, &pe) || pe.UID != os.Getuid() || pe.Want != os.Getuid()+1 {
		t.Fatalf("Request = %+v, %v; want nil, a PeerUIDError (uid %d)", res, err, os.Getuid())
	}
	res, err = admission.NewClient(socket).Request(context.Background(), admission.Request{Dispatch: instruction(1), AgentBinary: agentPath})
	if err != nil || !res.Run || *res.DecisionIndex != 0 {
		t.Fatalf("the same dispatch from the right user: %+v, %v; want admitted at decision 0 (nothing recorded before)", res, err)
	}
}

// TestPeerUID: the kernel's word on who is at the other end of a UNIX
// connection is this process's user, on both sides.
func TestPeerUID(t *testing.T) {
	ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	conn, err := net.Dial("unix", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if uid, err := admission.PeerUID(conn.(*net.UnixConn)); err != nil || uid != os.Getuid() {
		t.Fatalf("PeerUID = %d, %v; want %d", uid, err, os.Getuid())
	}
}

// TestRequestNoServer: no server on the path is ErrConnect, with the
// dial error inside.
func TestRequestNoServer(t *testing.T) {
	c := admission.NewClient(filepath.Join(t.TempDir(), "none.sock"))
	res, err := c.Request(context.Background(), admission.Request{Dispatch: instruction(1), AgentBinary: agentPath})
	var op *net.OpError
	if res != nil || !errors.Is(err, admission.ErrConnect) || !errors.As(err, &op) || op.Op != "dial" {
		t.Fatalf("Request = %+v, %v; want nil, ErrConnect from dial", res, err)
	}
}

// TestRequestNoVerdict: a server of the right user that reads the request
// and hangs up without answering is ErrNoVerdict: the request was sent,
// so the client cannot tell whether a decision was made.
func TestRequestNoVerdict(t *testing.T) {
	ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			io.Copy(io.Discard, io.LimitReader(c, 1)) // the request has begun
			c.Close()
		}
	}()
	res, err := admission.NewClient(ln.Addr().String()).Request(context.Background(), admission.Request{Dispatch: instruction(1), AgentBinary: agentPath})
	if res != nil || !errors.Is(err, admission.ErrNoVerdict) {
		t.Fatalf("Request = %+v, %v; want nil, ErrNoVerdict", res, err)
	}
}
