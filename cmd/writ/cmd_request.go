package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify"
)

// requestAdmission sends one request to an admission server and prints
// the verdict as writ admit does. Exit 0 when the server says the
// dispatch may run, 1 when it may not, 2 for a request the server
// rejected as malformed, 3 for an internal error.
func requestAdmission(c *cli.Context) error {
	if err := wantArgs(c, 1, "one argument: the DISPATCH file, or - for stdin"); err != nil {
		return err
	}
	for _, f := range []string{"socket", "agent-binary"} {
		if c.String(f) == "" {
			return usageErr("--%s is required (see writ admission request --help)", f)
		}
	}
	raw, over, err := readInput(c, c.Args().First(), schemas.MaxRecordSize)
	if err != nil {
		return err
	}
	if over {
		return inputErr(fmt.Errorf("%s: over %d bytes, larger than any dispatch", c.Args().First(), schemas.MaxRecordSize))
	}
	req := admissionRequest{Dispatch: raw, EngineBinary: c.String("engine-binary")}
	// The server resolves paths in its own working directory: send
	// absolute ones.
	for _, p := range []struct {
		flag string
		dst  *string
	}{{"agent-binary", &req.AgentBinary}, {"engine-binary", &req.EngineBinary}, {"provision-dir", &req.ProvisionDir}} {
		if v := c.String(p.flag); v != "" {
			if *p.dst, err = filepath.Abs(v); err != nil {
				return inputErr(err)
			}
		}
	}
	if c.IsSet("receipt") {
		if req.Receipt, err = readWhole(c, c.String("receipt"), schemas.MaxRecordSize); err != nil {
			return err
		}
		if req.Receipt == nil {
			req.Receipt = []byte{} // an empty receipt is still a receipt given: "receipt": ""
		}
	}
	conn, err := net.Dial("unix", c.String("socket"))
	if err != nil {
		return inputErr(fmt.Errorf("connecting to the admission server: %w (is `writ admission serve --socket %s` running?)", err, c.String("socket")))
	}
	defer conn.Close()
	// Only a server running as this user may answer: anyone else who
	// bound the path could say yes to anything.
	if uid, err := peerUID(conn.(*net.UnixConn)); err != nil {
		return noErr(fmt.Errorf("checking who serves %s: %w", c.String("socket"), err))
	} else if uid != os.Getuid() {
		return noErr(fmt.Errorf("%s is served by uid %d, not by this user (uid %d): refusing its verdict", c.String("socket"), uid, os.Getuid()))
	}
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return inputErr(fmt.Errorf("sending the request: %w", err))
	}
	body, err := io.ReadAll(io.LimitReader(conn, 1<<20))
	if err != nil {
		return noErr(fmt.Errorf("reading the verdict: %w", err))
	}
	var res map[string]any
	if err := json.Unmarshal(body, &res); err != nil {
		return &exitError{code: exitInternal, err: fmt.Errorf("the server's answer is not JSON: %v", err)}
	}
	str := func(k string) string { s, _ := res[k].(string); return s }
	if _, ok := res["verdict"]; !ok {
		return inputErr(fmt.Errorf("the server rejected the request: %s", str("error")))
	}
	run, _ := res["run"].(bool)
	if want := schemas.SHA256Digest(raw); run && str("instruction_digest") != want {
		// Nothing of this answer is printed: a wrapper reading "run" from
		// stdout must not see a yes.
		return noErr(fmt.Errorf("the server's verdict is for dispatch %s, this one is %s: refusing it", str("instruction_digest"), want))
	}
	lines := []string{
		"verdict: " + str("verdict"),
		fmt.Sprintf("rule: %s (%s)", str("rule"), str("class")),
		"reason: " + oneLine(str("reason")),
		"next act: " + str("next_act"),
		fmt.Sprintf("mode: %s  instruction: %s  decision: %v", str("mode"), orNone(str("instruction_id")), res["decision_index"]),
	}
	if err := emit(c, res, lines...); err != nil {
		return err
	}
	if run && str("rule") != verify.RuleOK {
		diag(c, levelWarning, "admitted under --mode %s although rule %s failed; --mode enforce would refuse it", str("mode"), str("rule"))
	}
	switch {
	case str("rule") == verify.RuleInternal:
		return &exitError{code: exitInternal, err: fmt.Errorf("internal error during admission"), silent: true}
	case str("error") != "":
		return noErr(fmt.Errorf("%s", str("error")))
	case !run:
		return &exitError{code: exitNo, err: fmt.Errorf("refused"), silent: true}
	}
	return nil
}

// peerUID returns the user id of the process at the other end of conn
// (SO_PEERCRED).
func peerUID(conn *net.UnixConn) (int, error) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *syscall.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if credErr != nil {
		return 0, credErr
	}
	return int(cred.Uid), nil
}
