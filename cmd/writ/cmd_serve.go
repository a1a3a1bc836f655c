package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify"
)

// maxRequest bounds one admission request, in bytes: a dispatch and a
// receipt of MaxRecordSize each, base64-encoded, plus paths.
const maxRequest = 4*schemas.MaxRecordSize + 64<<10

// maxConnections bounds the requests served at once; further clients
// wait in the listen backlog.
const maxConnections = 256

// requestTimeout bounds how long a client may take to send its request.
const requestTimeout = 10 * time.Second

// admissionRequest is one request to admission serve: the dispatch bytes
// and receipt are base64 (standard, padded) in JSON, as encoding/json
// writes []byte. A "receipt" that is present, even "", is a receipt given
// (and an empty one fails); absent or null means none.
type admissionRequest struct {
	Dispatch     []byte `json:"dispatch"`
	AgentBinary  string `json:"agent_binary"`
	EngineBinary string `json:"engine_binary"`
	ProvisionDir string `json:"provision_dir"`
	Receipt      []byte `json:"receipt"`
}

func admissionCommand() *cli.Command {
	return &cli.Command{
		Name:  "admission",
		Usage: "admission for runners that admit many dispatches",
		Subcommands: []*cli.Command{{
			Name:  "serve",
			Usage: "keep the ledger open and answer admission requests over a UNIX socket",
			Description: "Each connection carries one JSON request and gets one JSON verdict:\n" +
				`  {"dispatch": BASE64, "agent_binary": PATH, "engine_binary": PATH, "provision_dir": DIR, "receipt": BASE64}` + "\n" +
				"The verdict has the fields of writ admit --json, and run (true only when the verdict admits\n" +
				"and the decision is durable), hash_us, record_us (waiting for the decision to be durable)\n" +
				"and total_us (from the request read to the durable verdict). A malformed request gets {\"error\": ...}\n" +
				"and is not recorded. The socket is created mode 0600. SIGINT or SIGTERM stops the server\n" +
				"after the admissions in flight are recorded.",
			Flags: append(runnerFlags(), &cli.StringFlag{Name: "socket", Usage: "UNIX socket `PATH` to listen on"},
				&cli.StringFlag{Name: "publish-decisions", Usage: "also publish the decision log as C2SP tlog-tiles into `DIR` (as writ ledger publish --decisions), at start, every --publish-every and at the end"},
				&cli.DurationFlag{Name: "publish-every", Value: 10 * time.Second, Usage: "with --publish-decisions: publish every `DURATION`"}),
			Action: serveAdmission,
		}, {
			Name:      "request",
			Usage:     "send one dispatch to an admission server and print its verdict (exit codes as writ admit)",
			ArgsUsage: "DISPATCH",
			Flags: append(append([]cli.Flag{&cli.StringFlag{Name: "socket", Usage: "the server's UNIX socket `PATH`"}}, dispatchFlags()...),
				jsonFlag),
			Action: requestAdmission,
		}},
	}
}

func serveAdmission(c *cli.Context) error {
	if err := wantArgs(c, 0, "no arguments"); err != nil {
		return err
	}
	path := c.String("socket")
	if path == "" {
		return usageErr("--socket is required (see writ admission serve --help)")
	}
	setup, err := readRunnerFlags(c)
	if err != nil {
		return err
	}
	ln, err := listenUnix(path)
	if err != nil {
		return err
	}
	defer os.Remove(path)
	defer ln.Close()
	r, err := verify.OpenRunner(setup.dir, setup.trust, setup.kp, setup.cfg)
	if err != nil {
		if errors.Is(err, verify.ErrNotRecorded) {
			return noErr(err)
		}
		return openErr(err)
	}
	defer r.Close()
	diag(c, levelInfo, "serving admission for %s on %s (mode %s)", setup.cfg.Machine, path, setup.cfg.Mode)
	if to := c.String("publish-decisions"); to != "" {
		stopPublishing := publishWhileServing(c, r, to, c.Duration("publish-every"))
		defer stopPublishing()
	}

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(stop)
	fatal := make(chan error, 1)
	go func() {
		select {
		case <-stop:
		case <-fatal:
		}
		ln.Close()
	}()
	var wg sync.WaitGroup
	var failed error
	var once sync.Once
	slots := make(chan struct{}, maxConnections)

	for backoff := 5 * time.Millisecond; ; {
		slots <- struct{}{} // at most maxConnections requests at once
		conn, err := ln.Accept()
		if err != nil {
			<-slots
			if errors.Is(err, net.ErrClosed) {
				break // a signal, or a fatal error, closed the listener
			}
			// Out of descriptors, or a connection aborted: keep serving.
			diag(c, levelWarning, "accepting a connection: %v; retrying in %s", err, backoff)
			time.Sleep(backoff)
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			if err := serveOne(r, conn); err != nil {
				once.Do(func() { failed = err; fatal <- err })
			}
		}()
	}
	wg.Wait()
	if failed != nil {
		return noErr(failed)
	}
	diag(c, levelInfo, "admission server stopped")
	return nil
}

