package sign

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrNotKeyFile: the file given as a writ private key is not one (an
// age-armored file); the error says what it looks like instead.
var ErrNotKeyFile = errors.New("not a writ private key file")

// ageArmorHeader starts every writ private key file (GenerateKeyFiles).
const ageArmorHeader = "-----BEGIN AGE ENCRYPTED FILE-----"

// checkKeyFileKind reads at most 64 bytes of path, before its owner and
// mode are checked (so that a file that is no key at all is called what
// it is rather than given key advice), and returns an error wrapping
// ErrNotKeyFile that says what the file looks like (Describe) when it
// does not start as a writ key file does. A public key file is left to
// openSecretFile's ErrPublicKeyFile; a file that cannot be opened, to
// the read that follows.
func checkKeyFileKind(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	head := make([]byte, 64)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil
	}
	head = head[:n]
	t := bytes.TrimLeft(head, " \t\r\n")
	if bytes.HasPrefix(t, []byte(ageArmorHeader)) || bytes.HasPrefix(t, []byte("-----BEGIN PUBLIC KEY-----")) {
		return nil
	}
	return fmt.Errorf("%s: %w: this is %s; give the PREFIX.key file writ key generate wrote", path, ErrNotKeyFile, Describe(head))
}

// Describe says what a file whose first bytes are head looks like, in a
// few words, for an error naming a file given in the wrong place: an
// empty file, an executable, a signed writ record, a PEM block of its
// type, an unarmored age file, JSON, text or binary data. It never
// returns the bytes themselves, not even a text file's first line: a
// passphrase file given as a key must not reach a terminal or a CI log.
func Describe(head []byte) string {
	t := bytes.TrimLeft(head, " \t\r\n")
	switch {
	case len(head) == 0:
		return "an empty file"
	case len(t) == 0:
		return "a file of white space only"
	case bytes.HasPrefix(head, []byte("\x7fELF")), bytes.HasPrefix(head, []byte("MZ")), bytes.HasPrefix(head, []byte{0xcf, 0xfa, 0xed, 0xfe}):
		return "an executable"
	case bytes.HasPrefix(head, []byte("#!")):
		return "a script"
	case head[0] == 0xd2 || bytes.HasPrefix(head, []byte{0xd8, 0x12}):
		return "a signed writ record (a COSE_Sign1 envelope), not a key"
	case bytes.HasPrefix(t, []byte("-----BEGIN PRIVATE KEY-----")):
		return "an unencrypted PEM private key (writ's key files are age-encrypted: writ key generate)"
	case bytes.HasPrefix(t, []byte("-----BEGIN ")):
		typ, _, _ := bytes.Cut(t[len("-----BEGIN "):], []byte("-----"))
		return fmt.Sprintf("a PEM %s block", strconv.Quote(string(typ)))
	case bytes.HasPrefix(head, []byte("age-encryption.org/v1")):
		return "an age file that is not armored (writ key files are ASCII-armored)"
	case t[0] == '{' || t[0] == '[':
		return "a JSON document"
	case utf8.Valid(head) && !bytes.ContainsFunc(head, func(r rune) bool { return r < 0x20 && r != '\n' && r != '\r' && r != '\t' }):
		if bytes.HasPrefix(t, []byte("#")) {
			return "a text file beginning with a comment line"
		}
		return "a text file (a passphrase file? writ never prints its text)"
	}
	return "binary data"
}

// Readable reports whether a file whose first bytes are head is one
// that no control plane sends as a dispatch and people handle as files:
// empty, an executable or script, PEM, an age file, JSON or text (what
// Describe names anything but a signed writ record or binary data). A
// runner given such a file as a dispatch was given the wrong file (a
// passphrase file, a key), and records nothing of it.
func Readable(head []byte) bool {
	d := Describe(head)
	return d != "binary data" && !strings.HasPrefix(d, "a signed writ record")
}
