package verify

import (
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/policy"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
	"golang.org/x/mod/semver"
)

// Mode is the signature enforcement setting.
type Mode string

// Enforcement modes (see the package doc).
const (
	ModeOff     Mode = "off"
	ModeWarn    Mode = "warn"
	ModeEnforce Mode = "enforce"
)

// ParseMode returns the mode named s, or an error naming the valid modes.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case ModeOff, ModeWarn, ModeEnforce:
		return Mode(s), nil
	}
	return "", fmt.Errorf("mode %q: must be off, warn or enforce", s)
}

// Verdicts (schemas.Verdict).
const (
	Admitted         = schemas.VerdictAdmitted
	AdmittedUnsigned = schemas.VerdictAdmittedUnsigned
	WouldRefuse      = schemas.VerdictWouldRefuse
	Refused          = schemas.VerdictRefused
)

// Config is the runner's side of an admission.
type Config struct {
	Machine  string           // this runner's machine name
	Mode     Mode             // enforcement mode
	Platform string           // GOOS/GOARCH pins are looked up for
	Now      func() time.Time // the clock; time.Now in the product
	// HighWater is the highest version of each artifact this runner has
	// admitted (from its decision log); a lower pin is a rollback. nil
	// remembers nothing.
	HighWater Marks
	// MaxLedgerAge, if not zero, refuses a ledger whose newest checkpoint
	// was signed longer ago than this (a frozen ledger); LedgerTime is
	// that signing time (zero if unknown). With LedgerTimeWitnessed it is
	// instead the time the witness policy's quorum cosigned it
	// (formats.Witnessing.Time): a clock the writer does not control.
	MaxLedgerAge        time.Duration
	LedgerTime          time.Time
	LedgerTimeWitnessed bool
	// History is the runner's memory of admitted ids and work claims
	// (replay, work-claimed); nil remembers nothing.
	History History
	// AlwaysRefuse lists rules refused in every mode (ParseRefuse): a
	// runner's own tightening of what its mode would admit.
	AlwaysRefuse map[string]bool
	// RenameMachine lets a runner whose decision log already holds
	// decisions for another machine name decide for Machine from now on
	// (package runner refuses it otherwise: ErrMachineChanged).
	RenameMachine bool
	// ControlWorkspace is the control plane's workspace root, an absolute
	// path on the sending host (rule R30); "" leaves R30 unchecked.
	ControlWorkspace string
	// RequireReceipt refuses a dispatch without a receipt Receipts
	// accepts (receipt-missing, receipt-invalid).
	RequireReceipt bool
	Receipts       ReceiptVerifier
	// Note, when not nil, receives a note for the operator each time the
	// authority state verdicts read is loaded without the log's persisted
	// state (Authority.ReplayNote: why, and that the whole log was
	// replayed instead). It never changes a verdict.
	Note func(msg string)
	// Policy, when set, is the runner's admission policy, run after
	// every built-in check; it only refuses (rules.PolicyRefused).
	Policy *policy.Policy
}

// Dispatch is what the control plane sent, and where the runner keeps the
// binary it would execute.
type Dispatch struct {
	Raw          []byte // the dispatch bytes exactly as received
	AgentBinary  string // path of the agent binary on this runner
	EngineBinary string // path of the engine binary, when the instruction names one
	ProvisionDir string // directory holding the provisioned files (".provision/<name>" → ProvisionDir/<name>)
	// Digest is the digest of the whole dispatch when Raw holds only its
	// first bytes (an oversized input); "" means SHA-256 of Raw.
	Digest string
	// Receipt is an RFC 9942 receipt for Raw in the authority log, if the
	// dispatch came with one; ReceiptGiven says one came even when it is
	// empty (an empty receipt is a receipt given, and fails).
	Receipt      []byte
	ReceiptGiven bool
}

// hasReceipt reports whether a receipt came with the dispatch.
func (d Dispatch) hasReceipt() bool { return d.ReceiptGiven || len(d.Receipt) > 0 }

