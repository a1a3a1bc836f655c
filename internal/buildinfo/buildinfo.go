// Package buildinfo says which build of writ is running: the module
// version and the version control revision Go recorded in the binary. It
// imports nothing of writ.
package buildinfo

import "runtime/debug"

// Version is String of the running binary's build information, or
// "unknown" when the binary has none.
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return String(nil)
	}
	return String(info)
}

// String is the main module's version ("(devel)" for a build from a work
// tree), then the vcs.revision setting after a space, then " (modified)"
// when vcs.modified is "true"; "unknown" for nil.
func String(info *debug.BuildInfo) string {
	if info == nil {
		return "unknown"
	}
	v := info.Main.Version
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision":
			v += " " + s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			v += " (modified)"
		}
	}
	return v
}
