package schemas_test

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// pad returns prefix followed by filler up to exactly n bytes.
func pad(prefix string, n int, filler string) string {
	return prefix + strings.Repeat(filler, n-len(prefix))
}

// sha512Digest is a content digest of the longest form, 135 bytes.
var sha512Digest = "sha512:" + strings.Repeat("ab", 64)

// version returns a full semantic version of exactly n bytes.
func version(n int) string { return pad("v1.0.0-", n, "a") }

// maximal returns a record of kind k with every string and list of the
// limits table at its maximum, otherwise valid.
func maximal(t *testing.T, k schemas.Kind) schemas.Record {
	t.Helper()
	const t0 = 1_780_000_000
	switch k {
	case schemas.KindRoot:
		return testkit.Root(schemas.MaxRootKeys, signers(t, schemas.MaxRootKeys)...)
	case schemas.KindDelegation:
		d := &schemas.Delegation{V: 1, Key: testkit.Key(t, 1).Public().Raw(), Actions: schemas.Actions,
			NotBefore: t0, NotAfter: t0 + 1, Depth: 1 << 62, IssuedAt: t0}
		for i := range schemas.MaxPatterns {
			d.Streams = append(d.Streams, pad(fmt.Sprintf("%02d", i), 128, "s"))
			d.Machines = append(d.Machines, pad(fmt.Sprintf("%02d", i), 253, "m"))
			d.Artifacts = append(d.Artifacts, pad(fmt.Sprintf("%02d", i), 128, "a"))
		}
		return d
	case schemas.KindPin:
		return &schemas.Pin{V: 1, Artifact: pad("a", 128, "a"), Platform: pad("", 32, "l") + "/" + pad("", 32, "a"),
			Digest: "sha256:" + strings.Repeat("ab", 32), Size: 1 << 62, Version: version(schemas.MaxVersion),
			Build: &schemas.Build{GoVersion: pad("go", schemas.MaxBuildText, "1"), Path: pad("p", schemas.MaxBuildPath, "p"),
				Module: pad("m", schemas.MaxBuildPath, "m"), ModuleVersion: pad("v", schemas.MaxBuildPath, "v"),
				VCS: pad("g", schemas.MaxBuildText, "t"), Revision: pad("", schemas.MaxBuildText, "f"), Time: pad("2", schemas.MaxBuildText, "0"),
				Modified: true},
			IssuedAt: t0, Expires: t0 + 1}
	case schemas.KindInstruction:
		in := &schemas.Instruction{V: 1, ID: strings.Repeat("0", 32), Stream: pad("s", 128, "s"), Machine: pad("m", 253, "m"),
			Agent:  schemas.ArtifactRef{Name: pad("a", 128, "a"), Digest: "sha256:" + strings.Repeat("ab", 32)},
			Engine: &schemas.ArtifactRef{Name: pad("e", 128, "e"), Digest: "sha256:" + strings.Repeat("cd", 32)},
			Brief:  strings.Repeat("b", schemas.MaxBrief), Claim: &schemas.Claim{Session: pad("", 64, "c"), Until: t0 + 1, Release: true},
			Transport: "ssh", IssuedAt: t0, NotBefore: t0, Expires: t0 + 1}
		for i := range schemas.MaxProvision {
			in.Provision = append(in.Provision, schemas.Provision{Dest: pad(fmt.Sprintf(".provision/%02d", i), 139, "x"), Digest: sha512Digest, Size: 1 << 62})
		}
		return in
	case schemas.KindDecision:
		d := &schemas.Decision{V: 1, Time: t0, Machine: pad("m", 253, "m"), Mode: "enforce", Verdict: "admitted-unsigned",
			Rule: pad("r", 64, "r"), InstructionID: strings.Repeat("0", 32), InstructionDigest: "sha256:" + strings.Repeat("ab", 32),
			Signer: strings.Repeat("c", 64), Stream: pad("s", 128, "s"), AuthoritySize: 1 << 62, AuthorityRoot: strings.Repeat("e", 64),
			HighWater: map[string]string{}, Claim: &schemas.Claim{Session: pad("", 64, "c"), Until: t0 + 1, Release: true}}
		for i := range schemas.MaxCompared {
			d.Compared = append(d.Compared, schemas.DigestCheck{Subject: pad(fmt.Sprintf(".provision/%02d", i), 139, "x"), Expected: sha512Digest, Actual: sha512Digest})
		}
		for i := range schemas.MaxChecks {
			d.Passed = append(d.Passed, pad(fmt.Sprintf("p%02d", i), 64, "p"))
			d.Failed = append(d.Failed, pad(fmt.Sprintf("f%02d", i), 64, "f"))
		}
		for i := range schemas.MaxMarks {
			d.HighWater[pad(fmt.Sprintf("%d", i), 128, "a")] = version(schemas.MaxVersion)
		}
		return d
	case schemas.KindRevocation:
		return &schemas.Revocation{V: 1, Target: "sha256:" + strings.Repeat("ab", 32), Reason: strings.Repeat("r", schemas.MaxReason), IssuedAt: t0}
	case schemas.KindIssuer:
		is := &schemas.Issuer{V: 1, Issuer: pad("https://idp.example/", schemas.MaxURL, "i"), JWKSURI: pad("https://idp.example/", schemas.MaxURL, "j"), IssuedAt: t0}
		for i := range schemas.MaxAudiences {
			is.Audiences = append(is.Audiences, pad(fmt.Sprintf("%02d", i), schemas.MaxAudience, "u"))
		}
		return is
	case schemas.KindQuarantine:
		return &schemas.Quarantine{V: 1, Machine: pad("m", 253, "m"), Until: t0 + 1, IssuedAt: t0}
	case schemas.KindDowngrade:
		return &schemas.Downgrade{V: 1, Artifact: pad("a", 128, "a"), Version: version(schemas.MaxVersion), Reason: strings.Repeat("r", schemas.MaxReason), IssuedAt: t0, Expires: t0 + 1}
	}
	t.Fatalf("no maximal record for kind %s", k)
	return nil
}

