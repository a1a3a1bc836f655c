package audit

import (
	"slices"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
)

// Traffic is the audit's picture of what the runners decided, over the
// decisions whose time falls in the period (Options.Since, Until);
// every decision is verified whatever the period.
type Traffic struct {
	ByMode    map[string]int64 `json:"by_mode"`
	ByMachine map[string]int64 `json:"by_machine"`
	ByStream  map[string]int64 `json:"by_stream"`
	// BySigner counts by verified signer key id (64 hex); "none" when no
	// verified signature stood behind the dispatch.
	BySigner map[string]int64 `json:"by_signer"`
	// Unsigned counts the dispatches that carried no signature (rule
	// unsigned among the failed checks); UnsignedShare is their share of
	// the decisions counted (0 when there are none).
	Unsigned      int64   `json:"unsigned"`
	UnsignedShare float64 `json:"unsigned_share"`
	// WouldRefuseByRule: the decisions admitted although a rule failed,
	// by that rule: what enforce would have refused.
	WouldRefuseByRule map[string]int64 `json:"would_refuse_by_rule"`
	// Days are the counts per UTC day, oldest first: every day of the
	// period, those without decisions included, from the day of Since (or
	// of the first decision counted) to the day before Until (or the
	// audit's day, Report.AuditedAt, when the period is open), at most
	// ten years (else the days from the first decision to the last);
	// empty when no decision is counted and Since is open.
	Days []DayCount `json:"days"`
	// FlaggedBuilds are the binaries admitted while flagged dirty or of
	// unknown source, at most MaxListed of them (FlaggedBuildsTotal counts
	// all).
	FlaggedBuilds      []FlaggedBuild `json:"flagged_builds"`
	FlaggedBuildsTotal int64          `json:"flagged_builds_total"`
	// AuthorityEvents are the revocations, and the delegations and roots
	// that expired, in the period (all of them when there is none).
	AuthorityEvents      []AuthorityEvent `json:"authority_events"`
	AuthorityEventsTotal int64            `json:"authority_events_total"`
	// Since and Until are the period counted (RFC 3339, UTC, whole
	// seconds: decisions record whole seconds, so a bound's fraction is
	// rounded up): the first second counted and the first second after
	// it; "" when open.
	Since string `json:"since,omitempty"`
	Until string `json:"until,omitempty"`
	// FirstDecision and LastDecision are the times of the earliest and
	// latest decision counted (RFC 3339, UTC); "" when none was.
	FirstDecision string `json:"first_decision,omitempty"`
	LastDecision  string `json:"last_decision,omitempty"`
	// OutsidePeriod counts verified decisions left out of the counts.
	OutsidePeriod int64 `json:"outside_period"`

	days        map[string]*DayCount
	first, last int64 // Unix seconds of the first and last decision counted
}

// maxDays bounds the days filled in between the first and the last
// decision (ten years).
const maxDays = 3660

// MaxListed bounds the lists of a report (flagged builds, authority
// events); the totals count everything.
const MaxListed = 1000

// DayCount is one UTC day (YYYY-MM-DD) of decisions.
type DayCount struct {
	Day       string `json:"day"`
	Decisions int64  `json:"decisions"`
	Unsigned  int64  `json:"unsigned"`
	Refused   int64  `json:"refused"`
	// WouldRefuse counts the decisions admitted although a rule failed:
	// what enforce would have refused (in any mode; the report's
	// would_refuse_under_enforce, per day).
	WouldRefuse int64 `json:"would_refuse"`
	// ByVerdict splits Decisions by verdict; its WouldRefuse is the
	// would-refuse verdict (warn mode), a part of the count above.
	ByVerdict VerdictCounts `json:"by_verdict"`
	// Partial marks a day the period covers only in part: the first day
	// when Since is after its midnight, the last when the period ends
	// (Until, or the audit's clock when open) before the day does.
	Partial bool `json:"partial,omitempty"`
}

// VerdictCounts counts decisions by verdict, under the verdicts' names.
type VerdictCounts struct {
	Admitted         int64 `json:"admitted"`
	AdmittedUnsigned int64 `json:"admitted-unsigned"`
	WouldRefuse      int64 `json:"would-refuse"`
	Refused          int64 `json:"refused"`
}

// add counts one decision of verdict v.
func (c *VerdictCounts) add(v schemas.Verdict) {
	switch v {
	case schemas.VerdictAdmitted:
		c.Admitted++
	case schemas.VerdictAdmittedUnsigned:
		c.AdmittedUnsigned++
	case schemas.VerdictWouldRefuse:
		c.WouldRefuse++
	case schemas.VerdictRefused:
		c.Refused++
	}
}

// FlaggedBuild is one admission of a binary flagged dirty-build or
// unknown-build (admitted under off or warn).
type FlaggedBuild struct {
	Decision    int64           `json:"decision"`
	Time        string          `json:"time"` // RFC 3339, UTC
	Rule        string          `json:"rule"`
	Verdict     schemas.Verdict `json:"verdict"`
	Machine     string          `json:"machine"`
	Instruction string          `json:"instruction_id"`
	Digest      string          `json:"digest,omitempty"` // the agent's digest computed on the runner
}

