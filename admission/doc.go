// Package admission is the protocol of writ's admission server: a runner
// that admits many dispatches keeps its ledger open in one process
// (`writ admission serve`), and whatever is about to run a dispatch asks
// it over a UNIX socket (`writ admission request`, or a Go program with a
// Client).
//
// # Wire format
//
// Each connection carries one request and one response, each a JSON
// object (RFC 8259) in UTF-8; byte strings are standard padded base64
// (RFC 4648 §4). The client sends a Request:
//
//	{"dispatch":"0oRYI6M...","agent_binary":"/opt/agent","engine_binary":"","provision_dir":"","receipt":null}
//
// and the server answers with a Response, its keys sorted, and closes the
// connection:
//
//	{"class":"pass","compared":[{"subject":"agent","expected":"sha256:2293e9b0...","actual":"sha256:2293e9b0..."}],
//	 "decision_index":0,"failed":[],"hash_us":20432,"instruction_digest":"sha256:18d14160...",
//	 "instruction_id":"00000000000000000000000000000001","machine":"runner-1","mode":"enforce",
//	 "next_act":"none","passed":["envelope","signature","machine",...,"no-replay","work-unclaimed"],
//	 "reason":"every check passed: [...]","record_us":12205,"rule":"ok","run":true,
//	 "signer":"44445e5e...","stream":"demo","total_us":38234,"verdict":"admitted"}
//
// (one line on the wire; shortened here). A request the server cannot
// read is answered {"error":"request.dispatch: required (the dispatch
// bytes, base64)","run":false} and is not recorded. A verdict the server
// could not record has "error" and no "decision_index". Only "run": true
// lets the dispatch run.
//
// # Stricter than JSON
//
//   - A request is at most MaxRequestSize bytes and a response at most
//     MaxResponseSize; a request must arrive within the server's
//     RequestTimeout.
//   - Past the server's MaxConnections requests at once, or MaxPerClient
//     from one client process, a connection is answered at once, its
//     request unread: {"error":"busy (max-in-flight): ...","retry_after":1,"run":false}
//     (retry_after in whole seconds, only on such an answer); a Client
//     returns it as ErrBusy.
//   - Unknown fields are refused in both directions, and so is anything
//     after the response's object.
//   - A request's paths are absolute: the server does not share the
//     client's working directory.
//   - The client believes only a server that runs as the expected user
//     (SO_PEERCRED), and only a verdict whose instruction_digest is the
//     digest of the bytes it sent (ErrWrongDispatch).
//   - A response with "run": true beside a refusal or an error is
//     malformed.
//
// The server creates its socket mode 0600 (Listen), so only its user, and
// root, may connect. Verdicts are decided by package verify; a verdict
// without "error" was recorded in the runner's decision log before it was
// sent.
package admission
