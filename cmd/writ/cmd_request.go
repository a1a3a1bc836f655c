package main

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/admission"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
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
			return exitcode.Usagef("--%s is required (see writ admission request --help)", f)
		}
	}
	raw, over, err := readInput(c, c.Args().First(), schemas.MaxRecordSize)
	if err != nil {
		return err
	}
	if over {
		return exitcode.Input(fmt.Errorf("%s: over %d bytes, larger than any dispatch", c.Args().First(), schemas.MaxRecordSize))
	}
	// The server resolves paths in its own working directory: send
	// absolute ones.
	req, err := admission.NewRequest(raw, c.String("agent-binary"), c.String("engine-binary"), c.String("provision-dir"))
	if err != nil {
		return exitcode.Input(err)
	}
	if c.IsSet("receipt") {
		if req.Receipt, err = readWhole(c, c.String("receipt"), schemas.MaxRecordSize); err != nil {
			return err
		}
		if req.Receipt == nil {
			req.Receipt = []byte{} // an empty receipt is still a receipt given: "receipt": ""
		}
	}
	res, err := admission.NewClient(c.String("socket")).Request(context.Background(), req)
	if err != nil {
		return requestErr(c, err)
	}
	if err := printVerdict(c, res, true); err != nil {
		return err
	}
	if res.Error != "" && res.Rule != rules.Internal {
		return exitcode.Refused(errors.New(res.Error))
	}
	return verdictExit(c, &res.Verdict, res.Run)
}

// requestErr gives a failed request its exit code: 2 when the server
// could not be reached (with a hint when there is no server to dial) or
// rejected the request, 4 when it was busy (it read nothing), 3 for an
// answer that is not a response, 1 for
// everything after which the dispatch must not run (an untrusted server,
// a lost verdict, a verdict for another dispatch).
func requestErr(c *cli.Context, err error) error {
	var op *net.OpError
	switch {
	case errors.Is(err, admission.ErrConnect) && errors.As(err, &op) && op.Op == "dial":
		return exitcode.Input(fmt.Errorf("%w (is `writ admission serve --socket %s` running?)", err, c.String("socket")))
	case errors.Is(err, admission.ErrBusy):
		return &exitcode.Error{Code: exitcode.Busy, Err: err, Hints: []string{"nothing was decided or recorded; send the request again after the server's retry_after"}}
	case errors.Is(err, admission.ErrConnect), errors.Is(err, admission.ErrRejected):
		return exitcode.Input(err)
	case errors.Is(err, admission.ErrMalformedResponse):
		return &exitcode.Error{Code: exitcode.Internal, Err: err}
	}
	return exitcode.Refused(err)
}
