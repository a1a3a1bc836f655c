package audit

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/ledger/tiles"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/verify/runner"
)

// ErrFleet is wrapped by every error about a fleet file.
var ErrFleet = errors.New("malformed fleet file")

// ErrNothingVerified is the cause of a fleet audit that verified no
// runner's decision log (a fleet file naming no runner): such a report
// is never OK (rules.NothingVerified), whatever the authority log.
var ErrNothingVerified = errors.New("nothing verified: the fleet file names no runner, so no decision log was checked")

// FleetLog is one published log of a fleet: a name (the runner's; empty
// for the authority log), its URL (as tiles.OpenSource takes it) and the
// verifier key its checkpoints must verify under, parsed from the fleet
// file (never nil in a Fleet ParseFleet returns).
type FleetLog struct {
	Name string
	URL  string
	VKey *formats.LogKey
}

// Fleet is what `writ audit --fleet` audits: the authority log and each
// runner's decision log, as published.
type Fleet struct {
	Authority FleetLog
	Runners   []FleetLog
}

// MaxFleetFile bounds a fleet file, in bytes; MaxFleetRunners bounds its
// runners.
const (
	MaxFleetFile    = 1 << 20
	MaxFleetRunners = 10000
)

var runnerName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ParseFleet reads a fleet file: UTF-8 lines, '#' starts a comment,
// blank lines are ignored, and every other line is one of
//
//	authority URL VKEY
//	runner NAME URL VKEY
//
// with exactly one authority line and runner names (1 to 64 of
// [A-Za-z0-9._-], not starting with '.', '_' or '-') used once each. URL
// is an https:// URL, an http:// URL on loopback, or a directory; VKEY a
// signed-note verifier key. No two lines name the same log, by URL or by
// verifier key: a decision log listed twice would be counted twice. Errors
// wrap ErrFleet and name the line.
func ParseFleet(data []byte) (*Fleet, error) {
	if len(data) > MaxFleetFile {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrFleet, len(data), MaxFleetFile)
	}
	f := &Fleet{}
	seen := map[string]bool{}
	logs := map[string]int{} // a log's URL or verifier key → the line naming it
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, MaxFleetFile)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%w: line %d: %s", ErrFleet, n, fmt.Sprintf(format, args...))
		}
		var l FleetLog
		var vkey string
		switch {
		case fields[0] == "authority" && len(fields) == 3:
			if f.Authority.URL != "" {
				return nil, bad("a second authority line")
			}
			l, vkey = FleetLog{URL: fields[1]}, fields[2]
		case fields[0] == "runner" && len(fields) == 4:
			l, vkey = FleetLog{Name: fields[1], URL: fields[2]}, fields[3]
			if !runnerName.MatchString(l.Name) || l.Name == "total" {
				return nil, bad("runner name %q: 1 to 64 of A-Z a-z 0-9 . _ -, starting with a letter or digit, and not \"total\" (the report's)", l.Name)
			}
			if seen[l.Name] {
				return nil, bad("runner %q named twice", l.Name)
			}
			if len(f.Runners) == MaxFleetRunners {
				return nil, bad("more than %d runners", MaxFleetRunners)
			}
			seen[l.Name] = true
		default:
			return nil, bad("expected `authority URL VKEY` or `runner NAME URL VKEY`")
		}
		var err error
		if l.VKey, err = formats.ParseLogKey(vkey); err != nil {
			return nil, bad("verifier key %q: %v", vkey, err)
		}
		if err := onceEach(logs, n, l); err != nil {
			return nil, bad("%v", err)
		}
		if fields[0] == "authority" {
			f.Authority = l
		} else {
			f.Runners = append(f.Runners, l)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFleet, err)
	}
	if f.Authority.URL == "" {
		return nil, fmt.Errorf("%w: no authority line", ErrFleet)
	}
	return f, nil
}

// RunnerReport is one runner's part of a fleet audit: its decision log
// as fetched and verified, and its Report (nil when the log could not be
// fetched or verified; Failure says why).
type RunnerReport struct {
	Name    string   `json:"name"`
	URL     string   `json:"url"`
	OK      bool     `json:"ok"`
	Report  *Report  `json:"report,omitempty"`
	Failure *Failure `json:"failure,omitempty"`
}

