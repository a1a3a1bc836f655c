package inspect_test

import (
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/writ-ledger/writ/inspect"
	"github.com/writ-ledger/writ/internal/testkit"
)

// FuzzDescribe: any bytes are described or refused with an error, never
// a panic, and no line printed for people holds a control character.
func FuzzDescribe(f *testing.F) {
	k := testkit.Key(f, 5)
	f.Add(testkit.Seal(f, testkit.Instruction(strings.Repeat("0e", 16)), k))
	f.Add(testkit.Seal(f, testkit.Delegation(k, []string{"pin"}, "", ""), k))
	f.Add(k.Public().PEM())
	f.Add([]byte("example.com/log\n3\nAQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n\u2014 example.com/log AAAAAAAAAA==\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := inspect.Describe(data, time.UTC)
		if err != nil {
			return
		}
		for _, line := range d.Lines() {
			if strings.ContainsFunc(line, func(r rune) bool { return !unicode.IsPrint(r) }) {
				t.Fatalf("a line holds a control character: %q", line)
			}
		}
	})
}
