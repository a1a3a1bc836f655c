package jsonobject_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/writ-ledger/writ/internal/jsonobject"
)

// TestSortedIsMapOrder: a struct comes out byte for byte as the map of
// the same fields, nested structs in their declaration order, HTML
// characters unescaped; what is not an object is an error.
func TestSortedIsMapOrder(t *testing.T) {
	type inner struct {
		Z string `json:"z"`
		A string `json:"a"`
	}
	type base struct {
		M int `json:"m"`
	}
	type obj struct {
		base
		B     []inner `json:"b"`
		A     string  `json:"a"`
		Empty *int    `json:"empty,omitempty"`
	}
	got, err := jsonobject.Sorted(obj{base{1}, []inner{{"z", "a"}}, "<&>", nil})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":"<&>","b":[{"z":"z","a":"a"}],"m":1}`; string(got) != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	for _, v := range []any{[]int{1}, "x", nil} {
		if b, err := jsonobject.Sorted(v); err == nil {
			t.Errorf("%v: got %s, want an error", v, b)
		}
	}
	if _, err := jsonobject.Sorted(map[string]any{"f": func() {}}); err == nil {
		t.Error("an unencodable value: no error")
	}
	var m map[string]any
	if b, _ := jsonobject.Sorted(struct{}{}); json.Unmarshal(b, &m) != nil || len(m) != 0 {
		t.Errorf("empty struct: %s", b)
	}
}

// TestSortedAll: every object's keys sorted, numbers as written.
func TestSortedAll(t *testing.T) {
	got, err := jsonobject.SortedAll([]byte(`{"z":[{"b":1,"a":12345678901234567890}],"a":"<"}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":"<","z":[{"a":12345678901234567890,"b":1}]}`; string(got) != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	if _, err := jsonobject.SortedAll([]byte(`{`)); err == nil {
		t.Error("malformed JSON: no error")
	}
}

// TestFields: a struct's JSON fields in encoding order, embedded ones in
// place, "-" and unexported ones left out, names from the tag or the
// field.
func TestFields(t *testing.T) {
	type base struct {
		K string `json:"k" doc:"kind"`
	}
	type res struct {
		base
		Hidden int `json:"-"`
		hidden int
		Plain  string
		Named  *int `json:"named,omitempty" doc:"a number"`
	}
	_ = res{}.hidden
	got := jsonobject.Fields(reflect.TypeOf(&res{}))
	want := []jsonobject.Field{{"k", "kind"}, {"Plain", ""}, {"named", "a number"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