// FleetTotals adds up the runners that verified.
type FleetTotals struct {
	Decisions         int64            `json:"decisions"`
	Unsigned          int64            `json:"unsigned"`
	UnsignedShare     float64          `json:"unsigned_share"`
	Refused           int64            `json:"refused"`
	WouldRefuse       int64            `json:"would_refuse_under_enforce"`
	WouldRefuseByRule map[string]int64 `json:"would_refuse_by_rule"`
	ByVerdict         map[string]int64 `json:"by_verdict"`
	FlaggedBuilds     int64            `json:"flagged_builds_total"`
}

// FleetReport is the outcome of RunFleet: OK only when the authority
// log and every runner's log verified.
type FleetReport struct {
	OK        bool               `json:"ok" doc:"whether the authority log and every runner's log verified"`
	Authority *CheckpointSummary `json:"authority_checkpoint,omitempty" doc:"the authority log's verified checkpoint: origin, size, root_hash"`
	// Witnessing is what Options.Policy found on the authority
	// checkpoint (nil without a policy).
	Witnessing *formats.Witnessing `json:"witnessing,omitempty" doc:"with --policy: the quorum that cosigned the authority checkpoint"`
	Failure    *Failure            `json:"failure,omitempty" doc:"the authority log's failure: log, index, error"`
	Runners    []RunnerReport      `json:"runners" doc:"each runner's name, url, ok, report, failure"`
	Total      FleetTotals         `json:"total" doc:"the runners' reports added up"`
}

// RunFleet audits a fleet from where it publishes its logs. Every
// runner's decision log is synced first (replica.Sync: signed under the
// runner's key, proven into its signed checkpoint, every decision decoded
// strictly), then the authority log (Replica: every record replayed at
// the time the log accepted it, rooted at o.TrustRoot when given), so
// that the authority log is at least as new as any decision that names
// one of its checkpoints; then each runner is audited as Run audits a
// ledger directory, against that authority log, whose audit (entries,
// tree, checkpoint, history, every record replayed) is made once for all
// the runners (auditRunners, fleetAuthority). Replicas are kept in
// cache (made if missing): a later audit with the same cache fetches
// only what is new. timeout bounds each request. A runner whose log
// cannot be fetched or does not verify fails the fleet audit, with its
// reason; the others are still reported. A fleet of no runner is not OK
// (ErrNothingVerified, rules.NothingVerified): the authority log alone
// is verified, and no decision. The error return is for a cache that
// cannot be used.
func RunFleet(ctx context.Context, f *Fleet, cache string, o Options, timeout time.Duration) (*FleetReport, error) {
	rep := &FleetReport{OK: true, Total: FleetTotals{WouldRefuseByRule: map[string]int64{}, ByVerdict: map[string]int64{}}}
	authDir := filepath.Join(cache, "authority")
	if err := os.MkdirAll(filepath.Join(cache, "runners"), 0o700); err != nil {
		return nil, err
	}
	for _, r := range f.Runners {
		rr := RunnerReport{Name: r.Name, URL: r.URL}
		dir := filepath.Join(cache, "runners", r.Name)
		err := os.MkdirAll(dir, 0o700)
		if err == nil {
			err = linkAuthority(dir, authDir)
		}
		var src tiles.Source
		if err == nil {
			src, err = tiles.OpenSource(r.URL, timeout)
		}
		if err == nil {
			_, err = runner.SyncDecisions(ctx, filepath.Join(dir, ledgerdir.DecisionsDir), src, r.VKey)
		}
		if err != nil {
			rr.Failure = failure("decisions", err)
		}
		rep.Runners = append(rep.Runners, rr)
	}
	src, err := tiles.OpenSource(f.Authority.URL, timeout)
	if err == nil {
		a := &runner.Replica{Dir: authDir, Source: src, VKey: f.Authority.VKey, TrustRoot: o.TrustRoot, Policy: o.Policy}
		var res replica.Synced
		if res, err = a.Sync(ctx); err == nil {
			rep.Authority = summarize(res.Checkpoint)
			rep.Witnessing = res.Witnessing
		}
	}
	if err != nil {
		rep.OK, rep.Failure = false, failure("authority", err)
		for i := range rep.Runners {
			if rep.Runners[i].Failure == nil {
				rep.Runners[i].Failure = &Failure{Log: "authority", Index: -1, Error: "not audited: the authority log did not verify"}
			}
		}
		return rep, nil
	}
	auditRunners(rep, f, cache, o)
	if len(rep.Runners) == 0 {
		// The authority log verified, and that is all: a fleet audit is
		// about the runners' decisions, and none was checked.
		rep.OK = false
		rep.Failure = &Failure{Log: "decisions", Index: -1, Error: ErrNothingVerified.Error(), Rule: rules.NothingVerified, Cause: ErrNothingVerified}
	}
	if rep.Total.Decisions > 0 {
		rep.Total.UnsignedShare = float64(rep.Total.Unsigned) / float64(rep.Total.Decisions)
	}
	return rep, nil
}