func (d Dispatch) digest() string {
	if d.Digest != "" {
		return d.Digest
	}
	return schemas.SHA256Digest(d.Raw)
}

// Finding is one failed check: its rule and a reason naming the field and
// the values.
type Finding struct {
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
}

// Verdict is the outcome of Admit. Its JSON is the verdict's one shape,
// the fields writ admit prints and the admission server sends
// (admission.Response embeds it): verdict, rule, class, reason, next_act,
// mode, instruction_id, instruction_digest (sha256:<64 hex>), signer (64
// hex, or "" when unsigned), machine, stream, compared, passed, failed,
// and claim when the decision records one. The runner's bookkeeping (the
// time, the authority checkpoint, high-water marks) is recorded in the
// decision (schemas.Decision) and the timings in the server's answer;
// neither is part of the verdict's JSON.
type Verdict struct {
	Verdict           schemas.Verdict       `json:"verdict" doc:"admitted, admitted-unsigned, would-refuse or refused"`
	Rule              string                `json:"rule" doc:"the deciding rule id (ok when none failed)"`
	Class             rules.Class           `json:"class" doc:"the rule's class"`
	Reason            string                `json:"reason" doc:"the deciding rule's reason"`
	NextAct           string                `json:"next_act" doc:"what the operator does next"`
	Mode              Mode                  `json:"mode" doc:"off, warn or enforce"`
	InstructionID     string                `json:"instruction_id" doc:"32 hex, or \"\" for a dispatch that did not parse"`
	InstructionDigest string                `json:"instruction_digest" doc:"sha256:<64 hex> of the dispatch bytes"`
	Signer            string                `json:"signer" doc:"the signer's key id (64 hex), or \"\" when unsigned"`
	Machine           string                `json:"machine" doc:"the runner's machine name"`
	Stream            string                `json:"stream" doc:"the instruction's stream"`
	Compared          []schemas.DigestCheck `json:"compared" doc:"digests compared on the runner: subject, expected, actual"`
	Provenance        []Relied              `json:"provenance,omitempty" doc:"the build provenance of each admitted binary's pin the verdict relied on (its pin carries one)"`
	PolicyRule        string                `json:"policy_rule,omitempty" doc:"the admission policy's rule that refused (rule policy-refused), when one did"`
	Passed            []string              `json:"passed" doc:"rule ids of the checks that passed"`
	Failed            []Finding             `json:"failed" doc:"every failed check: rule, reason"`
	Time              time.Time             `json:"-"`
	// AuthoritySize and AuthorityRoot are the authority checkpoint the
	// runner trusts after this decision (see schemas.Decision); the caller
	// sets them.
	AuthoritySize int64  `json:"-"`
	AuthorityRoot string `json:"-"`
	// HighWater is the runner's high-water marks after this decision for
	// the artifacts the dispatch named (the agent and the engine, at most
	// schemas.MaxMarks): the previous marks, raised by the versions this
	// admission let run. Marks of other artifacts are not repeated: a
	// decision's size does not grow with the runner's history.
	HighWater map[string]string `json:"-"`
	// Claim is the instruction's work claim when the decision records it:
	// the verdict admits and a verified, delegated signature stands behind
	// the instruction (nil otherwise).
	Claim *schemas.Claim `json:"claim,omitempty" doc:"the work claim the decision records (session, until, release), when it records one"`
	// HashTime is the time spent hashing binaries and provisioned files;
	// RecordTime the time Runner.Admit waited for the decision to be
	// durable (the decision log's commit and fsync).
	HashTime   time.Duration `json:"-"`
	RecordTime time.Duration `json:"-"`
}

// Relied is the build provenance a verdict relied on: the pinned
// binary's role (agent, engine), and the builder, source repository and
// commit its pin's provenance attests (checked when the pin was
// appended, and by every replay of the log since).
type Relied struct {
	Subject    string `json:"subject" doc:"agent or engine"`
	Builder    string `json:"builder" doc:"the builder id the provenance names"`
	BuilderKey string `json:"builder_key" doc:"the digest (sha256:hex of its PKIX DER) of the key that signed the provenance"`
	Repository string `json:"repository" doc:"the source repository it names (\"\" when none)"`
	Commit     string `json:"commit" doc:"the source commit it names, which the binary records"`
}

