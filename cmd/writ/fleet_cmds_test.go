package main

import (
	"encoding/json"
	"os"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/writ-ledger/writ/internal/testkit"
)

// cmdNginx starts a real nginx (Debian's) serving ROOT on a loopback
// port, sets $NGINX to its URL, and stops it when the script ends:
// nginx ROOT. A script guards it with [!nginx] skip.
func cmdNginx(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: nginx ROOT")
	}
	url, stop, err := testkit.StartNginx(ts.MkAbs(args[0]))
	ts.Check(err)
	ts.Defer(func() { stop() })
	ts.Setenv("NGINX", url)
}

// nginxCondition is the script condition [nginx]: nginx is installed, or
// CI requires it (WRIT_REQUIRE_NGINX=1), so that there a missing nginx
// fails the script instead of skipping it.
func nginxCondition() bool {
	_, err := testkit.NginxBinary()
	return err == nil || os.Getenv(testkit.RequireNginxEnv) == "1"
}

// cmdEnvFile sets an environment variable to a file's content without
// its final newline: envfile NAME FILE (FILE may be stdout).
func cmdEnvFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: envfile NAME FILE")
	}
	ts.Setenv(args[0], strings.TrimRight(ts.ReadFile(args[1]), "\n"))
}

// cmdAppendLine appends one line (its arguments joined by spaces, after
// the script expanded them) to a file: appendline FILE WORD...
func cmdAppendLine(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: appendline FILE WORD...")
	}
	f, err := os.OpenFile(ts.MkAbs(args[0]), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	ts.Check(err)
	_, err = f.WriteString(strings.Join(args[1:], " ") + "\n")
	ts.Check(err)
	ts.Check(f.Close())
}

// cmdJSONEnv sets an environment variable to a string field of the JSON
// object in a file: jsonenv NAME FILE FIELD (FILE may be stdout).
func cmdJSONEnv(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: jsonenv NAME FILE FIELD")
	}
	var v map[string]any
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[1])), &v))
	s, ok := v[args[2]].(string)
	if !ok {
		ts.Fatalf("%s has no string field %q", args[1], args[2])
	}
	ts.Setenv(args[0], s)
}

// cmdWaitFile waits up to 10 s for a file to exist and be non-empty
// (a server writing its address): waitfile FILE
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile FILE")
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if fi, err := os.Stat(ts.MkAbs(args[0])); err == nil && fi.Size() > 0 {
			return
		}
	}
	ts.Fatalf("%s did not appear within 10s", args[0])
}
