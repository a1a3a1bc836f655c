package audit

import (
	"fmt"
	"time"
)

// PeriodError is ParsePeriod's refusal of a period: a bound that is
// neither an RFC 3339 time nor a duration, a period that starts after
// now (it would count nothing), or one that ends before it starts.
type PeriodError struct {
	Flag  string   // the bound refused, as its flag is written: "--since" or "--until"
	Value string   // the bound as given
	Msg   string   // the whole message
	Hints []string // what to write instead, when there is something to say
}

// Error returns the message, which names the bound and its value.
func (e *PeriodError) Error() string { return e.Msg }

// ParsePeriod reads an audit's period from since and until, each an RFC
// 3339 time or a Go duration from now (negative for the past: "-720h"),
// "" when not given (a zero time: no bound). It refuses, with a
// *PeriodError, a bound that is neither, a since after now (a duration
// written without its minus sign) and an until not after since.
func ParsePeriod(since, until string, now time.Time) (from, to time.Time, err error) {
	if from, err = parseBound("since", since, now); err != nil {
		return time.Time{}, time.Time{}, err
	}
	if to, err = parseBound("until", until, now); err != nil {
		return time.Time{}, time.Time{}, err
	}
	if from.After(now) {
		hint := "a duration counts from now: the last 30 days are --since -720h"
		if d, perr := time.ParseDuration(since); perr == nil && d > 0 {
			hint = fmt.Sprintf("a duration counts from now: for the last %s write --since -%s", since, since)
		}
		return time.Time{}, time.Time{}, &PeriodError{Flag: "--since", Value: since, Hints: []string{hint},
			Msg: fmt.Sprintf("--since %s is %s, after now: the period would hold no decisions", since, from.UTC().Format(time.RFC3339))}
	}
	if !from.IsZero() && !to.IsZero() && !to.After(from) {
		return time.Time{}, time.Time{}, &PeriodError{Flag: "--until", Value: until, Msg: fmt.Sprintf("--until %s is not after --since %s", until, since)}
	}
	return from, to, nil
}

// parseBound reads one bound of ParsePeriod: "" (the zero time), an RFC
// 3339 time, or a duration from now.
func parseBound(flag, s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(d), nil
	}
	return time.Time{}, &PeriodError{Flag: "--" + flag, Value: s,
		Msg: fmt.Sprintf("--%s %q: want an RFC 3339 time (2026-11-29T10:00:00Z) or a duration from now (720h later, -720h earlier)", flag, s)}
}
