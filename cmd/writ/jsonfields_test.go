package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/clicmd"
	"github.com/writ-ledger/writ/internal/jsonobject"
)

// envJSONLog names the file where a writ run inside the tests appends,
// for every JSON result, its command and top-level fields.
const envJSONLog = "WRIT_TEST_JSON_LOG"

var jsonLogMu sync.Mutex

// recordJSONFields makes this process log each JSON result's command and
// fields to the file $WRIT_TEST_JSON_LOG names, if any.
func recordJSONFields() {
	path := os.Getenv(envJSONLog)
	if path == "" {
		return
	}
	clicmd.OnEmit = func(command string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			return
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(b, &obj) != nil {
			return
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		jsonLogMu.Lock()
		defer jsonLogMu.Unlock()
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return
		}
		fmt.Fprintf(f, "%s\t%s\n", command, strings.Join(keys, ","))
		f.Close()
	}
}

// checkJSONFields reads the log of a test run and fails for a field a
// command printed that its help does not list, and for a command whose
// help lists no fields.
func checkJSONFields(t *testing.T, path string) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return // the scripts run printed no JSON result (go test -run picked them)
	} else if err != nil {
		t.Fatal(err)
	}
	seen := map[string]map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		command, keys, _ := strings.Cut(line, "\t")
		if seen[command] == nil {
			seen[command] = map[string]bool{}
		}
		for _, k := range strings.Split(keys, ",") {
			if k != "" {
				seen[command][k] = true
			}
		}
	}
	commands := make([]string, 0, len(seen))
	for c := range seen {
		commands = append(commands, c)
	}
	slices.Sort(commands)
	for _, c := range commands {
		doc, ok := results[c]
		if !ok {
			t.Errorf("writ %s printed JSON, and its --help documents no JSON result", c)
			continue
		}
		declared := map[string]bool{}
		for _, s := range doc.Shapes {
			for _, f := range jsonobject.Fields(s.Type) {
				declared[f.Name] = true
			}
		}
		for k := range seen[c] {
			if doc.Prose != "" && !regexp.MustCompile(`\b`+regexp.QuoteMeta(k)+`\b`).MatchString(doc.Prose) {
				t.Errorf("writ %s printed the JSON field %q, which its --help does not name: %s", c, k, doc.Prose)
			} else if doc.Prose == "" && !declared[k] {
				t.Errorf("writ %s printed the JSON field %q, which its result types do not declare", c, k)
			}
		}
	}
}

// TestJSONFieldsCoverEveryCommand: every command documents its JSON
// result (or says it has none), and every entry is a real command.
func TestJSONFieldsCoverEveryCommand(t *testing.T) {
	app := newApp(nil, nil, nil)
	leaves := map[string]bool{}
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			name := strings.TrimSpace(prefix + " " + c.Name)
			if len(c.Subcommands) > 0 {
				walk(name, c.Subcommands)
				continue
			}
			leaves[name] = true
			if _, ok := results[name]; !ok {
				t.Errorf("writ %s: no JSON result documented (results)", name)
			} else if !strings.Contains(c.Description, "JSON result (--json)") {
				t.Errorf("writ %s --help does not show its JSON result", name)
			}
		}
	}
	walk("", app.Commands)
	for name := range results {
		if !leaves[name] {
			t.Errorf("results documents %q, which is not a command", name)
		}
	}
}

// TestResultFieldsDocumented: every field of every result type has a doc
// tag and a name its shape does not repeat, and each shape is a struct.
func TestResultFieldsDocumented(t *testing.T) {
	for name, doc := range results {
		if doc.Prose == "" && len(doc.Shapes) == 0 {
			t.Errorf("writ %s: a result with neither a type nor prose", name)
		}
		for _, s := range doc.Shapes {
			if s.Type.Kind() != reflect.Struct {
				t.Errorf("writ %s: result type %v is not a struct", name, s.Type)
				continue
			}
			seen := map[string]bool{}
			for _, f := range jsonobject.Fields(s.Type) {
				if f.Doc == "" {
					t.Errorf("writ %s: %v's JSON field %q has no doc tag", name, s.Type, f.Name)
				}
				if seen[f.Name] {
					t.Errorf("writ %s: %v declares the JSON field %q twice", name, s.Type, f.Name)
				}
				seen[f.Name] = true
			}
		}
	}
}

// TestResultHelpText: --help lists a typed result's fields, one a line,
// with their docs, and each condition's shape under it.
func TestResultHelpText(t *testing.T) {
	got := results["ledger repair"].Text()
	for _, want := range []string{"JSON result (--json):\n  dir ", "\nwith --undo:\n  set_aside ", "\n  kept "} {
		if !strings.Contains(got, want) {
			t.Errorf("ledger repair's help lacks %q:\n%s", want, got)
		}
	}
}