// listenUnix listens on a new UNIX socket at path with mode 0600. A stale
// socket left by a server that is gone is replaced; a live one, or any
// other file, is an error.
func listenUnix(path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, usageErr("--socket %s exists and is not a socket; refusing to replace it", path)
		}
		if conn, err := net.Dial("unix", path); err == nil {
			conn.Close()
			return nil, usageErr("--socket %s: another server is listening there", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, inputErr(err)
		}
	}
	old := syscall.Umask(0o177)
	ln, err := net.Listen("unix", path)
	syscall.Umask(old)
	if err != nil {
		return nil, inputErr(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	return ln, nil
}

// serveOne answers the one request on conn. It returns an error only when
// the runner can no longer record decisions, which stops the server.
func serveOne(r *verify.Runner, conn net.Conn) (fatal error) {
	defer conn.Close()
	start := time.Now()
	enc := json.NewEncoder(conn)
	defer func() {
		if p := recover(); p != nil {
			enc.Encode(map[string]any{"error": fmt.Sprintf("internal error: %v", p), "run": false})
			fatal = fmt.Errorf("internal error serving a request: %v", p)
		}
	}()
	conn.SetDeadline(start.Add(requestTimeout))
	req, err := readRequest(conn)
	if err != nil {
		enc.Encode(map[string]any{"error": err.Error(), "run": false})
		return nil
	}
	conn.SetDeadline(time.Time{}) // the verdict may hash large files
	start = time.Now()            // total_us: from the request read to the durable verdict
	d := verify.Dispatch{Raw: req.Dispatch, AgentBinary: req.AgentBinary, EngineBinary: req.EngineBinary, ProvisionDir: req.ProvisionDir, Receipt: req.Receipt,
		ReceiptGiven: req.Receipt != nil} // "receipt": "" is a receipt given; absent or null is none
	v, index, err := r.Admit(d)
	res := verdictFields(v, index)
	res["run"] = err == nil && v.Admitted()
	res["hash_us"] = v.HashTime.Microseconds()
	res["record_us"] = v.RecordTime.Microseconds()
	res["total_us"] = time.Since(start).Microseconds()
	if err != nil {
		res["error"] = err.Error()
		delete(res, "decision_index")
	}
	enc.Encode(res)
	if errors.Is(err, verify.ErrNotRecorded) {
		return err
	}
	return nil
}

// readRequest reads one JSON request of at most maxRequest bytes: unknown
// fields and a missing dispatch or agent_binary are errors naming the
// field. The client need not close its side: the first JSON value is the
// request.
func readRequest(conn net.Conn) (*admissionRequest, error) {
	dec := json.NewDecoder(io.LimitReader(conn, maxRequest))
	dec.DisallowUnknownFields()
	var req admissionRequest
	if err := dec.Decode(&req); err != nil {
		return nil, fmt.Errorf("request: %v (one JSON object of at most %d bytes)", err, maxRequest)
	}
	switch {
	case len(req.Dispatch) == 0:
		return nil, fmt.Errorf("request.dispatch: required (the dispatch bytes, base64)")
	case len(req.Dispatch) > schemas.MaxRecordSize:
		return nil, fmt.Errorf("request.dispatch: %d bytes, at most %d", len(req.Dispatch), schemas.MaxRecordSize)
	case req.AgentBinary == "":
		return nil, fmt.Errorf("request.agent_binary: required (the path of the agent binary)")
	}
	for _, p := range []struct{ field, path string }{
		{"agent_binary", req.AgentBinary}, {"engine_binary", req.EngineBinary}, {"provision_dir", req.ProvisionDir},
	} {
		if p.path != "" && !filepath.IsAbs(p.path) {
			return nil, fmt.Errorf("request.%s: %q is relative; send an absolute path (the server's working directory is not the client's)", p.field, p.path)
		}
	}
	return &req, nil
}
