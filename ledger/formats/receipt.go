package formats

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"

	"github.com/veraison/go-cose"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
	"golang.org/x/mod/sumdb/tlog"
)

// COSE Receipts (RFC 9942) header labels and values writ uses.
const (
	// HeaderVDS is the verifiable data structure label (RFC 9942 §3).
	HeaderVDS = 395
	// HeaderVDP is the verifiable data proofs label, in the unprotected
	// header.
	HeaderVDP = 396
	// VDSRFC9162 names the RFC 9162 SHA-256 Merkle tree (RFC 9942 §5).
	VDSRFC9162 = 1
	// ProofInclusion is the inclusion-proofs key inside the VDP map.
	ProofInclusion = -1
	// headerCWTClaims carries the issuer (the log origin), RFC 9597.
	headerCWTClaims = 15
	// HeaderCheckpoint (a private-use label, RFC 9052 §1.4: below -65536)
	// carries, in the unprotected header, the signed checkpoint
	// (c2sp.org/tlog-checkpoint) of the receipt's tree with the witness
	// cosignatures the log gathered for it (c2sp.org/tlog-cosignature), as
	// a byte string: a verifier with a witness policy checks the receipt
	// offline (ReceiptCheckpoint). RFC 9942 readers ignore it.
	HeaderCheckpoint = -65537
)

// ErrReceipt is wrapped by every receipt that is malformed or does not
// verify.
var ErrReceipt = errors.New("invalid receipt")

// inclusionProofCBOR is RFC 9942 §5.2's inclusion proof:
// [tree-size, leaf-index, inclusion-path].
type inclusionProofCBOR struct {
	_     struct{} `cbor:",toarray"`
	Size  int64
	Index int64
	Path  [][]byte
}

// SignReceipt returns an RFC 9942 COSE Receipt (a tagged COSE_Sign1 with
// a detached payload) for the inclusion proof p, signed by the log key
// key: the protected header names alg EdDSA (-8), key's kid, vds 1
// (RFC 9162 SHA-256, RFC 9942 §5) and origin as CWT issuer (RFC 9597);
// the unprotected header carries p as the one inclusion proof
// ([tree-size, leaf-index, inclusion-path], RFC 9942 §5.2); the signature
// covers p.RootHash, the Merkle root the proof leads to, which is then
// detached. It signs what it is given: the caller checks first that
// p.RootHash is a root the log signed (package ledger's Log.Receipt does).
// VerifyReceipt checks the result. Errors come from CBOR encoding and the
// signer.
func SignReceipt(p *InclusionProof, origin string, key *sign.PrivateKey) ([]byte, error) {
	return SignReceiptWith(p, origin, key, nil)
}

// SignReceiptWith is SignReceipt that also carries checkpoint, the signed
// checkpoint of p's tree with its witness cosignatures, under
// HeaderCheckpoint (nil: none). The caller checks that checkpoint is of
// p's tree size and root; the receipt's signature does not cover it (it
// carries its own signatures).
func SignReceiptWith(p *InclusionProof, origin string, key *sign.PrivateKey, checkpoint []byte) ([]byte, error) {
	var path [][]byte
	for _, h := range p.Path {
		path = append(path, bytes.Clone(h[:]))
	}
	proof, err := schemas.Marshal(inclusionProofCBOR{Size: p.TreeSize, Index: p.Index, Path: path})
	if err != nil {
		return nil, err
	}
	m := cose.NewSign1Message()
	m.Headers.Protected = cose.ProtectedHeader{
		cose.HeaderLabelAlgorithm: sign.AlgEdDSA,
		cose.HeaderLabelKeyID:     key.Public().IDBytes(),
		int64(HeaderVDS):          int64(VDSRFC9162),
		int64(headerCWTClaims):    map[any]any{int64(1): origin},
	}
	m.Headers.Unprotected = cose.UnprotectedHeader{
		int64(HeaderVDP): map[any]any{int64(ProofInclusion): []any{proof}},
	}
	if checkpoint != nil {
		m.Headers.Unprotected[int64(HeaderCheckpoint)] = bytes.Clone(checkpoint)
	}
	m.Payload = bytes.Clone(p.RootHash[:])
	if err := m.Sign(rand.Reader, nil, receiptSigner{key}); err != nil {
		return nil, err
	}
	m.Payload = nil // detached: the verifier recomputes the root
	return m.MarshalCBOR()
}

