package httpbound

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"
)

// Reason names the rule a refusal applies; it is the first word of the
// refusal's text and the label Options.Refused is given.
type Reason string

// The rules a Server refuses by.
const (
	// ReasonConns: MaxConns connections are open (503).
	ReasonConns Reason = "max-conns"
	// ReasonConnsPerClient: the client has MaxConnsPerClient connections
	// open (429).
	ReasonConnsPerClient Reason = "max-conns-per-client"
	// ReasonInFlight: MaxInFlight requests are in flight (503).
	ReasonInFlight Reason = "max-in-flight"
	// ReasonPerClient: the client has MaxPerClient requests in flight
	// (429).
	ReasonPerClient Reason = "max-per-client"
	// ReasonBodySize: the request's body is over MaxBodyBytes (413).
	ReasonBodySize Reason = "max-body-bytes"
	// ReasonBodies: the request bodies being received hold MaxInFlight ×
	// MaxBodyBytes bytes (503).
	ReasonBodies Reason = "max-body-buffer"
	// ReasonBodiesPerClient: the client's request bodies being received
	// hold MaxPerClient × MaxBodyBytes bytes (429).
	ReasonBodiesPerClient Reason = "max-body-buffer-per-client"
	// ReasonBodyRead: the request's body did not arrive whole (the
	// client went away, a chunked body cut short, --read-timeout) (400).
	ReasonBodyRead Reason = "body-read"
)

// Reasons lists every Reason, for metrics that start each at zero.
var Reasons = []Reason{ReasonConns, ReasonConnsPerClient, ReasonInFlight, ReasonPerClient, ReasonBodySize, ReasonBodies, ReasonBodiesPerClient, ReasonBodyRead}

// refusal is one refusal: its status and its line of text.
type refusal struct {
	reason Reason
	status int
	text   string
}

// refusalFor words the refusal of reason under l, for the client at ip.
func refusalFor(reason Reason, l Limits, ip string) refusal {
	retry := fmt.Sprintf("retry after %ds", retrySeconds(l.RetryAfter))
	switch reason {
	case ReasonConns:
		return refusal{reason, http.StatusServiceUnavailable,
			fmt.Sprintf("busy (%s): %d connections open, the limit set by --max-conns; %s", reason, l.MaxConns, retry)}
	case ReasonConnsPerClient:
		return refusal{reason, http.StatusTooManyRequests,
			fmt.Sprintf("too many connections (%s): %s has %d open, the limit per client (%d × --max-per-client); %s", reason, ip, l.MaxConnsPerClient, ConnsPerClientFactor, retry)}
	case ReasonInFlight:
		return refusal{reason, http.StatusServiceUnavailable,
			fmt.Sprintf("busy (%s): %d requests in flight, the limit set by --max-in-flight; %s", reason, l.MaxInFlight, retry)}
	case ReasonPerClient:
		return refusal{reason, http.StatusTooManyRequests,
			fmt.Sprintf("too many requests (%s): %s has %d in flight, the limit set by --max-per-client; %s", reason, ip, l.MaxPerClient, retry)}
	case ReasonBodies:
		return refusal{reason, http.StatusServiceUnavailable,
			fmt.Sprintf("busy (%s): request bodies being received hold %d bytes, the limit (--max-in-flight × the body limit); %s", reason, int64(l.MaxInFlight)*l.MaxBodyBytes, retry)}
	case ReasonBodiesPerClient:
		return refusal{reason, http.StatusTooManyRequests,
			fmt.Sprintf("too many bytes (%s): %s's request bodies being received hold %d bytes, the limit per client (--max-per-client × the body limit); %s", reason, ip, int64(l.MaxPerClient)*l.MaxBodyBytes, retry)}
	case ReasonBodyRead:
		return refusal{reason, http.StatusBadRequest,
			fmt.Sprintf("bad request (%s): the request body did not arrive whole (cut short, or not within --read-timeout %s)", reason, l.ReadTimeout)}
	default: // ReasonBodySize
		return refusal{reason, http.StatusRequestEntityTooLarge,
			fmt.Sprintf("request too large (%s): the body is over %d bytes, this server's limit for one request", reason, l.MaxBodyBytes)}
	}
}

// write answers the refusal through net/http.
func (f refusal) write(w http.ResponseWriter, l Limits) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	if f.status != http.StatusRequestEntityTooLarge && f.status != http.StatusBadRequest {
		h.Set("Retry-After", strconv.FormatInt(retrySeconds(l.RetryAfter), 10))
	}
	h.Set("Connection", "close")
	w.WriteHeader(f.status)
	fmt.Fprintln(w, f.text)
}

// rawWriteTimeout bounds writing a refusal on a raw connection: the
// answer is a few hundred bytes, which a new socket's buffer takes at
// once, so only a peer that never reads is cut off by it.
const rawWriteTimeout = 100 * time.Millisecond

// writeRaw answers the refusal on a connection whose request was not
// read, and closes it.
func (f refusal) writeRaw(c net.Conn, l Limits) {
	body := f.text + "\n"
	c.SetWriteDeadline(time.Now().Add(rawWriteTimeout))
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\n"+
		"Retry-After: %d\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
		f.status, http.StatusText(f.status), retrySeconds(l.RetryAfter), len(body), body)
	c.Close()
}
