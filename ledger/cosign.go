package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/writ-ledger/writ/sign"
)

// A log signs each checkpoint twice with its key: the signed-note
// signature the checkpoint needs, and a C2SP tlog-cosignature
// (cosignature/v1) over the same body, which carries the time of signing.
// That time is what lets a runner refuse a frozen ledger: one whose newest
// checkpoint is older than it accepts.

// ErrNoTime: the checkpoint carries no valid timestamped cosignature by
// the log's key.
var ErrNoTime = errors.New("checkpoint carries no signed time")

// cosignHash is the key hash of a cosignature/v1 key: the first 4 bytes
// of SHA-256(name || "\n" || 0x04 || public key), big-endian.
func cosignHash(name string, k sign.PublicKey) uint32 {
	h := sha256.New()
	h.Write([]byte(name + "\n"))
	h.Write([]byte{0x04})
	h.Write(k.Raw())
	return binary.BigEndian.Uint32(h.Sum(nil))
}

// cosignMessage is what a cosignature/v1 signs: a header, the time, and
// the checkpoint body.
func cosignMessage(t uint64, body []byte) []byte {
	return append([]byte("cosignature/v1\ntime "+strconv.FormatUint(t, 10)+"\n"), body...)
}

// cosigner is a note.Signer producing cosignature/v1 signatures: the
// signature bytes are the 8-byte big-endian time followed by the 64-byte
// Ed25519 signature.
type cosigner struct {
	name string
	key  *sign.PrivateKey
	now  func() time.Time
}

func (c *cosigner) Name() string    { return c.name }
func (c *cosigner) KeyHash() uint32 { return cosignHash(c.name, c.key.Public()) }
func (c *cosigner) Sign(msg []byte) ([]byte, error) {
	t := uint64(c.now().Unix())
	sig, err := c.key.SignMessage(cosignMessage(t, msg))
	if err != nil {
		return nil, err
	}
	out := binary.BigEndian.AppendUint64(nil, t)
	return append(out, sig...), nil
}

// CheckpointTime returns the time at which the log's key signed this
// checkpoint, from its cosignature/v1 line, verified under the Ed25519 key
// of vkey. It returns ErrNoTime if there is none that verifies. It does
// not verify the checkpoint itself; see OpenCheckpoint.
func CheckpointTime(signed []byte, vkey string) (time.Time, error) {
	v, err := newCosigVerifier(vkey)
	if err != nil {
		return time.Time{}, err
	}
	return v.time(signed)
}

// cosigVerifier checks cosignature/v1 lines by one log key, parsed and
// checked once (a log's history holds a checkpoint per batch).
type cosigVerifier struct {
	name string
	key  sign.PublicKey
	hash uint32
}

func newCosigVerifier(vkey string) (*cosigVerifier, error) {
	key, err := VerifierPublicKey(vkey)
	if err != nil {
		return nil, err
	}
	name := strings.SplitN(vkey, "+", 2)[0]
	return &cosigVerifier{name: name, key: key, hash: cosignHash(name, key)}, nil
}

// time returns the signed time of the first cosignature/v1 line by the
// key that verifies over the checkpoint's body, or ErrNoTime.
func (v *cosigVerifier) time(signed []byte) (time.Time, error) {
	body, sigs, ok := bytes.Cut(signed, []byte("\n\n"))
	if !ok {
		return time.Time{}, fmt.Errorf("%w: no signature block", ErrNoTime)
	}
	body = append(body, '\n')
	for _, line := range strings.Split(string(sigs), "\n") {
		rest, ok := strings.CutPrefix(line, "\u2014 "+v.name+" ")
		if !ok {
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(rest)
		if err != nil || len(raw) != 4+8+64 || binary.BigEndian.Uint32(raw) != v.hash {
			continue
		}
		t := binary.BigEndian.Uint64(raw[4:12])
		if v.key.Verify(cosignMessage(t, body), raw[12:]) == nil && t <= 1<<62 {
			return time.Unix(int64(t), 0), nil
		}
	}
	return time.Time{}, ErrNoTime
}
