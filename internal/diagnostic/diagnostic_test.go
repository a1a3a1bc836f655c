package diagnostic

import (
	"bytes"
	"testing"
)

func TestWrite(t *testing.T) {
	for _, tc := range []struct {
		json  bool
		level string
		want  string
	}{
		{false, Warning, "writ: warning: two lines\n"},
		{false, Info, "writ: two lines\n"},
		{true, Note, `{"level":"note","message":"two lines"}` + "\n"},
	} {
		var b bytes.Buffer
		Write(&b, tc.json, tc.level, "two\nlines")
		if b.String() != tc.want {
			t.Errorf("Write(json %v, %s) = %q, want %q", tc.json, tc.level, b.String(), tc.want)
		}
	}
}
