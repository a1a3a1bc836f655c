package httpbound

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Limits are a Server's bounds. A zero field takes its default (the
// Default... constants); a negative one is an error (ErrLimits).
type Limits struct {
	// MaxConns bounds the open connections (DefaultMaxConns).
	MaxConns int
	// MaxConnsPerClient bounds the open connections of one remote IP
	// address (ConnsPerClientFactor × MaxPerClient, at most MaxConns).
	MaxConnsPerClient int
	// MaxInFlight bounds the requests inside the handler at once
	// (DefaultMaxInFlight).
	MaxInFlight int
	// MaxPerClient bounds the requests of one remote IP address inside
	// the handler at once (DefaultMaxPerClient, at most MaxInFlight).
	MaxPerClient int
	// MaxHeaderBytes bounds a request's line and headers, in bytes
	// (DefaultMaxHeaderBytes; net/http allows 4,096 bytes more).
	MaxHeaderBytes int
	// MaxBodyBytes bounds a request's body, in bytes (DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// ReadHeaderTimeout bounds the time to read a request's line and
	// headers (DefaultReadHeaderTimeout, at most ReadTimeout).
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds the time to read a whole request, body included
	// (DefaultReadTimeout).
	ReadTimeout time.Duration
	// WriteTimeout bounds the time from the end of a request's headers to
	// the end of its answer (DefaultWriteTimeout).
	WriteTimeout time.Duration
	// IdleTimeout bounds the wait for the next request on a keep-alive
	// connection (DefaultIdleTimeout).
	IdleTimeout time.Duration
	// RetryAfter is what a refusal's Retry-After header says, rounded up
	// to whole seconds (DefaultRetryAfter).
	RetryAfter time.Duration
}

// Defaults of Limits. With them a server holds at most DefaultMaxConns
// connections and DefaultMaxInFlight request bodies of MaxBodyBytes.
const (
	DefaultMaxConns          = 512
	ConnsPerClientFactor     = 4 // MaxConnsPerClient's default is this × MaxPerClient
	DefaultMaxInFlight       = 64
	DefaultMaxPerClient      = 8
	DefaultMaxHeaderBytes    = 16 << 10
	DefaultMaxBodyBytes      = 64 << 10
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 15 * time.Second
	DefaultWriteTimeout      = 60 * time.Second
	DefaultIdleTimeout       = 60 * time.Second
	DefaultRetryAfter        = time.Second
)

// ErrLimits: a Limits field is negative, or a per-client bound is above
// its total. The error names the field as its writ flag
// (--max-per-client) and both values.
var ErrLimits = errors.New("invalid server limits")

// withDefaults returns l with every zero field at its default, or an
// error wrapping ErrLimits.
func (l Limits) withDefaults() (Limits, error) {
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"max-conns", int64(l.MaxConns)}, {"max-conns-per-client", int64(l.MaxConnsPerClient)},
		{"max-in-flight", int64(l.MaxInFlight)}, {"max-per-client", int64(l.MaxPerClient)},
		{"max-header-bytes", int64(l.MaxHeaderBytes)}, {"max-body-bytes", l.MaxBodyBytes},
		{"read-header-timeout", int64(l.ReadHeaderTimeout)}, {"read-timeout", int64(l.ReadTimeout)},
		{"write-timeout", int64(l.WriteTimeout)}, {"idle-timeout", int64(l.IdleTimeout)},
		{"retry-after", int64(l.RetryAfter)},
	} {
		if f.v < 0 {
			return Limits{}, fmt.Errorf("%w: --%s is negative", ErrLimits, f.name)
		}
	}
	l.MaxConns = orDefault(l.MaxConns, DefaultMaxConns)
	l.MaxInFlight = orDefault(l.MaxInFlight, DefaultMaxInFlight)
	l.MaxPerClient = orDefault(l.MaxPerClient, min(DefaultMaxPerClient, l.MaxInFlight))
	l.MaxConnsPerClient = orDefault(l.MaxConnsPerClient, min(ConnsPerClientFactor*l.MaxPerClient, l.MaxConns))
	l.MaxHeaderBytes = orDefault(l.MaxHeaderBytes, DefaultMaxHeaderBytes)
	l.MaxBodyBytes = orDefault(l.MaxBodyBytes, DefaultMaxBodyBytes)
	l.ReadTimeout = orDefault(l.ReadTimeout, DefaultReadTimeout)
	l.ReadHeaderTimeout = orDefault(l.ReadHeaderTimeout, min(DefaultReadHeaderTimeout, l.ReadTimeout))
	l.WriteTimeout = orDefault(l.WriteTimeout, DefaultWriteTimeout)
	l.IdleTimeout = orDefault(l.IdleTimeout, DefaultIdleTimeout)
	l.RetryAfter = orDefault(l.RetryAfter, DefaultRetryAfter)
	switch {
	case l.MaxPerClient > l.MaxInFlight:
		return Limits{}, fmt.Errorf("%w: --max-per-client %d is above --max-in-flight %d", ErrLimits, l.MaxPerClient, l.MaxInFlight)
	case l.MaxConnsPerClient > l.MaxConns:
		return Limits{}, fmt.Errorf("%w: %d connections per client is above --max-conns %d", ErrLimits, l.MaxConnsPerClient, l.MaxConns)
	case l.MaxInFlight > l.MaxConns:
		return Limits{}, fmt.Errorf("%w: --max-in-flight %d is above --max-conns %d (each request in flight holds a connection)", ErrLimits, l.MaxInFlight, l.MaxConns)
	case int64(l.MaxInFlight) > math.MaxInt32 || l.MaxBodyBytes > math.MaxInt32:
		return Limits{}, fmt.Errorf("%w: --max-in-flight %d or the body limit %d is past %d (their product bounds the bodies held)", ErrLimits, l.MaxInFlight, l.MaxBodyBytes, math.MaxInt32)
	case l.ReadHeaderTimeout > l.ReadTimeout:
		return Limits{}, fmt.Errorf("%w: the header timeout %s is above --read-timeout %s", ErrLimits, l.ReadHeaderTimeout, l.ReadTimeout)
	}
	return l, nil
}

// orDefault is v, or def when v is zero.
func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// retrySeconds is d in whole seconds, rounded up, at least 1.
func retrySeconds(d time.Duration) int64 {
	return max(1, int64((d+time.Second-1)/time.Second))
}
