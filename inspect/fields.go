package inspect

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// timeFields are the record fields that hold Unix seconds.
var timeFields = map[string]bool{"issued_at": true, "expires": true, "not_before": true, "not_after": true, "time": true, "until": true}

// newRecord decodes payload as a record of kind k and lists its fields.
// A record that breaks a field rule is listed with the rule in Invalid;
// bytes that are not a record of that kind are ErrMalformed.
func newRecord(k schemas.Kind, payload []byte, loc *time.Location) (*Record, error) {
	rec, err := schemas.Decode(k, payload)
	r := &Record{Kind: k}
	if fe := (*schemas.FieldError)(nil); errors.As(err, &fe) {
		r.Invalid = fe.Error()
		rec = schemas.New(k)
		err = schemas.Unmarshal(payload, rec)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: the %s record: %w", ErrMalformed, k, err)
	}
	r.rec = rec
	r.Fields = flatten(reflect.ValueOf(rec).Elem(), "", loc)
	return r, nil
}

// flatten lists the fields of struct v that are present (omitempty
// fields at their zero value are absent from the record), by their CBOR
// names, nested ones dotted.
func flatten(v reflect.Value, prefix string, loc *time.Location) []Field {
	var out []Field
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("cbor")
		name, opts, _ := strings.Cut(tag, ",")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		fv := v.Field(i)
		if strings.Contains(opts, "omitempty") && fv.IsZero() {
			continue
		}
		out = append(out, value(fv, prefix+name, name, loc)...)
	}
	return out
}

// value lists one field's value: a time with its forms, a raw key as its
// key id, other bytes by size and digest, a struct's fields, a list's
// items.
func value(v reflect.Value, path, name string, loc *time.Location) []Field {
	switch {
	case v.Kind() == reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return value(v.Elem(), path, name, loc)
	case v.Kind() == reflect.Struct:
		return flatten(v, path+".", loc)
	case v.Kind() == reflect.Int64 && timeFields[name]:
		s := v.Int()
		at := time.Unix(s, 0)
		tm := &Time{Unix: s, UTC: at.UTC().Format(time.RFC3339), Local: at.In(loc).Format(time.RFC3339)}
		return []Field{{Name: path, Value: tm.UTC, Time: tm}}
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8:
		return []Field{{Name: path, Value: bytesText(v.Bytes(), name)}}
	case v.Kind() == reflect.Slice:
		var out []Field
		if v.Type().Elem().Kind() == reflect.String {
			items := make([]string, v.Len())
			for i := range v.Len() {
				items[i] = text(v.Index(i).String())
			}
			return []Field{{Name: path, Value: strings.Join(items, ", ")}}
		}
		for i := range v.Len() {
			out = append(out, value(v.Index(i), fmt.Sprintf("%s[%d]", path, i), name, loc)...)
		}
		return out
	case v.Kind() == reflect.Map:
		var out []Field
		iter := v.MapRange()
		for iter.Next() {
			k := iter.Key().String()
			name := path + "." + k
			if text(k) != k || strings.ContainsAny(k, ".[]") {
				name = path + "[" + strconv.Quote(k) + "]" // never a control character in a name
			}
			out = append(out, Field{Name: name, Value: text(fmt.Sprint(iter.Value().Interface()))})
		}
		slices.SortFunc(out, func(a, b Field) int { return strings.Compare(a.Name, b.Name) })
		return out
	case v.Kind() == reflect.String:
		return []Field{{Name: path, Value: text(v.String())}}
	}
	return []Field{{Name: path, Value: fmt.Sprint(v.Interface())}}
}

// bytesText shows a raw Ed25519 key (a field named key or keys, 32
// bytes) as its key id, and any other bytes as their size and digest:
// never the bytes.
func bytesText(b []byte, name string) string {
	if name == "key" || name == "keys" {
		if k, err := sign.NewPublicKey(b); err == nil {
			return "key " + k.ID()
		}
	}
	return fmt.Sprintf("%d bytes, %s", len(b), schemas.SHA256Digest(b))
}

// text returns s as it is when every rune is printable and it has no
// leading or trailing space, else quoted (Go syntax), so that no record
// can write control characters to a terminal.
func text(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	if s == "" || strings.TrimSpace(s) != s {
		return strconv.Quote(s)
	}
	return s
}
