package main

import "time"

// parseTime reads an RFC 3339 time or a Go duration from now (which may
// be negative, "-1h").
func parseTime(flag, s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(d), nil
	}
	return time.Time{}, usageErr("--%s %q: want an RFC 3339 time (2026-11-29T10:00:00Z) or a duration from now (720h later, -720h earlier)", flag, s)
}