type receiptSigner struct{ k *sign.PrivateKey }

func (s receiptSigner) Algorithm() cose.Algorithm { return sign.AlgEdDSA }
func (s receiptSigner) Sign(_ io.Reader, content []byte) ([]byte, error) {
	return s.k.SignMessage(content)
}

// VerifyReceipt checks an RFC 9942 receipt for entry (the exact entry
// bytes) against the log key: vds must be 1, the unprotected header must
// carry exactly one inclusion proof, the root recomputed from SHA-256(0x00
// || entry) and that proof (RFC 9162 §2.1.3.2) is the detached payload,
// and the signature must verify under key with EdDSA (-8) or Ed25519
// (-19). A receipt is at most schemas.MaxRecordSize bytes of well-formed
// CBOR with an audit path of at most 64 hashes. It returns the proof,
// with its leaf and recomputed root hashes. Errors wrap ErrReceipt.
func VerifyReceipt(receipt, entry []byte, key sign.PublicKey) (*InclusionProof, error) {
	m, p, err := parseReceipt(receipt)
	if err != nil {
		return nil, err
	}
	p.LeafHash = tlog.RecordHash(entry)
	root, err := rootFromInclusion(p)
	if err != nil {
		return nil, err
	}
	p.RootHash = root
	alg, err := m.Headers.Protected.Algorithm()
	if err != nil || (alg != sign.AlgEdDSA && alg != sign.AlgEd25519) {
		return nil, fmt.Errorf("%w: alg must be EdDSA (-8) or Ed25519 (-19)", ErrReceipt)
	}
	m.Payload = root[:]
	if err := m.Verify(nil, receiptVerifier{key, alg}); err != nil {
		return nil, fmt.Errorf("%w: it does not verify for this entry under the log's key (key id %s): the entry bytes are not the ones the receipt is for, or the receipt is not by this log", ErrReceipt, key.ID())
	}
	return p, nil
}

// ReceiptCheckpoint returns the signed checkpoint a receipt carries under
// HeaderCheckpoint, checked to verify under the log key k and to be of the tree
// the receipt's proof p leads to (VerifyReceipt's result: its size and
// root), or nil when it carries none. Its witness cosignatures are the
// caller's to judge (Policy.Check). Errors wrap ErrReceipt.
func ReceiptCheckpoint(receipt []byte, p *InclusionProof, k *LogKey) ([]byte, error) {
	m, _, err := parseReceipt(receipt)
	if err != nil {
		return nil, err
	}
	v, ok := m.Headers.Unprotected[int64(HeaderCheckpoint)]
	if !ok {
		return nil, nil
	}
	cp, ok := v.([]byte)
	if !ok || len(cp) > MaxCheckpointSize {
		return nil, fmt.Errorf("%w: the checkpoint (label %d) must be a byte string of at most %d bytes", ErrReceipt, HeaderCheckpoint, MaxCheckpointSize)
	}
	c, err := OpenCheckpoint(cp, k)
	if err != nil {
		return nil, fmt.Errorf("%w: its checkpoint: %w", ErrReceipt, err)
	}
	if c.Size != p.TreeSize || c.Hash != p.RootHash {
		return nil, fmt.Errorf("%w: its checkpoint (size %d) is not of the proof's tree (size %d)", ErrReceipt, c.Size, p.TreeSize)
	}
	return cp, nil
}

// ReceiptPosition returns the entry index and tree size a receipt states,
// as received: RFC 9942 does not sign them, and nothing here is verified
// but the receipt's structure. A caller uses them to say which entry a
// receipt that does not verify claims to be for. Errors wrap ErrReceipt.
func ReceiptPosition(receipt []byte) (index, treeSize int64, err error) {
	_, p, err := parseReceipt(receipt)
	if err != nil {
		return 0, 0, err
	}
	return p.Index, p.TreeSize, nil
}

// ReceiptKeyID returns the key id (kid, 32 bytes: sign.PublicKey.IDBytes)
// a receipt's protected header names, as received: a receipt's signature
// covers it, but nothing here is verified. A caller uses it to tell a
// receipt by another key from one that does not verify under this key.
// Errors wrap ErrReceipt.
func ReceiptKeyID(receipt []byte) ([]byte, error) {
	m, _, err := parseReceipt(receipt)
	if err != nil {
		return nil, err
	}
	kid, ok := m.Headers.Protected[cose.HeaderLabelKeyID].([]byte)
	if !ok {
		return nil, fmt.Errorf("%w: no protected kid", ErrReceipt)
	}
	return kid, nil
}