// Admitted reports whether the verdict lets the dispatch run (admitted,
// admitted-unsigned or would-refuse).
func (v *Verdict) Admitted() bool { return v.Verdict != Refused }

type admission struct {
	st  *delegation.State
	cfg Config
	now time.Time
	v   *Verdict
	// authorized: a verified signature by a key delegated instruct for
	// this stream and machine stands behind the dispatch.
	authorized bool
	// admitted are the versions of the binaries that matched their pins,
	// for the high-water marks.
	admitted []artifactVersion
	// instr is the dispatch's instruction, once it parsed.
	instr *schemas.Instruction
	// named are the artifacts the instruction names (agent, engine),
	// whose marks the decision records.
	named []string
	// pinned are the pins in force for the agent and the engine, by
	// role name, for the policy (policy.Input).
	pinned map[string]*schemas.Pin
	// grant is the delegation under which the instruction's signer
	// instructs, at the admission's instant (checkAuthority).
	grant *delegation.Grant
}

func (a *admission) fail(rule, format string, args ...any) {
	a.v.Failed = append(a.v.Failed, Finding{Rule: rule, Reason: fmt.Sprintf(format, args...)})
}

func (a *admission) pass(check string) { a.v.Passed = append(a.v.Passed, check) }

// Admit decides whether this runner may execute dispatch d, against the
// authority state st (built from a verified ledger). It never panics and
// never returns nil: an internal failure (a panic anywhere in the checks,
// the clock included) becomes a refusal under rules.Internal. It does not
// record the decision; see Decision and Runner.
func Admit(st *delegation.State, cfg Config, d Dispatch) *Verdict {
	a := newAdmission(st, cfg, d)
	a.protect(func() {
		a.check(d)
		a.checkHistory()
	})
	a.protect(a.checkPolicy)
	return a.finish()
}

// checkPolicy runs the runner's admission policy (Config.Policy) after
// every built-in check: a rule that refuses is a finding under
// rules.PolicyRefused (refused in every mode), naming the rule; it adds
// only refusals.
func (a *admission) checkPolicy() {
	if a.cfg.Policy == nil {
		return
	}
	r := a.cfg.Policy.Judge(policy.Input{Instruction: a.instr, Signer: a.v.Signer, Machine: a.cfg.Machine, Time: a.now,
		Agent: a.pinned[agentRole.name], Engine: a.pinned[engineRole.name]})
	if r == nil {
		a.pass("policy")
		return
	}
	a.v.PolicyRule = r.Rule
	a.fail(rules.PolicyRefused, "policy rule %s: %s", r.Rule, r.Reason)
}

// newAdmission starts an admission of d. The clock is read here, once:
// every time check of the admission uses the same instant.
func newAdmission(st *delegation.State, cfg Config, d Dispatch) (a *admission) {
	a = &admission{st: st, cfg: cfg, v: &Verdict{Mode: cfg.Mode, Machine: cfg.Machine}, now: time.Now()}
	a.protect(func() {
		a.v.InstructionDigest = d.digest()
		a.now = cfg.Now() // a failing clock leaves the system time, for the record only: the finding refuses
	})
	a.v.Time = a.now.UTC()
	return a
}

// protect runs f, turning a panic into a rules.Internal finding with the
// panic's value and stack.
func (a *admission) protect(f func()) {
	defer func() {
		if p := recover(); p != nil {
			a.fail(rules.Internal, "internal error: %v\n%s", p, debug.Stack())
		}
	}()
	f()
}

