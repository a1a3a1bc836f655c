package audit_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/verify/audit"
)

func fleetVKey(t testing.TB, seed ...byte) string {
	v, err := formats.VerifierKey("example.com/fleet", testkit.Key(t, append(seed, 1)[0]).Public())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestParseFleet: the fleet file's grammar, and each refusal naming its
// line and rule.
func TestParseFleet(t *testing.T) {
	vk, vk2, vk3 := fleetVKey(t), fleetVKey(t, 2), fleetVKey(t, 3)
	good := "# fleet\nauthority https://tiles.example/a " + vk + "\n\nrunner r-1 https://tiles.example/r1 " + vk2 + " # first\nrunner r.2 /srv/r2 " + vk3 + "\n"
	f, err := audit.ParseFleet([]byte(good))
	if err != nil || f.Authority.URL != "https://tiles.example/a" || len(f.Runners) != 2 || f.Runners[1].Name != "r.2" {
		t.Fatalf("%+v, %v", f, err)
	}
	for name, c := range map[string]struct{ in, want string }{
		"no authority":        {"runner r1 /x " + vk, "no authority line"},
		"two authorities":     {"authority /a " + vk + "\nauthority /b " + vk, "line 2: a second authority line"},
		"unknown keyword":     {"authority /a " + vk + "\nwitness w /x " + vk, "line 2: expected"},
		"missing key":         {"authority /a", "line 1: expected"},
		"bad key":             {"authority /a example.com+00000000+AAAA", "line 1: verifier key"},
		"path as name":        {"authority /a " + vk + "\nrunner ../x /x " + vk, `line 2: runner name "../x"`},
		"name twice":          {"authority /a " + vk + "\nrunner r /x " + vk2 + "\nrunner r /y " + vk3, `line 3: runner "r" named twice`},
		"log twice, by URL":   {"authority /a " + vk + "\nrunner r /x " + vk2 + "\nrunner s /x/ " + vk3, "line 3: the log of line 2 again (same url)"},
		"log twice, by key":   {"authority /a " + vk + "\nrunner r /x " + vk2 + "\nrunner s /y " + vk2, "line 3: the log of line 2 again (same vkey)"},
		"runner is authority": {"authority /a " + vk + "\nrunner r /a " + vk2, "line 2: the log of line 1 again (same url)"},
		"name starts with .":  {"authority /a " + vk + "\nrunner .r /x " + vk, "line 2: runner name"},
		"reserved name":       {"authority /a " + vk + "\nrunner total /x " + vk, `line 2: runner name "total"`},
		"too large":           {strings.Repeat("#", audit.MaxFleetFile+1), "limit"},
	} {
		_, err := audit.ParseFleet([]byte(c.in))
		if !errors.Is(err, audit.ErrFleet) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// FuzzParseFleet: any input is parsed or refused with ErrFleet, never a
// panic; what parses has one authority and distinct, safe runner names.
func FuzzParseFleet(f *testing.F) {
	vk := fleetVKey(f)
	f.Add([]byte("authority https://a.example/x " + vk + "\nrunner r1 /srv/r1 " + vk + "\n"))
	f.Add([]byte("authority /a " + vk + "\nrunner ../x /x " + vk))
	f.Add([]byte("\x00\xff#\n\n runner"))
	f.Fuzz(func(t *testing.T, in []byte) {
		fl, err := audit.ParseFleet(in)
		if err != nil {
			if !errors.Is(err, audit.ErrFleet) {
				t.Fatalf("error without ErrFleet: %v", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, r := range fl.Runners {
			if seen[r.Name] || strings.ContainsAny(r.Name, "/\\") || strings.HasPrefix(r.Name, ".") {
				t.Fatalf("runner name %q accepted", r.Name)
			}
			seen[r.Name] = true
		}
		if fl.Authority.URL == "" {
			t.Fatal("no authority accepted")
		}
	})
}
