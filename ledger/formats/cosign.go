package formats

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/writ-ledger/writ/sign"
	"golang.org/x/mod/sumdb/note"
)

// A log signs each checkpoint twice with its key: the signed-note
// signature the checkpoint needs, and a C2SP tlog-cosignature
// (c2sp.org/tlog-cosignature, cosignature/v1) over the same body, which
// carries the time of signing. That time is what lets a runner refuse a
// frozen ledger: one whose newest checkpoint is older than it accepts.

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

// cosigner is a note.Signer producing cosignature/v1 signatures at a
// fixed time.
type cosigner struct {
	name string
	key  *sign.PrivateKey
	at   time.Time
}

// NewCosigner returns a note.Signer producing cosignature/v1 signatures
// (c2sp.org/tlog-cosignature) with key under the key name name, all
// timestamped at (truncated to whole Unix seconds; at must not be before
// 1970). Its key hash is the first 4 bytes of SHA-256(name || "\n" || 0x04
// || public key); each signature is the 8-byte big-endian time followed by
// the 64-byte Ed25519 signature of "cosignature/v1\ntime <t>\n" and the
// note text. Signed beside the NewNoteSigner signature on a checkpoint, it
// is what CheckpointTime and OpenTimedCheckpoint read.
func NewCosigner(name string, key *sign.PrivateKey, at time.Time) note.Signer {
	return &cosigner{name: name, key: key, at: at}
}

func (c *cosigner) Name() string    { return c.name }
func (c *cosigner) KeyHash() uint32 { return cosignHash(c.name, c.key.Public()) }
func (c *cosigner) Sign(msg []byte) ([]byte, error) {
	t := uint64(c.at.Unix())
	sig, err := c.key.SignMessage(cosignMessage(t, msg))
	if err != nil {
		return nil, err
	}
	out := binary.BigEndian.AppendUint64(nil, t)
	return append(out, sig...), nil
}

// CheckpointTime returns the time at which the log's key signed this
// checkpoint, from its cosignature/v1 line (c2sp.org/tlog-cosignature),
// verified under the log key k, to the second. It returns ErrNoTime if
// there is none that verifies. It does not verify the checkpoint itself;
// see OpenCheckpoint.
func CheckpointTime(signed []byte, k *LogKey) (time.Time, error) {
	return k.Cosig().Time(signed)
}

// TimedCheckpoint is a checkpoint with the time its signer attests in
// its cosignature/v1 line (Unix seconds), and the signed note as stored.
type TimedCheckpoint struct {
	Checkpoint
	Time   time.Time
	Signed []byte
}

// OpenTimedCheckpoint verifies the timestamped cosignature/v1 signature
// (c2sp.org/tlog-cosignature) by the log key k on a signed checkpoint of
// at most MaxCheckpointSize bytes, and parses its body strictly
// (ParseCheckpoint), whose origin must be k's name. The cosignature
// covers the body and the time, so it alone proves what the log key said
// and when. Errors wrap ErrNoTime (no cosignature by that key verifies)
// or ErrMalformedCheckpoint.
func OpenTimedCheckpoint(signed []byte, k *LogKey) (TimedCheckpoint, error) {
	return k.Cosig().Open(signed)
}

// CosigVerifier checks cosignature/v1 lines (c2sp.org/tlog-cosignature)
// by one key, parsed and checked once: a log's (LogKey.Cosig; a log's
// history holds a checkpoint per batch, each opened under the same key)
// or a witness's (NewCosignerVerifier).
type CosigVerifier struct {
	name string
	key  sign.PublicKey
	hash uint32
}

// Time returns the signed time (whole Unix seconds) of the cosignature/v1
// lines by the key that verify over the checkpoint's body, the latest
// when there are several, or ErrNoTime. It is CheckpointTime under an
// already parsed key.
func (v *CosigVerifier) Time(signed []byte) (time.Time, error) {
	t, _, err := v.TimeAtMost(signed, time.Unix(1<<62, 0))
	return t, err
}

// TimeAtMost is Time counting only cosignatures dated at most limit: it
// returns the latest such time, or ErrNoTime with future set to the
// earliest valid cosignature dated after limit (zero if there is none).
// A witness's valid cosignature is not hidden by a later, future-dated
// one.
func (v *CosigVerifier) TimeAtMost(signed []byte, limit time.Time) (t, future time.Time, err error) {
	body, sigs, ok := bytes.Cut(signed, []byte("\n\n"))
	if !ok {
		return time.Time{}, time.Time{}, fmt.Errorf("%w: no signature block", ErrNoTime)
	}
	body = append(body, '\n')
	found := false
	for _, line := range strings.Split(string(sigs), "\n") {
		at, ok := v.lineTime(line, body)
		switch {
		case !ok:
		case at.After(limit):
			if future.IsZero() || at.Before(future) {
				future = at
			}
		case !found || at.After(t):
			t, found = at, true
		}
	}
	if !found {
		return time.Time{}, future, ErrNoTime
	}
	return t, time.Time{}, nil
}

// lineTime returns the time of one signature line if it is a valid
// cosignature/v1 by the key over body.
func (v *CosigVerifier) lineTime(line string, body []byte) (time.Time, bool) {
	sl, err := ParseSigLine(line)
	if err != nil || sl.Name != v.name || sl.Hash != v.hash || len(sl.Sig) != 8+64 {
		return time.Time{}, false
	}
	t := binary.BigEndian.Uint64(sl.Sig[:8])
	if t > 1<<62 || v.key.Verify(cosignMessage(t, body), sl.Sig[8:]) != nil {
		return time.Time{}, false
	}
	return time.Unix(int64(t), 0), true
}

// Open is OpenTimedCheckpoint under an already parsed key: errors wrap
// ErrNoTime or ErrMalformedCheckpoint. The returned Signed is a copy.
func (v *CosigVerifier) Open(signed []byte) (TimedCheckpoint, error) {
	if len(signed) > MaxCheckpointSize {
		return TimedCheckpoint{}, fmt.Errorf("%w: %d bytes, limit %d", ErrMalformedCheckpoint, len(signed), MaxCheckpointSize)
	}
	t, err := v.Time(signed)
	if err != nil {
		return TimedCheckpoint{}, err
	}
	body, _, _ := bytes.Cut(signed, []byte("\n\n"))
	c, err := ParseCheckpoint(string(body) + "\n")
	if err != nil {
		return TimedCheckpoint{}, err
	}
	if c.Origin != v.name {
		return TimedCheckpoint{}, fmt.Errorf("%w: origin %q is not the verifier key's name", ErrMalformedCheckpoint, c.Origin)
	}
	return TimedCheckpoint{Checkpoint: c, Time: t, Signed: bytes.Clone(signed)}, nil
}
