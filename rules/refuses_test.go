package rules

import "testing"

func TestRefuses(t *testing.T) {
	for _, tc := range []struct {
		id, want string
	}{
		{OK, RefusesNever},
		{Internal, RefusesAlways},
		{Replay, RefusesAlways},
		{Revoked, RefusesEnforce},
	} {
		r, ok := Lookup(tc.id)
		if !ok {
			t.Fatalf("no rule %s", tc.id)
		}
		if got := r.Refuses(); got != tc.want {
			t.Errorf("%s: Refuses() = %q, want %q (class %s, governed %v)", tc.id, got, tc.want, r.Class, r.Governed())
		}
	}
}
