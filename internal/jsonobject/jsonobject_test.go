package jsonobject_test

import (
	"encoding/json"
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
