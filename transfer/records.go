package transfer

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/writ-ledger/writ/schemas"
)

// NewDowngrade returns a downgrade record: runners may admit artifact at
// the lower version (as ParseVersion reads it) until expires, for reason.
// Errors: ParseVersion's, or the record's *schemas.FieldError.
func NewDowngrade(artifact, version, reason string, issuedAt, expires time.Time) (*schemas.Downgrade, error) {
	v, err := ParseVersion(version)
	if err != nil {
		return nil, err
	}
	rec := &schemas.Downgrade{V: schemas.SchemaVersion, Artifact: artifact, Version: v, Reason: reason,
		IssuedAt: issuedAt.Unix(), Expires: expires.Unix()}
	if err := rec.Validate(); err != nil {
		return nil, err
	}
	return rec, nil
}

// Provisions reads an instruction's provision list from values, each
// "SRC=.provision/NAME" as the --provision flag gives it: each source
// file is hashed (SHA-256) and sized here, and the list is sorted by
// destination (slash-separated). Errors name the flag: a value without
// '=' or with an empty source, a source that cannot be read (wrapping
// the read error), a destination named twice. The destination's own
// rule is the instruction record's (schemas), applied when it is built.
func Provisions(values []string) ([]schemas.Provision, error) {
	var out []schemas.Provision
	for _, v := range values {
		src, dest, ok := strings.Cut(v, "=")
		if !ok || src == "" {
			return nil, fmt.Errorf("--provision %q: want SRC=.provision/NAME", v)
		}
		d, n, err := DigestFile(src)
		if err != nil {
			return nil, fmt.Errorf("--provision %s: %w", src, err)
		}
		out = append(out, schemas.Provision{Dest: filepath.ToSlash(dest), Digest: d, Size: uint64(n)})
	}
	slices.SortFunc(out, func(a, b schemas.Provision) int { return strings.Compare(a.Dest, b.Dest) })
	for i := 1; i < len(out); i++ {
		if out[i].Dest == out[i-1].Dest {
			return nil, fmt.Errorf("--provision names %s twice", out[i].Dest)
		}
	}
	return out, nil
}

// Comparison is a digest computed here against one computed elsewhere
// (Compare, CompareReader), as `writ transfer verify` prints it under
// --json.
type Comparison struct {
	Match    bool   `json:"match" doc:"whether the digests are equal"`
	Expected string `json:"expected" doc:"the digest given"`
	Actual   string `json:"actual" doc:"the digest computed here"`
}

// CompareReader is Compare for a stream: r is hashed to its end as it
// is read, never held whole, with the algorithm expected names (which
// must already be well formed: see ParseDigest), and a mismatch is a
// *MismatchError whose Path is name. A read error is returned wrapped
// as "reading NAME: ...", with an empty digest.
func CompareReader(r io.Reader, name, expected string) (string, error) {
	alg, _, err := ParseDigest(expected)
	if err != nil {
		return "", err
	}
	actual, _, err := DigestReader(r, alg)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", name, err)
	}
	if actual != expected {
		return actual, &MismatchError{Path: name, Expected: expected, Actual: actual}
	}
	return actual, nil
}
