package sign

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds on a PKCS#11 URI, so that a hostile or mistyped reference is
// refused before anything is loaded.
const (
	// MaxTokenURI is the longest PKCS#11 URI accepted, in bytes, before
	// percent-decoding.
	MaxTokenURI = 4096
	// MaxTokenLabel is the longest token label, in bytes: CK_TOKEN_INFO's
	// label field is 32 bytes (PKCS#11 v2.40 §3.2), so a longer label
	// could never match a token.
	MaxTokenLabel = 32
	// MaxObjectLabel is the longest object label (CKA_LABEL) accepted, in
	// bytes, after percent-decoding.
	MaxObjectLabel = 255
	// MaxObjectID is the longest object id (CKA_ID) accepted, in bytes,
	// after percent-decoding.
	MaxObjectID = 255
)

// TokenURI is a parsed PKCS#11 URI (RFC 7512) naming one Ed25519 key
// pair in one token. Token and at least one of Object and ID are always
// set; ModulePath and PINSource are absolute paths or "".
type TokenURI struct {
	Token      string // the token's label (path attribute "token"), at most MaxTokenLabel bytes
	Object     string // the key objects' CKA_LABEL (path attribute "object"); "" when not given
	ID         []byte // the key objects' CKA_ID (path attribute "id"); nil when not given
	ModulePath string // the PKCS#11 module (query attribute "module-path"); "" when not given
	PINSource  string // a file holding the user PIN (query attribute "pin-source"); "" when not given
}

// errPINValue refuses a URI with a PIN in it.
var errPINValue = fmt.Errorf("%w: pin-value is refused: a PIN never goes in a URI or a flag (it would be kept in shell history, process lists and logs); put it in a file readable only by you and give pin-source=/path/to/file, or leave it out to be asked on the terminal", ErrTokenURI)

// IsTokenURI reports whether ref names a key in a PKCS#11 token (it
// starts with "pkcs11:") rather than a key file.
func IsTokenURI(ref string) bool {
	// RFC 3986 §3.1: a scheme is case-insensitive; "PKCS11:" is a URI,
	// never a key file path (whose error would repeat it).
	return len(ref) >= len("pkcs11:") && strings.EqualFold(ref[:len("pkcs11:")], "pkcs11:")
}

// ParseTokenURI parses a PKCS#11 URI (RFC 7512 §2.3), strictly:
//
//	pkcs11:token=LABEL;object=LABEL;id=%01%02?module-path=/abs/lib.so&pin-source=file:/abs/pin
//
// Path attributes are "token" (required), "object" and "id" (at least
// one of them), separated by ';'; query attributes, after '?' and
// separated by '&', are "module-path" (an absolute path) and "pin-source"
// (a file: an absolute path, "file:/abs/path" or "file:///abs/path").
// Values are percent-decoded (RFC 3986 §2.1); a character outside the
// RFC's grammar must be percent-encoded. Token and object labels must be
// printable UTF-8. It refuses "pin-value" (a PIN is never written in a
// URI, where it ends in shell history, process lists and logs), any other
// attribute, an attribute given twice, an empty value, and a URI longer
// than MaxTokenURI. Errors wrap ErrTokenURI and never quote the URI.
func ParseTokenURI(s string) (*TokenURI, error) {
	if !IsTokenURI(s) {
		return nil, fmt.Errorf("%w: does not start with \"pkcs11:\"", ErrTokenURI)
	}
	if len(s) > MaxTokenURI {
		return nil, fmt.Errorf("%w: longer than %d bytes", ErrTokenURI, MaxTokenURI)
	}
	// A PIN in the URI is refused first, whatever else is wrong, so the
	// user learns why before anything else.
	s = "pkcs11:" + s[len("pkcs11:"):] // the scheme in its canonical case (RFC 3986 §3.1)
	for _, a := range strings.FieldsFunc(s[len("pkcs11:"):], func(r rune) bool { return r == ';' || r == '?' || r == '&' }) {
		if name, _, _ := strings.Cut(a, "="); strings.EqualFold(name, "pin-value") {
			return nil, errPINValue
		}
	}
	path, query, hasQuery := strings.Cut(strings.TrimPrefix(s, "pkcs11:"), "?")
	if strings.Contains(path, "#") || strings.Contains(query, "#") {
		return nil, fmt.Errorf("%w: a fragment ('#') is not part of a PKCS#11 URI", ErrTokenURI)
	}
	u := &TokenURI{}
	seen := map[string]bool{}
	if err := u.attrs(path, ";", false, seen); err != nil {
		return nil, err
	}
	if hasQuery {
		if query == "" {
			return nil, fmt.Errorf("%w: '?' with no query attribute after it", ErrTokenURI)
		}
		if err := u.attrs(query, "&", true, seen); err != nil {
			return nil, err
		}
	}
	if !seen["token"] {
		return nil, fmt.Errorf("%w: no token attribute: writ looks for a key in one token named by its label (token=LABEL), never in whichever token holds a matching object", ErrTokenURI)
	}
	if !seen["object"] && !seen["id"] {
		return nil, fmt.Errorf("%w: no object or id attribute: name the key (object=LABEL, or id=%%XX...)", ErrTokenURI)
	}
	return u, nil
}

