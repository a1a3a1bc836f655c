package transfer

import (
	"debug/buildinfo"
	"runtime/debug"
	"testing"
)

// TestModifiedIsStrict: only vcs.modified=false, next to a revision, reads
// as a clean build; an absent or odd value cannot be shown clean.
func TestModifiedIsStrict(t *testing.T) {
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"}
	for _, tc := range []struct {
		name     string
		settings []debug.BuildSetting
		modified bool
	}{
		{"false", []debug.BuildSetting{rev, {Key: "vcs.modified", Value: "false"}}, false},
		{"true", []debug.BuildSetting{rev, {Key: "vcs.modified", Value: "true"}}, true},
		{"absent", []debug.BuildSetting{rev}, true},
		{"upper case", []debug.BuildSetting{rev, {Key: "vcs.modified", Value: "TRUE"}}, true},
		{"FALSE", []debug.BuildSetting{rev, {Key: "vcs.modified", Value: "FALSE"}}, true},
		{"no revision, no flag", nil, false},
		{"no revision, modified", []debug.BuildSetting{{Key: "vcs.modified", Value: "true"}}, true},
	} {
		b, _ := fromBuildInfo(&buildinfo.BuildInfo{GoVersion: "go1.26.8", Settings: tc.settings})
		if b.Modified != tc.modified {
			t.Errorf("%s: modified %v, want %v", tc.name, b.Modified, tc.modified)
		}
	}
}
