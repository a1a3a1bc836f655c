package formats

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/sign"
	"golang.org/x/mod/sumdb/note"
)

const policyOrigin = "example.com/policy-log"

// policyKeys: the log's key (1) and witness keys (10+i).
func policyFixture(t *testing.T) (logKey *sign.PrivateKey, logVKey string, wkeys []*sign.PrivateKey, wvkeys []string) {
	t.Helper()
	logKey = testkit.Key(t, 1)
	logVKey, _ = VerifierKey(policyOrigin, logKey.Public())
	for i := range 6 {
		k := testkit.Key(t, byte(10+i))
		vk, err := CosignerKey(fmt.Sprintf("witness.example/w%d", i), k.Public())
		if err != nil {
			t.Fatal(err)
		}
		wkeys, wvkeys = append(wkeys, k), append(wvkeys, vk)
	}
	return
}

func TestParsePolicyErrors(t *testing.T) {
	_, lv, _, wv := policyFixture(t)
	otherLog, _ := VerifierKey("example.com/other", testkit.Key(t, 2).Public())
	asWitness, _ := CosignerKey("witness.example/log-itself", testkit.Key(t, 1).Public())
	renamed, _ := CosignerKey("witness.example/renamed", testkit.Key(t, 10).Public())
	cases := []struct{ name, policy, want string }{
		{"no quorum", "log " + lv + "\n", "no quorum line"},
		{"two quorums", "witness a " + wv[0] + "\nquorum a\nquorum a\n", "line 3: a second quorum line"},
		{"unknown keyword", "witnes a " + wv[0] + "\nquorum none\n", `line 1: unknown keyword "witnes"`},
		{"undefined quorum", "quorum a\n", `line 1: quorum names "a"`},
		{"forward reference", "group g any a\nwitness a " + wv[0] + "\nquorum g\n", `line 1: group g: member "a" is not defined`},
		{"member twice", "witness a " + wv[0] + "\ngroup g 1 a a\nquorum g\n", `member "a" listed twice`},
		{"member of two groups", "witness a " + wv[0] + "\nwitness b " + wv[1] + "\ngroup g any a b\ngroup h any a\nquorum g\n", `group h: "a" is already a member of another group`},
		{"none member", "witness a " + wv[0] + "\ngroup g any a none\nquorum g\n", "none cannot be a member"},
		{"k zero", "witness a " + wv[0] + "\ngroup g 0 a\nquorum g\n", `threshold "0"`},
		{"k too big", "witness a " + wv[0] + "\ngroup g 2 a\nquorum g\n", `threshold "2"`},
		{"k leading zero", "witness a " + wv[0] + "\nwitness b " + wv[1] + "\ngroup g 01 a b\nquorum g\n", `threshold "01"`},
		{"empty group", "witness a " + wv[0] + "\ngroup g any\nquorum g\n", "at least one member"},
		{"name twice", "witness a " + wv[0] + "\nwitness a " + wv[1] + "\nquorum a\n", `name "a" is already defined`},
		{"group named like witness", "witness a " + wv[0] + "\ngroup a any a\nquorum a\n", `name "a" is already defined`},
		{"name none", "witness none " + wv[0] + "\nquorum none\n", "predefined"},
		{"same key two names", "witness a " + wv[0] + "\nwitness b " + renamed + "\nquorum a\n", "same public key as witness a"},
		{"witness is the log", "log " + lv + "\nwitness a " + asWitness + "\nquorum a\n", "same public key as log"},
		{"log twice", "log " + lv + "\nlog " + lv + "\nquorum none\n", "same public key"},
		{"log key as witness key type", "witness a " + otherLog + "\nquorum a\n", "signature type 0x01"},
		{"witness key as log key", "log " + wv[0] + "\nquorum none\n", "log key"},
		{"bad url", "witness a " + wv[0] + " ftp://w.example\nquorum a\n", "not an absolute http(s) URL"},
		{"url with query", "witness a " + wv[0] + " https://w.example/?x=1\nquorum a\n", "not an absolute http(s) URL"},
		{"extra field", "witness a " + wv[0] + " https://w.example x\nquorum a\n", "want `witness <name> <vkey> [<url>]`"},
		{"carriage return", "witness a " + wv[0] + "\r\nquorum a\n", "control byte 0x0d"},
		{"NUL", "quorum none\x00\n", "control byte 0x00"},
		{"group after quorum", "witness a " + wv[0] + "\nquorum a\ngroup g any a\n", "after the quorum line"},
		{"too long", "# " + strings.Repeat("x", MaxPolicyLine) + "\nquorum none\n", "line 1:"},
		{"too big", strings.Repeat("#\n", MaxPolicyBytes) + "quorum none\n", "limit 65536"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParsePolicy([]byte(c.policy))
			if !errors.Is(err, ErrPolicy) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ParsePolicy = %v, want ErrPolicy containing %q", err, c.want)
			}
		})
	}
}

