package main

import (
	"time"

	"github.com/writ-ledger/writ/internal/cliflags"
)

// parseTime is cliflags.ParseTime: an RFC 3339 time or a Go duration
// from now (which may be negative, "-1h"), else bad usage.
func parseTime(flag, s string, now time.Time) (time.Time, error) {
	return cliflags.ParseTime(flag, s, now)
}
