// Package jsonobject writes a struct as one JSON object whose keys are
// sorted, as encoding/json writes a map: the bytes writ's results and the
// admission protocol printed before they had types; and lists a struct's
// JSON fields with their doc tags, the documentation of a typed result
// (Doc: its --help text).
// It imports nothing of writ.
package jsonobject

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
)

// Sorted is v, which must encode as a JSON object, with its top-level
// keys sorted as encoding/json sorts a map's; nested values keep their
// bytes (a struct's fields in declaration order). Nothing is
// HTML-escaped: an encoder that writes the result escapes as it is told.
// It returns v's encoding error, or one saying v is not an object.
func Sorted(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(buf.Bytes(), []byte("{")) {
		return nil, errors.New("jsonobject: not a JSON object")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &obj); err != nil {
		return nil, err
	}
	buf.Reset()
	if err := enc.Encode(obj); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// SortedAll is the JSON value b with the keys of every object in it
// sorted, numbers kept as written, nothing HTML-escaped. It returns the
// error of decoding b.
func SortedAll(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Field is one field of a struct's JSON object: its name and the text
// of its doc tag ("" when it has none).
type Field struct{ Name, Doc string }

// Fields lists the JSON fields of struct type t (or a pointer to one) as
// encoding/json writes them, in its order: an embedded struct's fields in
// its place, fields tagged "-" and unexported ones left out. It panics
// when t is not a struct.
func Fields(t reflect.Type) []Field {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var fs []Field
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if tag == "-" {
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case f.Anonymous && name == "" && ft.Kind() == reflect.Struct:
			fs = append(fs, Fields(ft)...)
		case !f.IsExported():
		case name == "":
			fs = append(fs, Field{f.Name, f.Tag.Get("doc")})
		default:
			fs = append(fs, Field{name, f.Tag.Get("doc")})
		}
	}
	return fs
}