func signers(t *testing.T, n int) []*sign.PrivateKey {
	var out []*sign.PrivateKey
	for i := range n {
		out = append(out, testkit.Key(t, byte(i+1)))
	}
	return out
}

// TestLimitsRoundTrip: a record of every kind with every field at its
// limit encodes, stays within MaxRecordSize, decodes to the same record,
// and, signed with the most signatures its kind may carry (a rotation's
// 64 for a root, one for pins and instructions, the root threshold's 32
// for the rest; none for a decision), still fits one ledger entry and
// parses back: nothing writ writes exceeds what it reads.
func TestLimitsRoundTrip(t *testing.T) {
	for _, k := range schemas.Kinds {
		t.Run(string(k), func(t *testing.T) {
			rec := maximal(t, k)
			b, err := schemas.Encode(rec)
			if err != nil {
				t.Fatalf("a record at every limit does not encode: %v", err)
			}
			back, err := schemas.Decode(k, b)
			if err != nil {
				t.Fatalf("a record at every limit, encoded, does not decode: %v", err)
			}
			if again, _ := schemas.Encode(back); string(again) != string(b) {
				t.Fatal("decoding changed the record")
			}
			n := schemas.MaxRootKeys // the root threshold's signatures
			switch k {
			case schemas.KindRoot:
				n = sign.MaxSignatures // a rotation: every old and new key
			case schemas.KindPin, schemas.KindInstruction:
				n = 1
			case schemas.KindDecision:
				n = 0 // stored bare in the decision log
			}
			t.Logf("%s: record %d bytes", k, len(b))
			if n == 0 {
				return
			}
			env, err := sign.Sign(k, b, signers(t, n)...)
			if err != nil {
				t.Fatalf("signed by %d keys: %v", n, err)
			}
			if _, err := sign.ParseEnvelope(env); err != nil {
				t.Fatalf("the envelope writ wrote (%d bytes, %d signatures) does not parse: %v", len(env), n, err)
			}
			t.Logf("%s: envelope %d bytes with %d signatures", k, len(env), n)
		})
	}
}