// finish decides the verdict and sets its high-water marks. A panic there
// too becomes a refusal under rules.Internal.
func (a *admission) finish() (v *Verdict) {
	defer func() {
		// Only an admitted instruction with a verified, delegated signer
		// holds or releases a claim: an unsigned one admitted under off
		// must not lock a stream against signed work.
		if !v.Admitted() || !a.authorized {
			v.Claim = nil
		} else if v.Claim != nil && v.Claim.Until-a.now.Unix() > schemas.MaxClaimSeconds {
			// The 30 days run from this runner's clock too, not only from
			// the issued_at the instruction claims.
			c := *v.Claim
			c.Until = a.now.Unix() + schemas.MaxClaimSeconds
			v.Claim = &c
		}
	}()
	defer func() {
		if p := recover(); p != nil {
			a.v.Failed = append(a.v.Failed, Finding{rules.Internal, fmt.Sprintf("internal error: %v\n%s", p, debug.Stack())})
			a.v.Verdict, a.v.Rule, a.v.Class = Refused, rules.Internal, rules.ClassInternal
			a.v.Reason = a.v.Failed[len(a.v.Failed)-1].Reason
			if r, ok := LookupRule(rules.Internal); ok {
				a.v.NextAct = r.NextAct
			}
			a.v.HighWater = a.carried()
			v = a.v
		}
	}()
	return a.raise(a.decide())
}

// raise sets the verdict's high-water marks for the artifacts the
// dispatch named: the runner's marks, raised to the version of every
// binary this verdict lets run. They never fall.
func (a *admission) raise(v *Verdict) *Verdict {
	hw := a.carried()
	if v.Admitted() {
		for _, p := range a.admitted {
			if hw == nil {
				hw = map[string]string{}
			}
			if cur := hw[p.artifact]; cur == "" || semver.Compare(p.version, cur) > 0 {
				hw[p.artifact] = p.version
			}
		}
	}
	v.HighWater = hw
	return v
}

// carried returns the runner's marks for the artifacts the dispatch
// named, unchanged (nil when it holds none): what a refusal records.
func (a *admission) carried() map[string]string {
	var hw map[string]string
	for _, name := range a.named {
		if m, err := a.mark(name); err == nil && m != "" {
			if hw == nil {
				hw = map[string]string{}
			}
			hw[name] = m
		}
	}
	return hw
}

// mark returns the runner's high-water mark for artifact ("" for none).
// A memory that cannot be read is an error: the caller refuses under
// internal-error rather than judge rollback without it.
func (a *admission) mark(artifact string) (string, error) {
	if a.cfg.HighWater == nil {
		return "", nil
	}
	return a.cfg.HighWater.Mark(artifact)
}

// Marks is a runner's memory of the highest version of each artifact it
// admitted: Mark returns the mark ("" when it admitted none), or an error
// when the memory cannot be read. The product's is the runner's decision
// log (each decision records the marks of the artifacts it judged);
// MarkMap holds marks in memory.
type Marks interface {
	Mark(artifact string) (string, error)
}

// MarkMap is Marks held in a map: artifact name → semantic version.
type MarkMap map[string]string

// Mark implements Marks.
func (m MarkMap) Mark(artifact string) (string, error) { return m[artifact], nil }

// RefuseLedger returns the verdict for a dispatch that arrived while the
// runner's ledger could not be trusted: rule is rules.LedgerUnverified (it
// failed verification) or rules.LedgerInconsistent (it does not extend the
// ledger this runner trusted before), and err is the evidence. It refuses
// in every mode: no authority can be read from such a ledger.
func RefuseLedger(cfg Config, d Dispatch, rule string, err error) *Verdict {
	return Refusing(cfg, d, rule, err).Decide(nil)
}

