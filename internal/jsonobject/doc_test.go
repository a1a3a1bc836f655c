package jsonobject_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/writ-ledger/writ/internal/jsonobject"
)

type docResult struct {
	ID   string `json:"id" doc:"the id"`
	Size int    `json:"size_bytes" doc:"its size"`
}

type docFailure struct {
	Error string `json:"error" doc:"why"`
}

// docWriter writes itself; docResult is what it writes.
type docWriter struct{}

func (docWriter) MarshalJSON() ([]byte, error) { return json.Marshal(docResult{}) }
func (docWriter) JSONShape() any               { return docResult{} }

// TestDocText: the exact --help text of each kind of Doc.
func TestDocText(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  jsonobject.Doc
		want string
	}{
		{"one shape", jsonobject.Typed("", docResult{}),
			"JSON result (--json):\n  id          the id\n  size_bytes  its size"},
		{"note and condition", jsonobject.Typed("one object per log", docResult{}, "when not", docFailure{}),
			"JSON result (--json), one object per log:\n  id          the id\n  size_bytes  its size\nwhen not:\n  error  why"},
		{"prose", jsonobject.Doc{Prose: "none: a server"}, "JSON result (--json): none: a server."},
	} {
		if got := tc.doc.Text(); got != tc.want {
			t.Errorf("%s: Text =\n%q\nwant\n%q", tc.name, got, tc.want)
		}
	}
}

// TestTypedShape: a type that writes itself is documented as the struct
// its JSONShape names; conditions stay with their types.
func TestTypedShape(t *testing.T) {
	d := jsonobject.Typed("", docWriter{}, "when not", &docFailure{})
	want := []jsonobject.Shape{{Type: reflect.TypeOf(docResult{})}, {When: "when not", Type: reflect.TypeOf(&docFailure{})}}
	if !reflect.DeepEqual(d.Shapes, want) {
		t.Errorf("Shapes = %v, want %v", d.Shapes, want)
	}
}