// TestLimitsPlusOne: for every row of the limits table, the record at
// every limit with that one field one over is refused by Encode and, as
// bytes a hostile writer made, by Decode, with a *FieldError naming the
// field.
func TestLimitsPlusOne(t *testing.T) {
	for _, l := range schemas.Limits {
		name := fmt.Sprintf("%s.%s", l.Kind, l.Field)
		t.Run(name, func(t *testing.T) {
			rec := maximal(t, l.Kind)
			overOne(t, rec, l.Field)
			field, _, _ := strings.Cut(l.Field, "[")
			field, _, _ = strings.Cut(field, " ")
			var fe *schemas.FieldError
			if _, err := schemas.Encode(rec); !errors.As(err, &fe) || fe.Field != field || fe.Kind != l.Kind {
				t.Fatalf("Encode with %s one over %d: %v; want a *FieldError for %s.%s", l.Field, l.Max, err, l.Kind, field)
			}
			b, err := schemas.Marshal(rec) // no field rules: a hostile writer
			if err != nil {
				if errors.Is(err, schemas.ErrTooLarge) {
					return // refused before decoding, which is stricter still
				}
				t.Fatal(err)
			}
			if _, err := schemas.Decode(l.Kind, b); !errors.As(err, &fe) || fe.Field != field {
				t.Fatalf("Decode with %s one over %d: %v; want a *FieldError for %s.%s", l.Field, l.Max, err, l.Kind, field)
			}
		})
	}
}

// overOne makes one field of rec one over its limit: a list one item
// longer (its last item repeated, renamed to keep the list sorted and
// distinct), a text one byte longer.
func overOne(t *testing.T, rec schemas.Record, field string) {
	t.Helper()
	grow := func(list []string, n int) []string {
		last := list[len(list)-1]
		return append(list, pad(last[:len(last)-1]+"z", len(last), "z")[:n])
	}
	switch r := rec.(type) {
	case *schemas.Root:
		r.Keys = append(r.Keys, append([]byte{0xff}, r.Keys[len(r.Keys)-1][1:]...))
		r.Threshold = uint64(len(r.Keys))
	case *schemas.Delegation:
		switch field {
		case "streams":
			r.Streams = grow(r.Streams, 128)
		case "machines":
			r.Machines = grow(r.Machines, 253)
		case "artifacts":
			r.Artifacts = grow(r.Artifacts, 128)
		case "streams[i]":
			r.Streams[0] += "s"
		case "machines[i]":
			r.Machines[0] += "m"
		case "artifacts[i]":
			r.Artifacts[0] += "a"
		}
	case *schemas.Pin:
		b := r.Build
		for f, p := range map[string]*string{"artifact": &r.Artifact, "platform": &r.Platform, "version": &r.Version,
			"build.go_version": &b.GoVersion, "build.path": &b.Path, "build.module": &b.Module, "build.module_version": &b.ModuleVersion,
			"build.vcs": &b.VCS, "build.vcs_revision": &b.Revision, "build.vcs_time": &b.Time} {
			if f == field {
				*p += "a"
			}
		}
	case *schemas.Instruction:
		switch field {
		case "stream":
			r.Stream += "s"
		case "machine":
			r.Machine += "m"
		case "provision":
			r.Provision = append(r.Provision, schemas.Provision{Dest: pad(".provision/zz", 139, "x"), Digest: sha512Digest})
		case "provision[i].dest":
			r.Provision[len(r.Provision)-1].Dest += "x"
		case "brief":
			r.Brief += "b"
		case "claim.session":
			r.Claim.Session += "c"
		}
	case *schemas.Decision:
		switch field {
		case "rule":
			r.Rule += "r"
		case "compared":
			r.Compared = append(r.Compared, r.Compared[0])
		case "compared[i].subject":
			r.Compared[0].Subject += "x"
		case "passed":
			r.Passed = append(r.Passed, "p")
		case "failed":
			r.Failed = append(r.Failed, "f")
		case "high_water":
			r.HighWater["z"] = "v1.0.0"
		case "high_water version":
			for a := range r.HighWater {
				r.HighWater[a] += "a"
			}
		}
	case *schemas.Revocation:
		r.Reason += "r"
	case *schemas.Issuer:
		switch field {
		case "issuer":
			r.Issuer += "i"
		case "jwks_uri":
			r.JWKSURI += "j"
		case "audiences":
			r.Audiences = append(r.Audiences, pad("zz", schemas.MaxAudience, "u"))
		case "audiences[i]":
			r.Audiences[0] += "u"
		}
	case *schemas.Downgrade:
		switch field {
		case "version":
			r.Version += "a"
		case "reason":
			r.Reason += "r"
		}
	default:
		t.Fatalf("no way to exceed %s of %T", field, rec)
	}
}

