package formats

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/writ-ledger/writ/sign"
)

// Limits on a policy file (c2sp.org/tlog-policy, "Implementation limits"
// recommends at least 32 of each).
const (
	MaxPolicyBytes     = 64 << 10
	MaxPolicyLine      = 4096
	MaxPolicyLogs      = 64
	MaxPolicyWitnesses = 64
	MaxPolicyGroups    = 64
)

// ErrPolicy: a policy file that does not parse under c2sp.org/tlog-policy
// and writ's stricter rules. The error names the line and the rule.
var ErrPolicy = errors.New("invalid witness policy")

// Policy is a parsed c2sp.org/tlog-policy file: the logs a checkpoint may
// be signed by, the witnesses whose cosignature/v1 cosignatures count, and
// the quorum of them a checkpoint needs (Policy.Check).
type Policy struct {
	// Logs are the policy's `log` lines, in file order.
	Logs []PolicyLog
	// Witnesses are the policy's `witness` lines, in file order.
	Witnesses []PolicyWitness
	// Quorum is the name on the `quorum` line: a witness, a group, or
	// "none" (no cosignature needed).
	Quorum string

	groups  map[string]*policyGroup
	byName  map[string]int  // witness name -> index in Witnesses
	members map[string]bool // names already listed as a group member
}

// PolicyLog is a `log <vkey> [<url>]` line: the log's signed-note
// verifier key (Ed25519, type 0x01), whose key name is its origin.
type PolicyLog struct {
	VKey   string
	Origin string
	URL    string
	key    sign.PublicKey // VKey's, parsed once by ParsePolicy
}

// PolicyWitness is a `witness <name> <vkey> [<url>]` line: a policy-local
// name, the witness's cosignature/v1 verifier key (type 0x04) and,
// optionally, its tlog-witness submission prefix (https, or http on
// loopback when used).
type PolicyWitness struct {
	Name     string
	VKey     string
	URL      string
	verifier *CosigVerifier
}

// policyGroup is a `group <name> all|any|<k> <member>...` line.
type policyGroup struct {
	k       int
	members []string
}

// ParsePolicy parses a policy file (c2sp.org/tlog-policy): lines `log`,
// `witness`, `group`, `quorum`; whitespace is spaces and tabs; empty and
// `#` lines are ignored; a group or the quorum names only witnesses and
// groups defined on earlier lines; a name is a group member at most once
// in the whole file (so a witness contributes to the quorum in one way
// only, and the groups form a tree); exactly one quorum line. writ is
// stricter than the spec in these ways, each of which could otherwise
// count one signer twice or accept a key writ refuses elsewhere:
//   - a witness key may not wrap the same Ed25519 key as another witness
//     or as a listed log (cosignature/v1 does not commit to the name, so
//     one key under two names is one witness; and a log's own
//     cosignature/v1 line is not a witness's);
//   - keys must pass sign.NewPublicKey (canonical, not of small order);
//   - a URL must be absolute http or https with a host;
//   - at most MaxPolicyBytes, MaxPolicyLine per line, MaxPolicyLogs,
//     MaxPolicyWitnesses and MaxPolicyGroups.
//
// Errors wrap ErrPolicy and name the line number and the rule broken.
func ParsePolicy(data []byte) (*Policy, error) {
	if len(data) > MaxPolicyBytes {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrPolicy, len(data), MaxPolicyBytes)
	}
	p := &Policy{groups: map[string]*policyGroup{}, byName: map[string]int{}, members: map[string]bool{}}
	keys := map[string]string{} // raw Ed25519 key -> what holds it
	lines := bytes.Split(data, []byte("\n"))
	for i, raw := range lines {
		n := i + 1
		if i == len(lines)-1 && len(raw) == 0 {
			break
		}
		if len(raw) > MaxPolicyLine {
			return nil, fmt.Errorf("%w: line %d: %d bytes, limit %d", ErrPolicy, n, len(raw), MaxPolicyLine)
		}
		for _, b := range raw {
			if b < 0x20 && b != '\t' || b == 0x7f {
				return nil, fmt.Errorf("%w: line %d: control byte 0x%02x (only tab and newline are allowed)", ErrPolicy, n, b)
			}
		}
		f := strings.FieldsFunc(string(raw), func(r rune) bool { return r == ' ' || r == '\t' })
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if err := p.parseLine(f, keys); err != nil {
			return nil, fmt.Errorf("%w: line %d: %w", ErrPolicy, n, err)
		}
	}
	if p.Quorum == "" {
		return nil, fmt.Errorf("%w: no quorum line (a policy needs exactly one; `quorum none` asks for no cosignature)", ErrPolicy)
	}
	return p, nil
}

func (p *Policy) parseLine(f []string, keys map[string]string) error {
	if p.Quorum != "" && (f[0] == "group" || f[0] == "quorum") {
		// The spec allows a group after the quorum line, but it cannot be
		// part of the quorum; writ refuses the confusion.
		if f[0] == "quorum" {
			return errors.New("a second quorum line (exactly one is allowed)")
		}
		return errors.New("a group after the quorum line cannot be part of it")
	}
	switch f[0] {
	case "log":
		return p.parseLog(f, keys)
	case "witness":
		return p.parseWitness(f, keys)
	case "group":
		return p.parseGroup(f)
	case "quorum":
		return p.parseQuorum(f)
	default:
		return fmt.Errorf("unknown keyword %q (want log, witness, group or quorum)", f[0])
	}
}