// AuthorityEvent is authority that ended: a revocation (at its
// issued_at), or a delegation or root that expired (at its end).
type AuthorityEvent struct {
	Index   int64  `json:"index"` // authority log entry
	Kind    string `json:"kind"`  // revocation, delegation-expired, root-expired
	Time    string `json:"time"`  // RFC 3339, UTC
	Subject string `json:"subject"`
}

func unixUTC(sec int64) string { return time.Unix(sec, 0).UTC().Format(time.RFC3339) }

func newTraffic() *Traffic {
	return &Traffic{ByMode: map[string]int64{}, ByMachine: map[string]int64{}, ByStream: map[string]int64{},
		BySigner: map[string]int64{}, WouldRefuseByRule: map[string]int64{}, days: map[string]*DayCount{},
		Days: []DayCount{}, FlaggedBuilds: []FlaggedBuild{}, AuthorityEvents: []AuthorityEvent{}}
}

// inPeriod reports whether Unix time t (whole seconds, as decisions
// record it) is in [since, until) (zero: open); fractions of a second in
// the bounds count: t >= since is t >= ceil(since).
func (o Options) inPeriod(t int64) bool {
	return (o.Since.IsZero() || t >= ceilUnix(o.Since)) && (o.Until.IsZero() || t < ceilUnix(o.Until))
}

func ceilUnix(t time.Time) int64 {
	if t.Nanosecond() > 0 {
		return t.Unix() + 1
	}
	return t.Unix()
}

// add counts decision i.
func (tr *Traffic) add(i int64, d *schemas.Decision) {
	unsigned := d.Rule == rules.Unsigned || slices.Contains(d.Failed, rules.Unsigned)
	would := d.Verdict != schemas.VerdictRefused && d.Rule != rules.OK
	tr.ByMode[d.Mode]++
	tr.ByMachine[d.Machine]++
	stream := d.Stream
	if stream == "" {
		stream = "none"
	}
	tr.ByStream[stream]++
	signer := d.Signer
	if signer == "" {
		signer = "none"
	}
	tr.BySigner[signer]++
	if tr.first == 0 || d.Time < tr.first {
		tr.first = d.Time
	}
	tr.last = max(tr.last, d.Time)
	day := time.Unix(d.Time, 0).UTC().Format(time.DateOnly)
	dc := tr.days[day]
	if dc == nil {
		dc = &DayCount{Day: day}
		tr.days[day] = dc
	}
	dc.Decisions++
	dc.ByVerdict.add(d.Verdict)
	if unsigned {
		tr.Unsigned++
		dc.Unsigned++
	}
	if d.Verdict == schemas.VerdictRefused {
		dc.Refused++
	}
	if would {
		tr.WouldRefuseByRule[d.Rule]++
		dc.WouldRefuse++
	}
	if d.Verdict != schemas.VerdictRefused {
		for _, r := range d.Failed {
			if r != rules.DirtyBuild && r != rules.UnknownBuild {
				continue
			}
			tr.FlaggedBuildsTotal++
			if len(tr.FlaggedBuilds) < MaxListed {
				fb := FlaggedBuild{Decision: i, Time: unixUTC(d.Time), Rule: r, Verdict: d.Verdict, Machine: d.Machine, Instruction: d.InstructionID}
				for _, c := range d.Compared {
					if c.Subject == "agent" {
						fb.Digest = c.Actual
					}
				}
				tr.FlaggedBuilds = append(tr.FlaggedBuilds, fb)
			}
		}
	}
}

// authorityEvent notes authority that ended in the period, from one
// applied authority record; now bounds expirations (not yet ended is not
// an event).
func (tr *Traffic) authorityEvent(o Options, a *delegation.Applied, now time.Time) {
	var ev AuthorityEvent
	switch r := a.Record.(type) {
	case *schemas.Revocation:
		// A revocation is in force from its ledger position: the time the
		// log accepted it, which its signer does not choose.
		at := a.Accepted.Unix()
		ev = AuthorityEvent{Kind: "revocation", Time: unixUTC(at), Subject: r.Target + " (" + r.Reason + ")"}
		if !o.inPeriod(at) {
			return
		}
	case *schemas.Delegation:
		if r.NotAfter > now.Unix() || !o.inPeriod(r.NotAfter) {
			return
		}
		ev = AuthorityEvent{Kind: "delegation-expired", Time: unixUTC(r.NotAfter), Subject: a.Digest}
	case *schemas.Root:
		if r.Expires > now.Unix() || !o.inPeriod(r.Expires) {
			return
		}
		ev = AuthorityEvent{Kind: "root-expired", Time: unixUTC(r.Expires), Subject: a.Digest}
	default:
		return
	}
	ev.Index = a.Index
	tr.AuthorityEventsTotal++
	if len(tr.AuthorityEvents) < MaxListed {
		tr.AuthorityEvents = append(tr.AuthorityEvents, ev)
	}
}