func TestParsePolicySpecExample(t *testing.T) {
	_, lv, _, wv := policyFixture(t)
	src := "# the example of c2sp.org/tlog-policy\n  log " + lv + "  https://log.example/\n\n" +
		"witness X1 " + wv[0] + "\nwitness X2 " + wv[1] + "\n\twitness X3 " + wv[2] + " https://x3.example/w\n" +
		"group X-witnesses 2 X1 X2 X3\n" +
		"witness Y1 " + wv[3] + "\nwitness Y2 " + wv[4] + "\nwitness Y3 " + wv[5] + "\n" +
		"group Y-witnesses any Y1 Y2 Y3\ngroup X-and-Y all X-witnesses Y-witnesses\nquorum X-and-Y\n" +
		"witness late " + mustCosignerKey(t, 30) + "\n"
	p, err := ParsePolicy([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Logs) != 1 || p.Logs[0].URL != "https://log.example" || p.Logs[0].Origin != policyOrigin {
		t.Fatalf("logs = %+v", p.Logs)
	}
	if len(p.Witnesses) != 7 || p.Quorum != "X-and-Y" {
		t.Fatalf("witnesses %d, quorum %q", len(p.Witnesses), p.Quorum)
	}
	if sw := p.SubmissionWitnesses(); len(sw) != 1 || sw[0].Name != "X3" || sw[0].URL != "https://x3.example/w" {
		t.Fatalf("SubmissionWitnesses = %+v", sw)
	}
}

func mustCosignerKey(t *testing.T, n byte) string {
	vk, err := CosignerKey(fmt.Sprintf("witness.example/k%d", n), testkit.Key(t, n).Public())
	if err != nil {
		t.Fatal(err)
	}
	return vk
}

// cosigned signs a checkpoint body with the log key and has witness i
// cosign it at times[i] (skipped when zero).
func cosigned(t *testing.T, logKey *sign.PrivateKey, wkeys []*sign.PrivateKey, times map[int]int64) []byte {
	t.Helper()
	s, _, err := NewNoteSigner(policyOrigin, logKey)
	if err != nil {
		t.Fatal(err)
	}
	signers := []note.Signer{s, NewCosigner(policyOrigin, logKey, time.Unix(50, 0))}
	for i := range len(wkeys) {
		if at, ok := times[i]; ok {
			signers = append(signers, NewCosigner(fmt.Sprintf("witness.example/w%d", i), wkeys[i], time.Unix(at, 0)))
		}
	}
	body := Checkpoint{Origin: policyOrigin, Size: 3, Hash: [32]byte{1}}.Body()
	out, err := note.Sign(&note.Note{Text: body}, signers...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPolicyCheck(t *testing.T) {
	logKey, lv, wkeys, wv := policyFixture(t)
	p, err := ParsePolicy([]byte("log " + lv + "\nwitness a " + wv[0] + "\nwitness b " + wv[1] + "\nwitness c " + wv[2] +
		"\ngroup q 2 a b c\nquorum q\n"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	cases := []struct {
		name     string
		times    map[int]int64
		met      bool
		cosigned string
		future   string
		at       int64
	}{
		{"none", nil, false, "", "", 0},
		{"one", map[int]int64{0: 100}, false, "a", "", 0},
		{"two", map[int]int64{0: 100, 2: 200}, true, "a c", "", 100},
		{"three", map[int]int64{0: 100, 1: 300, 2: 200}, true, "a b c", "", 200},
		{"not a policy witness", map[int]int64{0: 100, 4: 200}, false, "a", "", 0},
		{"future not counted", map[int]int64{0: 100, 1: 1000 + 301}, false, "a", "b", 0},
		{"within skew", map[int]int64{0: 100, 1: 1000 + 300}, true, "a b", "", 100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			signed := cosigned(t, logKey, wkeys, c.times)
			w, err := p.Check(signed, testLogKey(t, lv), now)
			var names []string
			for _, x := range w.Cosigned {
				names = append(names, x.Name)
			}
			if w.Met != c.met || strings.Join(names, " ") != c.cosigned || strings.Join(w.Future, " ") != c.future {
				t.Fatalf("Check = %+v, %v", w, err)
			}
			var qe *QuorumError
			if c.met != (err == nil) || (!c.met && (!errors.As(err, &qe) || !errors.Is(err, ErrQuorum))) {
				t.Fatalf("err = %v", err)
			}
			if c.met && w.Time.Unix() != c.at {
				t.Fatalf("witnessed time %d, want %d", w.Time.Unix(), c.at)
			}
			if !c.met && !strings.Contains(err.Error(), "quorum group q: 2 of [a b c]") {
				t.Fatalf("error %q does not name the quorum", err)
			}
		})
	}
	// A cosignature moved to another witness's name does not count for it.
	signed := cosigned(t, logKey, wkeys, map[int]int64{0: 100})
	moved := strings.Replace(string(signed), "witness.example/w0 ", "witness.example/w1 ", 1)
	if w, _ := p.Check([]byte(moved), testLogKey(t, lv), now); len(w.Cosigned) != 0 {
		t.Fatalf("moved cosignature counted: %+v", w)
	}
	// The log's own cosignature/v1 is never a witness's, and another log
	// is not in the policy.
	other, _ := VerifierKey("example.com/other", testkit.Key(t, 2).Public())
	if _, err := p.Check(signed, testLogKey(t, other), now); !errors.Is(err, ErrPolicyLog) {
		t.Fatalf("other log: %v", err)
	}
	none, _ := ParsePolicy([]byte("quorum none\n"))
	if w, err := none.Check(signed, testLogKey(t, other), now); err != nil || !w.Met || !w.Time.IsZero() {
		t.Fatalf("quorum none: %+v %v", w, err)
	}
}

func TestSignatureLines(t *testing.T) {
	logKey, lv, wkeys, _ := policyFixture(t)
	signed := cosigned(t, logKey, wkeys, map[int]int64{0: 100, 1: 200})
	base, err := LogSigned(signed, testLogKey(t, lv))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenTimedCheckpoint(base, testLogKey(t, lv)); err != nil || strings.Count(string(base), "\u2014") != 2 {
		t.Fatalf("LogSigned = %q, %v", base, err)
	}
	_, sigs, _ := strings.Cut(string(signed), "\n\n")
	lines, err := SignatureLines([]byte(sigs))
	if err != nil || len(lines) != 4 {
		t.Fatalf("SignatureLines = %d, %v", len(lines), err)
	}
	back, err := AddSignatures(base, lines)
	if err != nil || string(back) != string(signed) {
		t.Fatalf("AddSignatures = %q, %v", back, err)
	}
	for _, bad := range []string{"", "\u2014 a\n", "- a AAAAAAA=\n", "\u2014 a AAAA\n", "\u2014 a !!!!!!!!\n", "\u2014 a AAAAAAA=\n\n"} {
		if _, err := SignatureLines([]byte(bad)); !errors.Is(err, ErrSignatureLines) {
			t.Errorf("SignatureLines(%q) = %v", bad, err)
		}
	}
}

func FuzzParsePolicy(f *testing.F) {
	k := testkit.Key(f, 10)
	vk, _ := CosignerKey("w.example/a", k.Public())
	lk, _ := VerifierKey("l.example/log", testkit.Key(f, 1).Public())
	f.Add([]byte("log " + lk + "\nwitness a " + vk + " https://w.example\ngroup g any a\nquorum g\n"))
	f.Add([]byte("quorum none\n"))
	f.Add([]byte("# c\n\t witness a " + vk + "\ngroup g 1 a\ngroup h all g\nquorum h\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePolicy(data)
		if err != nil {
			if !errors.Is(err, ErrPolicy) {
				t.Fatalf("error does not wrap ErrPolicy: %v", err)
			}
			return
		}
		if p.Quorum == "" || (p.Quorum != "none" && !p.defined(p.Quorum)) {
			t.Fatalf("parsed policy with quorum %q", p.Quorum)
		}
		w, _ := p.Check([]byte("l.example/log\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n\u2014 w.example/a AAAA\n"), testLogKey(t, lk), time.Unix(0, 0))
		if w.Met && p.Quorum != "none" {
			t.Fatalf("quorum %q met with no valid cosignature", p.Quorum)
		}
	})
}
