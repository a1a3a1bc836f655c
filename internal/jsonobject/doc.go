package jsonobject

import (
	"fmt"
	"reflect"
	"strings"
)

// Doc documents one command's JSON result: the struct types it prints
// (each shape, and when it prints it), or, for a result that has no type
// yet, prose.
type Doc struct {
	Note   string  // said first: how many objects, when ("" for one)
	Shapes []Shape // the struct types printed, the result first
	Prose  string  // the fields in prose, for a result without a type
}

// Shape is one struct type a result is printed as, and when.
type Shape struct {
	When string       // "" for the result, else the condition ("with --undo")
	Type reflect.Type // a struct type, or a pointer to one
}

// Typed is a result printed as the struct types of the examples: first
// always, then each later one under the condition before it (more is
// condition, example, condition, example...; a condition that is not a
// string panics). An example that writes itself (MarshalJSON) names the
// struct it writes with a JSONShape method, whose result stands for it.
func Typed(note string, first any, more ...any) Doc {
	typeOf := func(v any) reflect.Type {
		if s, ok := v.(interface{ JSONShape() any }); ok {
			v = s.JSONShape()
		}
		return reflect.TypeOf(v)
	}
	d := Doc{Note: note, Shapes: []Shape{{Type: typeOf(first)}}}
	for i := 0; i+1 < len(more); i += 2 {
		d.Shapes = append(d.Shapes, Shape{When: more[i].(string), Type: typeOf(more[i+1])})
	}
	return d
}

// Text is the documentation as --help shows it: "JSON result (--json)",
// the note, then each shape's fields (Fields), one a line, indented two
// spaces, names padded to the longest, each followed by its doc tag; a
// later shape after a line with its condition. A Doc with prose is
// "JSON result (--json): PROSE.".
func (d Doc) Text() string {
	if d.Prose != "" {
		return "JSON result (--json): " + d.Prose + "."
	}
	var b strings.Builder
	b.WriteString("JSON result (--json)")
	if d.Note != "" {
		b.WriteString(", " + d.Note)
	}
	b.WriteString(":")
	for _, s := range d.Shapes {
		if s.When != "" {
			b.WriteString("\n" + s.When + ":")
		}
		fs := Fields(s.Type)
		width := 0
		for _, f := range fs {
			width = max(width, len(f.Name))
		}
		for _, f := range fs {
			fmt.Fprintf(&b, "\n  %-*s  %s", width, f.Name, f.Doc)
		}
	}
	return b.String()
}