func (a *admission) check(d Dispatch) {
	instr, signer := a.checkEnvelope(d.Raw)
	if instr == nil {
		return
	}
	a.instr = instr
	a.named = append(a.named, instr.Agent.Name)
	if instr.Engine != nil && instr.Engine.Name != instr.Agent.Name {
		a.named = append(a.named, instr.Engine.Name)
	}
	a.v.InstructionID, a.v.Stream, a.v.Claim = instr.ID, instr.Stream, instr.Claim
	if instr.Machine != a.cfg.Machine {
		a.fail(rules.WrongMachine, "instruction.machine is %q, this runner is %q", instr.Machine, a.cfg.Machine)
	} else {
		a.pass("machine")
	}
	if q := a.st.Quarantine(a.cfg.Machine, a.now.Unix()); q != nil {
		until := "until lifted"
		if q.Record.Until != 0 {
			until = "until " + unixUTC(q.Record.Until)
		}
		a.fail(rules.Quarantined, "machine %s is quarantined by ledger index %d, %s", a.cfg.Machine, q.Index, until)
	} else {
		a.pass("not-quarantined")
	}
	future := time.Unix(instr.IssuedAt, 0).After(a.now.Add(MaxClockSkew))
	if future {
		a.fail(rules.NotYetValid, "instruction.issued_at is %s, more than %s after this runner's clock (%s)", unixUTC(instr.IssuedAt), MaxClockSkew, a.now.UTC().Format(time.RFC3339))
	}
	if !signer.IsZero() {
		a.checkAuthority(instr, signer, future)
	}
	switch {
	case a.now.Unix() < instr.NotBefore:
		a.fail(rules.NotYetValid, "instruction.not_before is %s, now is %s", unixUTC(instr.NotBefore), a.now.UTC().Format(time.RFC3339))
	case a.now.Unix() >= instr.Expires:
		a.fail(rules.Expired, "instruction.expires is %s, now is %s", unixUTC(instr.Expires), a.now.UTC().Format(time.RFC3339))
	default:
		a.pass("instruction-window")
	}
	a.checkBinary(agentRole, instr.Agent, d.AgentBinary)
	switch {
	case instr.Engine != nil:
		a.checkBinary(engineRole, *instr.Engine, d.EngineBinary)
	case d.EngineBinary != "":
		// The runner runs an engine the dispatch does not name: nothing
		// says which pin it should match, so it would run unchecked.
		a.fail(rules.EngineNotNamed, "this runner runs the engine %s, and the instruction names no engine to check it against", d.EngineBinary)
	}
	a.checkDemand()
	a.checkProvision(instr, d.ProvisionDir)
	a.checkContent(instr)
	a.checkLedgerAge()
	a.checkReceipt(d)
}

// checkEnvelope parses the dispatch, verifies its signature if it has
// one, and returns the instruction and its verified signer (zero key when
// unsigned or unverified). A nil instruction means nothing further can be
// checked.
func (a *admission) checkEnvelope(raw []byte) (*schemas.Instruction, sign.PublicKey) {
	var none sign.PublicKey
	if !sign.IsEnvelope(raw) {
		rec, err := schemas.Decode(schemas.KindInstruction, raw)
		if err != nil {
			a.fail(rules.MalformedDispatch, "not a signed envelope, and not an unsigned instruction: %v", err)
			return nil, none
		}
		a.fail(rules.Unsigned, "the instruction carries no signature")
		return rec.(*schemas.Instruction), none
	}
	env, err := sign.ParseEnvelope(raw)
	if err != nil {
		a.fail(rules.MalformedDispatch, "%v", err)
		return nil, none
	}
	wrongKind := env.Kind != schemas.KindInstruction
	rec, err := schemas.Decode(schemas.KindInstruction, env.Payload)
	switch {
	case wrongKind && err != nil:
		// Say what the file is, not why its payload is no instruction.
		a.fail(rules.MalformedDispatch, "the envelope holds a %s record, not an instruction: dispatch an instruction (`writ instruct`)", env.Kind)
		return nil, none
	case err != nil:
		a.fail(rules.MalformedDispatch, "payload: %v", err)
		return nil, none
	case len(env.Signatures) != 1:
		a.fail(rules.MalformedDispatch, "an instruction carries exactly one signature, this envelope carries %d", len(env.Signatures))
		return nil, none
	}
	a.pass("envelope")
	if wrongKind {
		// The signature vouches for a record of another kind; it counts
		// for nothing here, so an instruction inside stands as unsigned.
		a.fail(rules.WrongKind, "the envelope was signed as a %s record, not an instruction", env.Kind)
	}
	instr := rec.(*schemas.Instruction)
	if wrongKind {
		return instr, none
	}
	verified, err := env.Verify(a.st.Key)
	switch {
	case err != nil:
		a.fail(rules.BadSignature, "%v", err)
		return instr, none
	case len(verified.Keys) != 1:
		if len(verified.Keys) == 0 {
			a.fail(rules.UnknownKey, "signed by key %v, which this runner's ledger does not trust", verified.Unknown)
		} else {
			a.fail(rules.MalformedDispatch, "an instruction has exactly one signer, this one has %d", len(verified.Keys))
		}
		return instr, none
	}
	a.pass("signature")
	a.v.Signer = verified.Keys[0].ID()
	return instr, verified.Keys[0]
}

