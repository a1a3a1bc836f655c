// Package jsonobject writes a struct as one JSON object whose top-level
// keys are sorted, as encoding/json writes a map: the bytes writ's
// results and the admission protocol printed before they had types.
// It imports nothing of writ.
package jsonobject

import (
	"bytes"
	"encoding/json"
	"errors"
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
