package admission

import (
	"encoding/json"
	"fmt"
	"net"
	"sync"
	"time"
)

// slots counts the requests being served, in total and by client pid.
type slots struct {
	mu        sync.Mutex
	total     int
	byPID     map[int32]int
	maxTotal  int
	maxClient int
}

// newSlots bounds requests to maxTotal, and to maxClient per client
// (DefaultMaxPerClient, at most maxTotal, when not positive).
func newSlots(maxTotal, maxClient int) *slots {
	if maxClient <= 0 {
		maxClient = min(DefaultMaxPerClient, maxTotal)
	}
	return &slots{byPID: make(map[int32]int), maxTotal: maxTotal, maxClient: maxClient}
}

// acquire takes a slot for the client pid: "" when it did, else the
// flag whose limit is reached ("max-per-client" first, unless it is the
// total's, then "max-in-flight").
func (s *slots) acquire(pid int32) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.maxClient < s.maxTotal && s.byPID[pid] >= s.maxClient:
		return "max-per-client"
	case s.total >= s.maxTotal:
		return "max-in-flight"
	}
	s.total++
	s.byPID[pid]++
	return ""
}

// release gives back the slot acquire took for pid.
func (s *slots) release(pid int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total--
	if s.byPID[pid]--; s.byPID[pid] <= 0 {
		delete(s.byPID, pid)
	}
}

// busyWriteTimeout bounds writing a busy answer: it is a few hundred
// bytes, which a new socket's buffer takes at once.
const busyWriteTimeout = 100 * time.Millisecond

// answerBusy answers conn busy, naming the limit reached (the flag of
// writ admission serve that sets it), without reading its request, and
// closes it.
func (s *Server) answerBusy(conn net.Conn, limit string) {
	defer conn.Close()
	retry := max(1, int64((orDefault(s.RetryAfter, DefaultRetryAfter)+time.Second-1)/time.Second))
	var msg string
	if limit == "max-per-client" {
		msg = fmt.Sprintf("busy (max-per-client): this client process has %d requests in flight, the limit set by --max-per-client; retry after %ds",
			orDefault(s.MaxPerClient, min(DefaultMaxPerClient, orDefault(s.MaxConnections, DefaultMaxConnections))), retry)
	} else {
		msg = fmt.Sprintf("busy (max-in-flight): %d requests in flight, the limit set by --max-in-flight; retry after %ds",
			orDefault(s.MaxConnections, DefaultMaxConnections), retry)
	}
	conn.SetWriteDeadline(time.Now().Add(busyWriteTimeout))
	json.NewEncoder(conn).Encode(rejection{Error: msg, RetryAfter: retry})
}

// peerPID is the pid of the process at the other end of a UNIX socket
// connection (SO_PEERCRED), or -1 when it cannot be read (not a UNIX
// socket): such connections share one client's limit.
func peerPID(conn net.Conn) int32 {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return -1
	}
	cred, err := peerCred(uc)
	if err != nil {
		return -1
	}
	return cred.Pid
}
