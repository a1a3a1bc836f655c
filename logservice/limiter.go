package logservice

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// limiter bounds the records each client (a remote IP address) submits:
// a token bucket per client (golang.org/x/time/rate) of rate records per
// second and burst at once, for at most max clients at a time. A client
// whose bucket is full again (idle for burst/rate) is forgotten when the
// table is full, so the table holds only clients that submitted lately.
type limiter struct {
	rate  rate.Limit
	burst int
	max   int

	mu      sync.Mutex
	clients map[string]*rate.Limiter
}

func newLimiter(perSecond float64, burst, max int) *limiter {
	return &limiter{rate: rate.Limit(perSecond), burst: burst, max: max, clients: map[string]*rate.Limiter{}}
}

// allow takes n records from ip's bucket at now. When it cannot, it
// returns how long until it could (retry), or full when the table holds
// max clients that all submitted lately (a new client is then refused,
// never a known one).
func (l *limiter) allow(ip string, n int, now time.Time) (ok bool, retry time.Duration, full bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.clients[ip]
	if c == nil {
		if len(l.clients) >= l.max && !l.sweep(now) {
			return false, time.Second, true
		}
		c = rate.NewLimiter(l.rate, l.burst)
		l.clients[ip] = c
	}
	r := c.ReserveN(now, n)
	if !r.OK() {
		return false, 0, false // n over burst: the caller checked it is not
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d, false
	}
	return true, 0, false
}

// sweep forgets the clients whose bucket is full again and reports
// whether it freed any.
func (l *limiter) sweep(now time.Time) bool {
	freed := false
	for ip, c := range l.clients {
		if c.TokensAt(now) >= float64(l.burst) {
			delete(l.clients, ip)
			freed = true
		}
	}
	return freed
}
