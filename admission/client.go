package admission

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/writ-ledger/writ/schemas"
)

// Client sends admission requests to a server on a UNIX socket. Its
// fields are read, never written, by Request: one Client may be used from
// many goroutines at once.
type Client struct {
	// Socket is the path of the server's UNIX socket.
	Socket string
	// UID is the user id the server must run as; NewClient sets this
	// process's (os.Getuid()).
	UID int
}

// NewClient returns a client of the server on the UNIX socket at path,
// which must run as this process's user.
func NewClient(path string) *Client {
	return &Client{Socket: path, UID: os.Getuid()}
}

// Request sends req on a new connection and returns the server's
// response. Before sending it checks, with the kernel's word
// (SO_PEERCRED), that the process serving the socket runs as c.UID; after
// reading it checks that the verdict is bound to req: its
// instruction_digest is sha256:<hex> of req.Dispatch. req's paths are
// resolved by the server, so they are absolute; the server validates req
// (see DecodeRequest), not the client.
//
// A recorded verdict, admitting or not, is returned with a nil error; so
// is a verdict the server could not record (resp.Error says why; resp.Run
// is false). Only resp.Run true lets the dispatch run. Otherwise the
// response is nil and the error matches one of ErrConnect,
// ErrUntrustedServer (a *PeerUIDError when the uid differs), ErrNoVerdict,
// ErrMalformedResponse, ErrRejected, ErrBusy (a *BusyError: the server
// is at its limit and read nothing; retry later) or ErrWrongDispatch (a
// *WrongDispatchError), or is ctx's error when ctx ended first. ctx bounds
// the whole exchange, including the server's hashing.
func (c *Client) Request(ctx context.Context, req Request) (*Response, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", c.Socket)
	if err != nil {
		return nil, wrap(ErrConnect, "connecting to the admission server: %w", err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) }) // unblock a read or write
	defer stop()
	// Only a server running as the expected user may answer: anyone else
	// who bound the path could say yes to anything.
	if uid, err := PeerUID(conn.(*net.UnixConn)); err != nil {
		return nil, wrap(ErrUntrustedServer, "checking who serves %s: %w", c.Socket, err)
	} else if uid != c.UID {
		return nil, &PeerUIDError{Socket: c.Socket, UID: uid, Want: c.UID}
	}
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		// A busy server answers before it reads, and closes: its answer
		// may wait in this socket although the request could not be sent.
		if busy := readBusy(conn); busy != nil {
			return nil, busy
		}
		return nil, orCtx(ctx, wrap(ErrConnect, "sending the request: %w", err))
	}
	body, err := io.ReadAll(io.LimitReader(conn, MaxResponseSize+1))
	if err != nil {
		// A server that closes with the request unread resets the
		// connection after its answer: a rejection read whole still
		// counts, never a verdict.
		if res, decErr := decodeResponse(body); decErr == nil && res.Verdict.Verdict == "" {
			return nil, rejected(res)
		}
		return nil, orCtx(ctx, wrap(ErrNoVerdict, "reading the verdict: %w", err))
	}
	if len(body) > MaxResponseSize {
		return nil, wrap(ErrMalformedResponse, "the server's answer is over %d bytes", MaxResponseSize)
	}
	res, err := decodeResponse(body)
	if err != nil {
		return nil, err
	}
	if res.Verdict.Verdict == "" {
		return nil, rejected(res)
	}
	if sent := schemas.SHA256Digest(req.Dispatch); res.InstructionDigest != sent {
		// Nothing of this answer is returned: a caller must not see a yes.
		return nil, &WrongDispatchError{Got: res.InstructionDigest, Sent: sent}
	}
	return res, nil
}

// rejected is the error for a rejection res (no verdict): a *BusyError
// when it carries retry_after, else ErrRejected with its message.
func rejected(res *Response) error {
	if res.RetryAfter > 0 {
		return &BusyError{Message: res.Error, RetryAfter: res.RetryAfter}
	}
	return wrap(ErrRejected, "the server rejected the request: %s", res.Error)
}

// busyReadTimeout bounds reading a busy answer after a failed send: the
// server wrote it before closing.
const busyReadTimeout = time.Second

// readBusy reads what the server sent before a failed send: a
// *BusyError when it is a busy answer, else nil.
func readBusy(conn net.Conn) error {
	conn.SetReadDeadline(time.Now().Add(busyReadTimeout))
	body, _ := io.ReadAll(io.LimitReader(conn, MaxResponseSize))
	if res, err := decodeResponse(body); err == nil && res.Verdict.Verdict == "" && res.RetryAfter > 0 {
		return rejected(res)
	}
	return nil
}

// orCtx is ctx's error when ctx is done, else err.
func orCtx(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// PeerUID returns the user id of the process at the other end of conn,
// as the kernel recorded it when the connection was made (SO_PEERCRED;
// Linux).
func PeerUID(conn *net.UnixConn) (int, error) {
	cred, err := peerCred(conn)
	if err != nil {
		return 0, err
	}
	return int(cred.Uid), nil
}

// peerCred is the credentials of the process at the other end of conn,
// as the kernel recorded them when the connection was made.
func peerCred(conn *net.UnixConn) (*syscall.Ucred, error) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return nil, err
	}
	var cred *syscall.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return nil, err
	}
	return cred, credErr
}
