package provenance

import (
	"errors"
	"testing"

	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
)

// TestRepoPath: git URIs in the forms builders write, and the ones it
// cannot read.
func TestRepoPath(t *testing.T) {
	for uri, want := range map[string]string{
		"git+https://github.com/Victim/Agent@refs/heads/main": "github.com/victim/agent",
		"git+https://github.com/victim/agent.git":             "github.com/victim/agent",
		"https://user@github.com:443/victim/agent/":           "github.com/victim/agent",
		"git@github.com:victim/agent.git":                     "github.com/victim/agent",
		"git+ssh://git@gitlab.com/group/sub/agent":            "gitlab.com/group/sub/agent",
		"github.com/mallory/agent":                            "",
		"git+https://github.com":                              "",
		"":                                                    "",
		"git+https://github.com/a b/c":                        "",
	} {
		if got := schemas.RepoPath(uri); got != want {
			t.Errorf("RepoPath(%q) = %q, want %q", uri, got, want)
		}
	}
}

// TestSameSource: when the module path names a repository on a host,
// the provenance must name that repository (or one the module is
// under), in a form that reads, whatever its case; a host or owner
// prefix, an unreadable URI or none is refused.
func TestSameSource(t *testing.T) {
	build := func(mod string) *schemas.Build { return &schemas.Build{Module: mod, Path: mod, Revision: testCommit} }
	for _, c := range []struct {
		repo, mod string
		ok        bool
	}{
		{"git+https://github.com/victim/agent", "github.com/victim/agent", true},
		{"git+https://github.com/victim/agent", "github.com/Victim/Agent/cmd/agent", true},
		{"git@github.com:victim/agent.git", "github.com/victim/agent/v2", true},
		{"git+https://example.com/agent", "example.com/agent", true}, // the module path names no OWNER/REPO: not compared
		{"git+https://github.com/mallory/agent", "github.com/victim/agent", false},
		{"github.com/mallory/agent", "github.com/victim/agent", false},
		{"git@github.com:mallory/agent.git", "github.com/victim/agent", false},
		{"", "github.com/victim/agent", false},
		{"git+https://github.com", "github.com/victim/agent", false},
		{"git+https://github.com/victim", "github.com/victim/agent", false},
		{"git+https://github.com/victim/agent-evil", "github.com/victim/agent", false},
	} {
		err := sameSource(&Attested{Repository: c.repo, Commit: testCommit}, build(c.mod))
		var pe *Error
		if c.ok != (err == nil) || (err != nil && (!errors.As(err, &pe) || pe.Rule != rules.ProvenanceSource)) {
			t.Errorf("repository %q, module %q: %v, want ok %v", c.repo, c.mod, err, c.ok)
		}
	}
}
