package formats

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestParseSigLine(t *testing.T) {
	sig := strings.Repeat("A", 102) + "==" // 4 + 72 bytes
	for _, c := range []struct {
		line string
		ok   bool
		name string
		hash uint32
		n    int // signature bytes after the key hash
	}{
		{"\u2014 witness.example/w1 " + sig, true, "witness.example/w1", 0, 72},
		{"\u2014 w AQIDBAU=", true, "w", 0x01020304, 1},
		{"\u2014 \u00e9t\u00e9 AQIDBAU=", true, "\u00e9t\u00e9", 0x01020304, 1}, // a UTF-8 name
		{"", false, "", 0, 0},
		{"\u2014 w", false, "", 0, 0},
		{"- w AQIDBAU=", false, "", 0, 0},                                // not an em dash
		{"\u2014  AQIDBAU=", false, "", 0, 0},                            // no name
		{"\u2014 w+1 AQIDBAU=", false, "", 0, 0},                         // '+' in the name
		{"\u2014 w\x01 AQIDBAU=", false, "", 0, 0},                       // a control character
		{"\u2014 w\xff AQIDBAU=", false, "", 0, 0},                       // not UTF-8
		{"\u2014 w AQIDBA==", false, "", 0, 0},                           // 4 bytes: no signature
		{"\u2014 w AQIDBAU", false, "", 0, 0},                            // unpadded
		{"\u2014 w AQIDBAV=", false, "", 0, 0},                           // padding bits set
		{"\u2014 w AQID\rBAU=", false, "", 0, 0},                         // a carriage return inside
		{"\u2014 w AQIDBAU= ", false, "", 0, 0},                          // a trailing space
		{"\u2014 w AQIDBAU=\n", false, "", 0, 0},                         // the newline is the caller's
		{"\u2014 w !!!!!!!!", false, "", 0, 0},                           // not base64
		{"\u2014 w " + strings.Repeat("A", MaxSigLine), false, "", 0, 0}, // too long
	} {
		sl, err := ParseSigLine(c.line)
		if !c.ok {
			if !errors.Is(err, ErrSignatureLines) || sl.Name != "" || sl.Sig != nil {
				t.Errorf("%.40q: %+v, %v; want a refusal and no result", c.line, sl, err)
			}
			continue
		}
		if err != nil || sl.Name != c.name || sl.Hash != c.hash || len(sl.Sig) != c.n || sl.String() != c.line {
			t.Errorf("%.40q: %+v %v", c.line, sl, err)
		}
	}
}

// FuzzParseSigLine: a line that parses is written back byte for byte.
func FuzzParseSigLine(f *testing.F) {
	for _, s := range []string{"\u2014 w AQIDBAU=", "\u2014 witness.example/w1 " + strings.Repeat("A", 102) + "==", "\u2014 w+1 AQIDBAU=", "\u2014 w AQID\rBAU=", "- a AAAAAAA="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		sl, err := ParseSigLine(line)
		if err != nil {
			return
		}
		if sl.String() != line || len(line) > MaxSigLine || len(sl.Sig) == 0 {
			t.Fatalf("%q parsed as %+v, written %q", line, sl, sl.String())
		}
		again, err := ParseSigLine(sl.String())
		if err != nil || again.Name != sl.Name || again.Hash != sl.Hash || !bytes.Equal(again.Sig, sl.Sig) {
			t.Fatalf("%q: reparsed %+v %v", line, again, err)
		}
	})
}