// checkAuthority asks the delegation state whether signer may instruct
// for this stream and machine, both now and when the instruction was
// issued (unless issued_at is implausibly in the future, which is its own
// finding).
func (a *admission) checkAuthority(instr *schemas.Instruction, signer sign.PublicKey, future bool) {
	times := []time.Time{a.now, time.Unix(instr.IssuedAt, 0)}
	if future {
		times = times[:1]
	}
	for i, at := range times {
		g, err := a.st.Authorize(delegation.Request{Key: signer, Action: schemas.ActionInstruct, Stream: instr.Stream, Machine: instr.Machine, At: at})
		if i == 0 {
			a.grant = g
		}
		var d *delegation.Denial
		if errors.As(err, &d) {
			a.fail(d.Rule, "%s%s", d.Reason, [2]string{" (this runner's clock)", " (the instruction's issued_at)"}[i])
			return
		} else if err != nil {
			panic(err) // Authorize returns only Denials
		}
	}
	a.pass("authority")
	a.authorized = true
}

// decide turns the findings into the verdict: an internal finding refuses
// under rules.Internal; an integrity or content finding, or one the runner
// listed in AlwaysRefuse, refuses in every mode; otherwise the first governed finding is
// refused under enforce, would-refuse under warn, and admitted under off
// (admitted-unsigned when no verified signature by a key delegated for
// this dispatch stands behind it).
func (a *admission) decide() *Verdict {
	v := a.v
	var hard, soft *Finding
	for i := range v.Failed {
		f := &v.Failed[i]
		r, _ := LookupRule(f.Rule)
		if f.Rule == rules.Internal && (hard == nil || hard.Rule != rules.Internal) {
			hard = f // a failure of the verdict path itself names the verdict
			continue
		}
		if !r.Governed() || a.cfg.AlwaysRefuse[f.Rule] {
			if hard == nil {
				hard = f
			}
			continue
		}
		if soft == nil {
			soft = f
		}
	}
	chosen := hard
	switch {
	case hard != nil:
		v.Verdict = Refused
	case soft == nil:
		v.Verdict, v.Rule = Admitted, rules.OK
	case v.Mode == ModeEnforce:
		v.Verdict, chosen = Refused, soft
	case v.Mode == ModeWarn:
		v.Verdict, chosen = WouldRefuse, soft
	case !a.authorized:
		v.Verdict, chosen = AdmittedUnsigned, soft
	default:
		v.Verdict, chosen = Admitted, soft
	}
	if chosen != nil {
		v.Rule, v.Reason = chosen.Rule, chosen.Reason
		if r, _ := LookupRule(chosen.Rule); r.Governed() && a.cfg.AlwaysRefuse[chosen.Rule] && v.Mode != ModeEnforce {
			v.Reason += fmt.Sprintf(" (this runner refuses %s in every mode: --refuse %s)", chosen.Rule, chosen.Rule)
		}
	} else {
		v.Reason = "every check passed: " + fmt.Sprint(v.Passed)
	}
	r, ok := LookupRule(v.Rule)
	if !ok {
		r, _ = LookupRule(rules.Internal)
		v.Verdict, v.Rule = Refused, rules.Internal
	}
	v.Class, v.NextAct = r.Class, r.NextActIn(string(v.Mode))
	return v
}

func unixUTC(sec int64) string { return time.Unix(sec, 0).UTC().Format(time.RFC3339) }
