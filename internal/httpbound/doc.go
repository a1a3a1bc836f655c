// Package httpbound bounds what an HTTP server holds for its clients, so
// that slow, oversized or numerous clients cannot make it hold more than
// a stated amount of memory, and a client within the limits is still
// served while others are refused.
//
// A Server is an http.Server whose every bound is set (Limits):
//
//   - Open connections: at most MaxConns, and at most MaxConnsPerClient
//     from one remote IP address. A connection past either is answered at
//     once, on the raw connection, with 503 (all connections) or 429 (one
//     client's), a Retry-After header, and closed, before any byte of its
//     request is read.
//   - Request bodies being received: a request's whole body is read
//     before it goes in flight, its bytes held as they arrive (at most
//     twice what was sent, and 1 KiB), at most MaxInFlight × MaxBodyBytes bytes in all and
//     MaxPerClient × MaxBodyBytes from one client; past either it is
//     answered 503 or 429 with Retry-After. A client that sends its body
//     slowly holds what it sent, not a place in flight.
//   - Requests in flight (inside the handler): at most MaxInFlight, and at
//     most MaxPerClient from one remote IP address. A request past either
//     is answered 503 or 429 with Retry-After at once: nothing queues.
//   - Bytes: at most MaxHeaderBytes of request line and headers (431
//     past it, by net/http), at most MaxBodyBytes of body (413, at once
//     when Content-Length says so, else when the handler reads past it).
//   - Time: ReadHeaderTimeout for the request line and headers,
//     ReadTimeout for the whole request (headers and body), WriteTimeout
//     for the answer and IdleTimeout between requests of a keep-alive
//     connection; a connection past one of them is closed.
//
// Every refusal's body is one line of text that names the rule (a Reason)
// and the writ flag that sets the limit, for instance
//
//	busy (max-in-flight): 64 requests in flight, the limit set by --max-in-flight; retry after 1s
//
// and Options.Refused, when set, is told of each (for metrics).
//
// A client is its remote IP address as the connection shows it. Behind a
// proxy or CDN every request comes from the proxy's address: there, set
// MaxPerClient to MaxInFlight and MaxConnsPerClient to MaxConns.
package httpbound