// parseReceipt reads a receipt's structure and its one inclusion proof
// (index, tree size, path), without any cryptography.
func parseReceipt(receipt []byte) (*cose.Sign1Message, *InclusionProof, error) {
	if len(receipt) > schemas.MaxRecordSize {
		return nil, nil, fmt.Errorf("%w: larger than %d bytes", ErrReceipt, schemas.MaxRecordSize)
	}
	if err := schemas.CheckWellFormed(receipt); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrReceipt, err)
	}
	m := new(cose.Sign1Message)
	if err := m.UnmarshalCBOR(receipt); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrReceipt, err)
	}
	if m.Payload != nil {
		return nil, nil, fmt.Errorf("%w: the payload must be detached", ErrReceipt)
	}
	if vds, ok := m.Headers.Protected[int64(HeaderVDS)].(int64); !ok || vds != VDSRFC9162 {
		return nil, nil, fmt.Errorf("%w: protected vds (395) must be %d (RFC 9162 SHA-256)", ErrReceipt, VDSRFC9162)
	}
	vdp, ok := m.Headers.Unprotected[int64(HeaderVDP)].(map[any]any)
	if !ok || len(vdp) != 1 {
		return nil, nil, fmt.Errorf("%w: unprotected vdp (396) must hold only inclusion proofs", ErrReceipt)
	}
	proofs, ok := vdp[int64(ProofInclusion)].([]any)
	if !ok || len(proofs) != 1 {
		return nil, nil, fmt.Errorf("%w: exactly one inclusion proof is required", ErrReceipt)
	}
	raw, ok := proofs[0].([]byte)
	if !ok {
		return nil, nil, fmt.Errorf("%w: the inclusion proof must be a byte string", ErrReceipt)
	}
	var ip inclusionProofCBOR
	if err := schemas.Unmarshal(raw, &ip); err != nil {
		return nil, nil, fmt.Errorf("%w: inclusion proof: %w", ErrReceipt, err)
	}
	if len(ip.Path) > 64 {
		return nil, nil, fmt.Errorf("%w: an audit path of %d hashes", ErrReceipt, len(ip.Path))
	}
	p := &InclusionProof{Index: ip.Index, TreeSize: ip.Size}
	for _, h := range ip.Path {
		if len(h) != tlog.HashSize {
			return nil, nil, fmt.Errorf("%w: a path hash is %d bytes", ErrReceipt, len(h))
		}
		p.Path = append(p.Path, tlog.Hash(h))
	}
	return m, p, nil
}

type receiptVerifier struct {
	k   sign.PublicKey
	alg cose.Algorithm
}

func (v receiptVerifier) Algorithm() cose.Algorithm        { return v.alg }
func (v receiptVerifier) Verify(content, sig []byte) error { return v.k.Verify(content, sig) }

// rootFromInclusion recomputes the root from a leaf hash and its audit
// path (RFC 9162 §2.1.3.2).
func rootFromInclusion(p *InclusionProof) (tlog.Hash, error) {
	if p.Index < 0 || p.Index >= p.TreeSize {
		return tlog.Hash{}, fmt.Errorf("%w: leaf index %d outside tree size %d", ErrReceipt, p.Index, p.TreeSize)
	}
	fn, sn := uint64(p.Index), uint64(p.TreeSize-1)
	r := p.LeafHash
	for _, h := range p.Path {
		if sn == 0 {
			return tlog.Hash{}, fmt.Errorf("%w: the audit path is too long", ErrReceipt)
		}
		if fn&1 == 1 || fn == sn {
			r = tlog.NodeHash(h, r)
			for fn&1 == 0 && fn != 0 {
				fn >>= 1
				sn >>= 1
			}
		} else {
			r = tlog.NodeHash(r, h)
		}
		fn >>= 1
		sn >>= 1
	}
	if sn != 0 {
		return tlog.Hash{}, fmt.Errorf("%w: the audit path is too short", ErrReceipt)
	}
	return r, nil
}