// attrs parses one component's attributes (sep-separated) into u.
func (u *TokenURI) attrs(component, sep string, query bool, seen map[string]bool) error {
	if component == "" {
		return nil
	}
	for i, a := range strings.Split(component, sep) {
		name, raw, ok := strings.Cut(a, "=")
		if !ok || name == "" {
			// Not quoted: a stray word here could be a PIN.
			comp := "path"
			if query {
				comp = "query"
			}
			return fmt.Errorf("%w: %s attribute %d is not NAME=VALUE", ErrTokenURI, comp, i+1)
		}
		if strings.EqualFold(name, "pin-value") {
			return errPINValue
		}
		var where string
		switch name {
		case "token", "object", "id":
			where = "path"
		case "module-path", "pin-source":
			where = "query"
		default:
			return fmt.Errorf("%w: attribute %q is not one writ takes (token, object, id; ?module-path, pin-source)", ErrTokenURI, shorten(name))
		}
		if query != (where == "query") {
			return fmt.Errorf("%w: %s is a %s attribute (RFC 7512 §2.3)", ErrTokenURI, name, where)
		}
		if seen[name] {
			return fmt.Errorf("%w: attribute %s given twice", ErrTokenURI, name)
		}
		seen[name] = true
		v, err := pctDecode(raw, query)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrTokenURI, name, err)
		}
		if v == "" {
			return fmt.Errorf("%w: %s is empty", ErrTokenURI, name)
		}
		if err := u.set(name, v); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrTokenURI, name, err)
		}
	}
	return nil
}

// set checks one decoded, non-empty attribute value and stores it.
func (u *TokenURI) set(name, v string) error {
	switch name {
	case "token", "object":
		max := MaxTokenLabel
		if name == "object" {
			max = MaxObjectLabel
		}
		if len(v) > max {
			return fmt.Errorf("longer than %d bytes", max)
		}
		if !printable(v) {
			return errors.New("not printable UTF-8")
		}
		if name == "token" {
			u.Token = v
		} else {
			u.Object = v
		}
	case "id":
		if len(v) > MaxObjectID {
			return fmt.Errorf("longer than %d bytes", MaxObjectID)
		}
		u.ID = []byte(v)
	case "module-path":
		if !filepath.IsAbs(v) || !printable(v) {
			return errors.New("must be an absolute path (a bare library name would be searched for on the library path)")
		}
		u.ModulePath = v
	case "pin-source":
		p, err := pinSourcePath(v)
		if err != nil {
			return err
		}
		u.PINSource = p
	}
	return nil
}

// pinSourcePath reads a pin-source value as a file: an absolute path,
// "file:/abs/path" or "file:///abs/path" (RFC 8089). Anything else (a
// remote file URI, p11-kit's "|command", a relative path) is refused.
func pinSourcePath(v string) (string, error) {
	p := v
	switch {
	case strings.HasPrefix(v, "file:///"):
		p = strings.TrimPrefix(v, "file://")
	case strings.HasPrefix(v, "file://"):
		return "", errors.New("a file URI with a host is refused; give file:/abs/path")
	case strings.HasPrefix(v, "file:"):
		p = strings.TrimPrefix(v, "file:")
	}
	if !filepath.IsAbs(p) || !printable(p) {
		return "", errors.New("must be a file: an absolute path or file:/abs/path (writ runs no command for a PIN)")
	}
	return p, nil
}

// printable reports whether s is valid UTF-8 of printable characters.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// pctDecode decodes RFC 3986 percent-encoding, refusing any character
// that RFC 7512's grammar (pk11-pchar, or pk11-qchar in the query) does
// not allow unencoded.
func pctDecode(s string, query bool) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if i+2 >= len(s) || unhex(s[i+1]) < 0 || unhex(s[i+2]) < 0 {
				return "", errors.New("'%' not followed by two hex digits")
			}
			b.WriteByte(byte(unhex(s[i+1])<<4 | unhex(s[i+2])))
			i += 2
		case allowed(c, query):
			b.WriteByte(c)
		default:
			return "", fmt.Errorf("character %q must be percent-encoded", rune(c))
		}
	}
	return b.String(), nil
}

// allowed reports whether c may appear unencoded in a value: pk11-pchar
// in the path, pk11-qchar in the query (RFC 7512 §2.3).
func allowed(c byte, query bool) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	case strings.IndexByte("-._~:[]@!$'()*+,=", c) >= 0: // unreserved and pk11-res-avail
		return true
	case query:
		return strings.IndexByte("/?|", c) >= 0
	default:
		return c == '&'
	}
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// shorten keeps an attribute name quoted in an error short.
func shorten(s string) string {
	if len(s) > 32 {
		return s[:32] + "..."
	}
	return s
}

// String returns the URI in canonical form (attributes in the order
// token, object, id, module-path, pin-source; every byte outside
// RFC 3986's unreserved set percent-encoded, except '/' in the query's
// paths). It holds no PIN: a TokenURI never has one.
func (u *TokenURI) String() string {
	var b strings.Builder
	b.WriteString("pkcs11:token=")
	b.WriteString(pctEncode(u.Token, false))
	if u.Object != "" {
		b.WriteString(";object=" + pctEncode(u.Object, false))
	}
	if len(u.ID) > 0 {
		b.WriteString(";id=" + pctEncode(string(u.ID), false))
	}
	sep := "?"
	if u.ModulePath != "" {
		b.WriteString(sep + "module-path=" + pctEncode(u.ModulePath, true))
		sep = "&"
	}
	if u.PINSource != "" {
		b.WriteString(sep + "pin-source=" + pctEncode(u.PINSource, true))
	}
	return b.String()
}

// pctEncode percent-encodes every byte that is not unreserved (RFC 3986
// §2.3), keeping '/' when path is set.
func pctEncode(s string, path bool) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			strings.IndexByte("-._~", c) >= 0 || (path && c == '/') {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}