// auditRunners audits each runner of rep that synced, as Run audits a
// ledger directory, against the fleet's authority replica in cache
// verified once for them all (fleetAuthority). o.Progress, when set, is
// told the entries verified, of the authority log's and every decision
// log's, every ProgressEvery entries and at the end of each log.
func auditRunners(rep *FleetReport, f *Fleet, cache string, o Options) {
	sizes := make([]int64, len(rep.Runners))
	var synced int
	var decisions int64
	for i, rr := range rep.Runners {
		if rr.Failure != nil {
			rep.OK = false
			continue
		}
		synced++
		if o.Progress != nil {
			sizes[i] = decisionsSize(filepath.Join(cache, "runners", rr.Name))
			decisions += sizes[i]
		}
	}
	if synced == 0 {
		return // no decision log to bind: the synced authority log is all
	}
	ao := o
	ao.AuthorityVKey, ao.DecisionsVKey, ao.StateFile = f.Authority.VKey, nil, ""
	auth := verifyFleetAuthority(filepath.Join(cache, "authority"), ao, decisions)
	defer auth.close()
	for i := range rep.Runners {
		rr := &rep.Runners[i]
		if rr.Failure != nil {
			continue
		}
		ro := ao
		ro.DecisionsVKey = f.Runners[i].VKey
		r, err := Run(runnerDir{dir: filepath.Join(cache, "runners", rr.Name), auth: auth}, ro)
		auth.counted(r, sizes[i])
		switch {
		case err != nil:
			rr.Failure = failure("decisions", err)
		case !r.OK:
			rr.Failure = r.Failure
		default:
			rr.OK, rr.Report = true, r
			rep.Total.add(r)
			continue
		}
		rep.OK = false
	}
	if o.Progress != nil {
		o.Progress(auth.done, auth.total)
	}
}

// decisionsSize is the entries of the decision log of the ledger
// directory dir, for progress (0 when it cannot be read: the audit then
// says why).
func decisionsSize(dir string) int64 {
	dec, err := ledgerdir.OpenDecisionsReadOnly(dir)
	if err != nil {
		return 0
	}
	defer dec.Close()
	return dec.Size()
}

func (t *FleetTotals) add(r *Report) {
	t.Decisions += r.Decisions
	t.WouldRefuse += r.WouldRefuse
	t.Refused += r.ByVerdict["refused"]
	for k, v := range r.ByVerdict {
		t.ByVerdict[k] += v
	}
	if r.Traffic != nil {
		t.Unsigned += r.Traffic.Unsigned
		t.FlaggedBuilds += r.Traffic.FlaggedBuildsTotal
		for k, v := range r.Traffic.WouldRefuseByRule {
			t.WouldRefuseByRule[k] += v
		}
	}
}

// onceEach records line n's log in logs by its URL (without a trailing
// slash) and its verifier key, and fails when an earlier line named
// either.
func onceEach(logs map[string]int, n int, l FleetLog) error {
	for _, k := range []string{"url " + strings.TrimRight(l.URL, "/"), "vkey " + l.VKey.String()} {
		if first, ok := logs[k]; ok {
			what, _, _ := strings.Cut(k, " ")
			return fmt.Errorf("the log of line %d again (same %s): each log is audited once", first, what)
		}
		logs[k] = n
	}
	return nil
}

// linkAuthority makes dir/authority a symbolic link to the fleet's one
// authority replica, so that each runner's directory is a ledger
// directory Dir reads.
func linkAuthority(dir, authDir string) error {
	link := filepath.Join(dir, ledgerdir.AuthorityDir)
	target, err := filepath.Abs(filepath.Join(authDir, ledgerdir.AuthorityDir))
	if err != nil {
		return err
	}
	if cur, err := os.Readlink(link); err == nil && cur == target {
		return nil
	}
	os.Remove(link)
	return os.Symlink(target, link)
}