// TestLimitsInCDDL: writ.cddl states each row of the limits table for the
// member or type the row names ([1*N ...], .size (a..N), a regexp's
// {0,N-1} after its first character, or "at most N bytes").
func TestLimitsInCDDL(t *testing.T) {
	src, err := os.ReadFile("writ.cddl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	for _, l := range schemas.Limits {
		text := cddlText(lines, l)
		if text == "" {
			t.Errorf("%s.%s: no line of rule %q in writ.cddl", l.Kind, l.Field, l.Rule)
			continue
		}
		if !containsBound(text, l.Max) {
			t.Errorf("%s.%s: writ.cddl states no bound of %d %s: %q", l.Kind, l.Field, l.Max, l.Unit, text)
		}
	}
}

// cddlText returns the line of writ.cddl that states limit l: the member
// line of a map rule, or the definition of a type rule.
func cddlText(lines []string, l schemas.Limit) string {
	member := l.Field
	if i := strings.LastIndexAny(member, ". "); i >= 0 {
		member = member[i+1:]
	}
	member, _, _ = strings.Cut(member, "[")
	in := false
	for _, line := range lines {
		switch {
		case strings.HasPrefix(line, l.Rule+" = {"):
			in = true
		case strings.HasPrefix(line, l.Rule+" = "):
			return line
		case in && line == "}":
			in = false
		case in && strings.Contains(line, `"`+member+`":`):
			return line
		}
	}
	return ""
}

var boundRes = []*regexp.Regexp{
	regexp.MustCompile(`\[1\*(\d+) `), regexp.MustCompile(`\{ 1\*(\d+) `), regexp.MustCompile(`\.size \(\d+\.\.(\d+)\)`),
	regexp.MustCompile(`at most (\d+) bytes`), regexp.MustCompile(`\{1,(\d+)\}"`),
}
var regexpBound = regexp.MustCompile(`\{0,(\d+)\}"`)

func containsBound(text string, max int) bool {
	for _, re := range boundRes {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			if n, _ := strconv.Atoi(m[1]); n == max {
				return true
			}
		}
	}
	for _, m := range regexpBound.FindAllStringSubmatch(text, -1) {
		if n, _ := strconv.Atoi(m[1]); n+1 == max {
			return true
		}
	}
	return false
}

// limitsTable renders the limits table as LIMITATIONS.md shows it.
func limitsTable() string {
	var b strings.Builder
	b.WriteString("| record | field | maximum |\n|---|---|---|\n")
	for _, l := range schemas.Limits {
		fmt.Fprintf(&b, "| %s | `%s` | %d %s |\n", l.Kind, l.Field, l.Max, l.Unit)
	}
	return b.String()
}

// TestLimitsDocumented: LIMITATIONS.md holds the limits table exactly as
// schemas.Limits states it, and README.md points to it.
func TestLimitsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../LIMITATIONS.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), limitsTable()) {
		t.Errorf("LIMITATIONS.md does not hold the limits table; it should read:\n%s", limitsTable())
	}
	for _, want := range []string{"65,535 bytes"} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("LIMITATIONS.md does not say %q", want)
		}
	}
}

// TestEncodeReadsBack: a record whose text is not valid UTF-8 (here in a
// pin's build metadata, which comes from the binary) is refused by Encode
// naming the field (and Encode decodes what it returns, so it never
// returns bytes Decode refuses).
func TestEncodeReadsBack(t *testing.T) {
	p := maximal(t, schemas.KindPin).(*schemas.Pin)
	p.Build.Path = "example.com/\xffagent"
	var fe *schemas.FieldError
	if _, err := schemas.Encode(p); !errors.As(err, &fe) || fe.Field != "build.path" {
		t.Fatalf("Encode with invalid UTF-8 in build.path: %v; want a *FieldError for build.path", err)
	}
}
