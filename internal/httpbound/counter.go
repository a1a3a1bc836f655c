package httpbound

import (
	"errors"
	"sync"
)

// Outcomes of counter.acquire past a limit.
var (
	errTotal  = errors.New("total limit reached")
	errClient = errors.New("per-client limit reached")
)

// counter counts what is held (connections, requests in flight, or
// bytes of request bodies) in
// total and by client, each under a limit. Its map holds only clients
// holding something, so it is at most total entries.
type counter struct {
	mu        sync.Mutex
	total     int
	byClient  map[string]int
	maxTotal  int
	maxClient int
}

func newCounter(maxTotal, maxClient int) *counter {
	return &counter{byClient: make(map[string]int), maxTotal: maxTotal, maxClient: maxClient}
}

// acquire takes one place for client: nil, or errClient when the client
// holds maxClient, else errTotal when maxTotal are held. A client at its
// own limit is told so even when the total is reached too, unless its
// limit is the total's (there is then no per-client limit).
func (c *counter) acquire(client string) error { return c.acquireN(client, 1) }

// acquireN is acquire of n places at once (n > 0), all or none.
func (c *counter) acquireN(client string, n int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.maxClient < c.maxTotal && c.byClient[client]+n > c.maxClient:
		return errClient
	case c.total+n > c.maxTotal:
		return errTotal
	}
	c.total += n
	c.byClient[client] += n
	return nil
}

// release gives back one place acquire took for client.
func (c *counter) release(client string) { c.releaseN(client, 1) }

// releaseN gives back n places acquireN took for client (none for 0).
func (c *counter) releaseN(client string, n int) {
	if n == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total -= n
	if c.byClient[client] -= n; c.byClient[client] <= 0 {
		delete(c.byClient, client)
	}
}