// parseLog reads `log <vkey> [<url>]`.
func (p *Policy) parseLog(f []string, keys map[string]string) error {
	if len(f) < 2 || len(f) > 3 {
		return errors.New("want `log <vkey> [<url>]`")
	}
	if len(p.Logs) == MaxPolicyLogs {
		return fmt.Errorf("more than %d logs", MaxPolicyLogs)
	}
	k, err := VerifierPublicKey(f[1])
	if err != nil {
		return fmt.Errorf("log key: %w", err)
	}
	if err := claimKey(keys, k, "log "+f[1]); err != nil {
		return err
	}
	l := PolicyLog{VKey: f[1], Origin: strings.SplitN(f[1], "+", 2)[0], key: k}
	if len(f) == 3 {
		if l.URL, err = policyURL(f[2]); err != nil {
			return err
		}
	}
	p.Logs = append(p.Logs, l)
	return nil
}

// parseWitness reads `witness <name> <vkey> [<url>]`.
func (p *Policy) parseWitness(f []string, keys map[string]string) error {
	if len(f) < 3 || len(f) > 4 {
		return errors.New("want `witness <name> <vkey> [<url>]`")
	}
	if len(p.Witnesses) == MaxPolicyWitnesses {
		return fmt.Errorf("more than %d witnesses", MaxPolicyWitnesses)
	}
	if err := p.newName(f[1]); err != nil {
		return err
	}
	v, err := NewCosignerVerifier(f[2])
	if err != nil {
		return fmt.Errorf("witness %s: %w", f[1], err)
	}
	if err := claimKey(keys, v.Key(), "witness "+f[1]); err != nil {
		return err
	}
	w := PolicyWitness{Name: f[1], VKey: f[2], verifier: v}
	if len(f) == 4 {
		if w.URL, err = policyURL(f[3]); err != nil {
			return err
		}
	}
	p.byName[w.Name] = len(p.Witnesses)
	p.Witnesses = append(p.Witnesses, w)
	return nil
}

// parseQuorum reads `quorum <name>`; the name is none or an earlier
// witness or group.
func (p *Policy) parseQuorum(f []string) error {
	if len(f) != 2 {
		return errors.New("want `quorum <name>`")
	}
	if f[1] != "none" && !p.defined(f[1]) {
		return fmt.Errorf("quorum names %q, which no earlier witness or group line defines", f[1])
	}
	p.Quorum = f[1]
	return nil
}

func (p *Policy) parseGroup(f []string) error {
	if len(f) < 4 {
		return errors.New("want `group <name> all|any|<k> <member>...` with at least one member")
	}
	if len(p.groups) == MaxPolicyGroups {
		return fmt.Errorf("more than %d groups", MaxPolicyGroups)
	}
	if err := p.newName(f[1]); err != nil {
		return err
	}
	g := &policyGroup{members: f[3:]}
	seen := map[string]bool{}
	for _, m := range g.members {
		if m == "none" {
			return fmt.Errorf("group %s: none cannot be a member", f[1])
		}
		if !p.defined(m) {
			return fmt.Errorf("group %s: member %q is not defined on an earlier line", f[1], m)
		}
		if seen[m] {
			return fmt.Errorf("group %s: member %q listed twice", f[1], m)
		}
		if p.members[m] {
			// c2sp.org/tlog-policy: each name is a group member at most
			// once, so that a witness contributes in only one way.
			return fmt.Errorf("group %s: %q is already a member of another group (a name is a group member at most once)", f[1], m)
		}
		seen[m] = true
	}
	for m := range seen {
		p.members[m] = true
	}
	switch f[2] {
	case "all":
		g.k = len(g.members)
	case "any":
		g.k = 1
	default:
		k, err := strconv.Atoi(f[2])
		if err != nil || strconv.Itoa(k) != f[2] || k < 1 || k > len(g.members) {
			return fmt.Errorf("group %s: threshold %q is not all, any or a decimal k with 1 <= k <= %d", f[1], f[2], len(g.members))
		}
		g.k = k
	}
	p.groups[f[1]] = g
	return nil
}

func (p *Policy) defined(name string) bool {
	_, w := p.byName[name]
	_, g := p.groups[name]
	return w || g
}

func (p *Policy) newName(name string) error {
	if name == "none" {
		return errors.New("the name none is predefined")
	}
	if p.defined(name) {
		return fmt.Errorf("name %q is already defined (witnesses and groups share one namespace)", name)
	}
	return nil
}

// claimKey refuses a second policy line wrapping the same Ed25519 key.
func claimKey(keys map[string]string, k sign.PublicKey, who string) error {
	if prev, ok := keys[string(k.Raw())]; ok {
		return fmt.Errorf("%s wraps the same public key as %s (a key counts once)", who, prev)
	}
	keys[string(k.Raw())] = who
	return nil
}

func policyURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("URL %q is not an absolute http(s) URL with a host and no user, query or fragment", s)
	}
	return strings.TrimSuffix(s, "/"), nil
}
