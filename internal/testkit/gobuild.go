package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// AgentSource is the program BuildAgent compiles.
const AgentSource = `// Command agent is the stand-in agent binary writ's tests pin and admit.
package main

import "fmt"

func main() { fmt.Println("agent: running") }
`

// BuildOptions choose how BuildAgent builds.
type BuildOptions struct {
	Dirty    bool     // edit main.go after the commit (vcs.modified=true)
	NoVCS    bool     // build with -buildvcs=false (no vcs.revision)
	LDFlags  string   // extra -ldflags, e.g. "-s -w"
	ExtraEnv []string // extra environment for go build
	// PadBytes, if not zero, embeds a committed file of that many
	// pseudo-random bytes, so the binary is about that much larger (a
	// large agent for benchmarks).
	PadBytes int
}

// paddedSource is AgentSource with an embedded pad file.
const paddedSource = `// Command agent is the stand-in agent binary, padded with an embedded file.
package main

import (
	_ "embed"
	"fmt"
)

//go:embed pad.bin
var pad []byte

func main() { fmt.Println("agent: running, pad", len(pad)) }
`

// BuildAgent builds AgentSource from a fresh git repository with one
// commit, so the binary carries real Go build metadata, and returns its
// path. It needs git and the go command; it fails the test (never skips)
// without them.
func BuildAgent(t testing.TB, o BuildOptions) string {
	t.Helper()
	p, err := BuildAgentIn(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// AgentForMain builds the test agent once for a package's TestMain, in a
// new temporary directory named after prefix, and returns its path and
// the function that removes it. It cannot fail a test yet: on a build
// error it says so on stderr and exits 2.
func AgentForMain(prefix string) (path string, remove func()) {
	dir, err := os.MkdirTemp("", prefix)
	if err == nil {
		path, err = BuildAgentIn(dir, BuildOptions{})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "building the test agent:", err)
		os.Exit(2)
	}
	return path, func() { os.RemoveAll(dir) }
}

// BuildAgentIn is BuildAgent into dir (the benchmarks' agents, and
// AgentForMain).
func BuildAgentIn(dir string, o BuildOptions) (string, error) {
	var firstErr error
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	source := AgentSource
	if o.PadBytes > 0 {
		source = paddedSource
		pad := make([]byte, o.PadBytes)
		x := uint64(0x9e3779b97f4a7c15)
		for i := range pad { // xorshift: incompressible, reproducible
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			pad[i] = byte(x)
		}
		if err := os.WriteFile(filepath.Join(dir, "pad.bin"), pad, 0o644); err != nil {
			return "", err
		}
	}
	write("main.go", source)
	write("go.mod", "module example.com/agent\n\ngo 1.26\n")
	vcs := "-buildvcs=true"
	if o.NoVCS {
		vcs = "-buildvcs=false"
	}
	steps := [][]string{
		{"git", "init", "-q"},
		{"git", "add", "."},
		{"git", "-c", "user.name=writ test", "-c", "user.email=test@writ.invalid", "commit", "-q", "-m", "agent"},
	}
	for _, s := range steps {
		if err := run(dir, nil, s...); err != nil {
			return "", err
		}
	}
	if o.Dirty {
		write("main.go", source+"\n// an uncommitted edit\n")
	}
	args := []string{"go", "build", vcs, "-o", "agent"}
	if o.LDFlags != "" {
		args = append(args, "-ldflags="+o.LDFlags)
	}
	if err := run(dir, o.ExtraEnv, append(args, ".")...); err != nil {
		return "", err
	}
	return filepath.Join(dir, "agent"), firstErr
}

func run(dir string, env []string, args ...string) error {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %v\n%s", args, err, out)
	}
	return nil
}
