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

// counter counts what is held (connections, or requests in flight) in
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
func (c *counter) acquire(client string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.maxClient < c.maxTotal && c.byClient[client] >= c.maxClient:
		return errClient
	case c.total >= c.maxTotal:
		return errTotal
	}
	c.total++
	c.byClient[client]++
	return nil
}

// release gives back one place acquire took for client.
func (c *counter) release(client string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total--
	if c.byClient[client]--; c.byClient[client] <= 0 {
		delete(c.byClient, client)
	}
}
