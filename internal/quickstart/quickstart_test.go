package quickstart

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeWrit answers each step's command line with a result of the shape
// writ prints, and a verdict by the dispatch admitted.
func fakeWrit(t *testing.T, lines *[]string) Runner {
	return func(args []string, _ io.Reader, stdout, _ io.Writer) int {
		*lines = append(*lines, strings.Join(args[2:], " "))
		switch args[2] {
		case "key":
			fmt.Fprintf(stdout, `{"key_id":"%064x"}`+"\n", len(*lines))
		case "root":
			fmt.Fprintln(stdout, `{"digest":"sha256:ab"}`)
		case "ledger":
			fmt.Fprintln(stdout, `{"vkey":"example+1+AA","index":4}`)
		case "pin":
			fmt.Fprintln(stdout, `{"version":"0.1.0","binary_digest":"sha256:cd","size":123}`)
		case "admit":
			switch d := filepath.Base(args[len(args)-1]); d {
			case "signed.dispatch":
				fmt.Fprintln(stdout, `{"verdict":"admitted","rule":""}`)
			case "unsigned.dispatch":
				fmt.Fprintln(stdout, `{"verdict":"admitted-unsigned","rule":"unsigned"}`)
			default:
				fmt.Fprintln(stdout, `{"verdict":"refused","rule":"binary-mismatch"}`)
				return 1
			}
		case "audit":
			fmt.Fprintln(stdout, `{"entries_verified":7,"authority_entries":4,"decisions":3,"by_verdict":{"admitted":1,"admitted-unsigned":1,"would-refuse":0,"refused":1}}`)
		default:
			fmt.Fprintln(stdout, `{}`)
		}
		return 0
	}
}

func TestStory(t *testing.T) {
	t.Setenv("WRIT_PASSPHRASE", "ignored")
	var cmds, said []string
	dir := t.TempDir()
	res, err := Run(Options{Dir: dir, Run: fakeWrit(t, &cmds), Say: func(l string) { said = append(said, l) }})
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("WRIT_PASSPHRASE") != "" {
		t.Error("the story kept $WRIT_PASSPHRASE")
	}
	if len(res.KeyIDs) != 3 || res.Ledger != filepath.Join(dir, "ledger") || res.VKey != "example+1+AA" {
		t.Errorf("result %+v", res)
	}
	var verdicts []string
	for _, a := range res.Admissions {
		verdicts = append(verdicts, a.Verdict)
	}
	if want := []string{"admitted", "admitted-unsigned", "refused"}; !slices.Equal(verdicts, want) {
		t.Errorf("verdicts %q, want %q", verdicts, want)
	}
	if !strings.HasPrefix(said[0], "quickstart in "+dir) || !strings.HasPrefix(said[len(said)-1], "next: ") {
		t.Errorf("the story told %q", said)
	}
	if !slices.ContainsFunc(said, func(l string) bool { return strings.HasPrefix(l, "audit: ok, 7 entries verified") }) {
		t.Errorf("no audit line in %q", said)
	}
	tampered, _ := os.ReadFile(filepath.Join(dir, "agent", "writ-agent.tampered"))
	orig, _ := os.ReadFile(res.Agent)
	if len(orig) == 0 || len(tampered) != len(orig) || tampered[len(orig)-1] == orig[len(orig)-1] {
		t.Error("the tampered copy does not differ in its last byte")
	}
}

func TestStepFailure(t *testing.T) {
	fail := func(args []string, _ io.Reader, _, stderr io.Writer) int {
		fmt.Fprintln(stderr, "writ: error: no")
		return 2
	}
	_, err := Run(Options{Dir: t.TempDir(), Run: fail, Say: func(string) {}})
	if err == nil || !strings.Contains(err.Error(), "exited 2, expected 0: writ: error: no") {
		t.Errorf("error %v", err)
	}
}
