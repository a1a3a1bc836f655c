package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"path/filepath"

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
	if p := c.String("receipt"); p != "" {
		if req.Receipt, err = readWhole(c, p, schemas.MaxRecordSize); err != nil {
			return err
		}
	}
	conn, err := net.Dial("unix", c.String("socket"))
	if err != nil {
		return inputErr(fmt.Errorf("connecting to the admission server: %w", err))
	}
	defer conn.Close()
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
	run, _ := res["run"].(bool)
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
