package buildinfo_test

import (
	"runtime/debug"
	"testing"

	"github.com/writ-ledger/writ/internal/buildinfo"
)

// TestString: the version, the revision and whether the tree was
// modified, each as Go recorded it.
func TestString(t *testing.T) {
	info := func(version string, settings ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Version: version}}
		for i := 0; i+1 < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi
	}
	for _, tc := range []struct {
		info *debug.BuildInfo
		want string
	}{
		{nil, "unknown"},
		{info("v1.2.3"), "v1.2.3"},
		{info("(devel)", "vcs.revision", "abc123", "vcs.modified", "false"), "(devel) abc123"},
		{info("(devel)", "vcs.revision", "abc123", "vcs.modified", "true", "GOOS", "linux"), "(devel) abc123 (modified)"},
	} {
		if got := buildinfo.String(tc.info); got != tc.want {
			t.Errorf("String(%v) = %q, want %q", tc.info, got, tc.want)
		}
	}
	if buildinfo.Version() == "" {
		t.Error("Version is empty")
	}
}
