package audit

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

// TestParsePeriod: each bound read as a time or a duration from now,
// and each refusal's exact message and hints.
func TestParsePeriod(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		since, until string
		from, to     time.Time
		err          *PeriodError
	}{
		{"", "", time.Time{}, time.Time{}, nil},
		{"-1h", "", now.Add(-time.Hour), time.Time{}, nil},
		{"2026-11-01T00:00:00Z", "-1h", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), now.Add(-time.Hour), nil},
		{"", "720h", time.Time{}, now.Add(720 * time.Hour), nil},
		{"yesterday", "", time.Time{}, time.Time{}, &PeriodError{Flag: "--since", Value: "yesterday",
			Msg: `--since "yesterday": want an RFC 3339 time (2026-11-29T10:00:00Z) or a duration from now (720h later, -720h earlier)`}},
		{"", "x", time.Time{}, time.Time{}, &PeriodError{Flag: "--until", Value: "x",
			Msg: `--until "x": want an RFC 3339 time (2026-11-29T10:00:00Z) or a duration from now (720h later, -720h earlier)`}},
		{"720h", "", time.Time{}, time.Time{}, &PeriodError{Flag: "--since", Value: "720h",
			Msg:   "--since 720h is 2026-12-29T10:00:00Z, after now: the period would hold no decisions",
			Hints: []string{"a duration counts from now: for the last 720h write --since -720h"}}},
		{"2027-01-01T00:00:00Z", "", time.Time{}, time.Time{}, &PeriodError{Flag: "--since", Value: "2027-01-01T00:00:00Z",
			Msg:   "--since 2027-01-01T00:00:00Z is 2027-01-01T00:00:00Z, after now: the period would hold no decisions",
			Hints: []string{"a duration counts from now: the last 30 days are --since -720h"}}},
		{"-1h", "-2h", time.Time{}, time.Time{}, &PeriodError{Flag: "--until", Value: "-2h", Msg: "--until -2h is not after --since -1h"}},
	} {
		from, to, err := ParsePeriod(tc.since, tc.until, now)
		var pe *PeriodError
		if tc.err == nil && err != nil || tc.err != nil && (!errors.As(err, &pe) || !reflect.DeepEqual(pe, tc.err)) {
			t.Errorf("%q %q: error %#v, want %#v", tc.since, tc.until, err, tc.err)
		}
		if !from.Equal(tc.from) || !to.Equal(tc.to) {
			t.Errorf("%q %q: %v %v, want %v %v", tc.since, tc.until, from, to, tc.from, tc.to)
		}
	}
}
