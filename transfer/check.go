package transfer

import (
	"errors"
	"io"
)

// Check compares received content with expected, a digest computed
// elsewhere (`writ transfer verify`): the file at path, or stdin read as
// a stream when path is "-" (CompareReader, named "stdin"), hashed with
// the algorithm expected names. The Comparison is filled on a match and
// on a mismatch (Match false, with the *MismatchError wrapping
// ErrDigestMismatch); on any other error (a malformed expected digest,
// wrapping ErrDigestSyntax; a file or stream that does not read) it is
// zero.
func Check(stdin io.Reader, path, expected string) (Comparison, error) {
	var actual string
	var err error
	if path == "-" {
		actual, err = CompareReader(stdin, "stdin", expected) // hashed as it streams
	} else {
		actual, err = Compare(path, expected)
	}
	var mm *MismatchError
	switch {
	case errors.As(err, &mm):
		return Comparison{Match: false, Expected: mm.Expected, Actual: mm.Actual}, err
	case err != nil:
		return Comparison{}, err
	}
	return Comparison{Match: true, Expected: expected, Actual: actual}, nil
}
