package publish

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/witness"
	"golang.org/x/mod/sumdb/tlog"
)

// DefaultWitnessTimeout bounds how long a writer waits for each witness's
// cosignature (both requests, when a 409 makes it resend).
const DefaultWitnessTimeout = 5 * time.Second

// ErrWitnessAhead: a witness holds a larger checkpoint of this log than
// the log itself: the log was rolled back, or its key signed another
// history elsewhere. Never resolved by resending.
var ErrWitnessAhead = errors.New("a witness holds a larger checkpoint of this log than the log")

// ErrBadCosignature: a witness answered 200, but no line of its answer
// verifies as its cosignature/v1 under the key the policy gives it (a
// wrong key in the policy, or not the witness the URL should reach).
var ErrBadCosignature = errors.New("the witness's answer does not verify under its policy key")

// ErrWitnessTimeout: a time to wait for each witness that is not
// positive (Collectable).
var ErrWitnessTimeout = errors.New("the time to wait for a witness must be positive")

// ErrNoWitnessURL: a policy with no witness to ask (none has a URL) whose
// quorum is not "none", so no collection could ever meet it
// (Collectable).
var ErrNoWitnessURL = errors.New("no witness has a URL to ask for cosignatures")

// Collectable refuses what no call of CollectCosignatures could succeed
// with, whatever the witnesses answer: a timeout that is not positive
// (ErrWitnessTimeout), and a policy whose witnesses have no URL while its
// quorum is not "none" (ErrNoWitnessURL). A nil policy is collectable (it
// asks nothing). A writer calls it before it signs or appends anything, so
// that such a policy changes nothing stored.
func Collectable(p *formats.Policy, timeout time.Duration) error {
	if p == nil {
		return nil
	}
	if timeout <= 0 {
		return ErrWitnessTimeout
	}
	if len(p.SubmissionWitnesses()) == 0 && p.Quorum != "none" {
		return ErrNoWitnessURL
	}
	return nil
}

// WitnessResult is what one witness answered a writer (c2sp.org/tlog-witness
// add-checkpoint).
type WitnessResult struct {
	Name    string        `json:"name"`            // the policy's name for it
	URL     string        `json:"url"`             // its submission prefix
	Old     int64         `json:"old"`             // the old size of the last request
	Resent  bool          `json:"resent"`          // a 409 made the writer resend with the size it holds
	Elapsed time.Duration `json:"elapsed_ns"`      // wall time of its requests, nanoseconds
	Err     error         `json:"-"`               // nil when it cosigned
	Error   string        `json:"error,omitempty"` // Err, for reports
}

// Collected is the outcome of CollectCosignatures.
type Collected struct {
	// Signed is the latest checkpoint with every cosignature gathered so
	// far, as stored (CosignedCheckpoint).
	Signed []byte
	// Checkpoint is its body.
	Checkpoint formats.Checkpoint
	// Witnesses are the answers, in policy order.
	Witnesses []WitnessResult
	// Witnessing is the policy's judgement of Signed.
	Witnessing formats.Witnessing
}

// CollectCosignatures asks the policy's witnesses that have a URL, in
// parallel and each within timeout, to cosign the log's latest signed
// checkpoint (c2sp.org/tlog-witness add-checkpoint), with a consistency
// proof from the size of the checkpoint that was cosigned last, or, when
// a witness answers 409 with the size it holds, from that size, once. It
// keeps only the returned lines that verify as that witness's
// cosignature/v1 over this checkpoint, stores them with it
// (ledger.Log.AttachCosignatures) and judges the result by the policy at now.
//
// A witness that fails does not stop the others; its error is in
// Collected.Witnesses (a *witness.ResponseError, ErrWitnessAhead or
// ErrBadCosignature).
// Errors: a *formats.QuorumError (wrapping formats.ErrQuorum) when the
// quorum is not met — the cosignatures gathered are stored anyway;
// ledger.ErrHeadMoved when another append signed a newer checkpoint
// meanwhile (then Signed is the checkpoint the witnesses were asked
// about with the cosignatures they gave, not stored nor judged);
// formats.ErrPolicyLog for a log the policy does not list;
// ledger.ErrNoSigner for a log opened without its key.
func CollectCosignatures(ctx context.Context, l *ledger.Log, p *formats.Policy, c *witness.Client, timeout time.Duration, now func() time.Time) (Collected, error) {
	var res Collected
	vkey := l.Key()
	if err := p.CheckLog(vkey); err != nil {
		return res, err
	}
	head, err := l.Checkpoint()
	if err != nil {
		return res, err
	}
	cp, err := formats.OpenCheckpoint(head, vkey)
	if err != nil {
		return res, err
	}
	res.Checkpoint = cp
	// The old size to offer: that of the checkpoint cosignatures were
	// last attached to, which the witnesses then held. A witness that
	// holds another answers 409 with its size.
	hint := int64(0)
	if prev, err := l.LastCosigned(); err == nil {
		if pc, err := formats.OpenCheckpoint(prev, vkey); err == nil && pc.Size <= cp.Size {
			hint = pc.Size
		}
	}
	ws := p.SubmissionWitnesses()
	res.Witnesses = make([]WitnessResult, len(ws))
	lines := make([][]string, len(ws))
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			r := WitnessResult{Name: w.Name, URL: w.URL, Old: hint}
			wctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			lines[i], r.Err = askWitness(wctx, l, c, w, &r, head, cp)
			r.Elapsed = time.Since(start)
			if r.Err != nil {
				r.Error = r.Err.Error()
			}
			res.Witnesses[i] = r
		}()
	}
	wg.Wait()
	var all []string
	for _, ls := range lines {
		all = append(all, ls...)
	}
	if res.Signed, err = l.AttachCosignatures(head, all); errors.Is(err, ledger.ErrHeadMoved) {
		// A busy writer's head moves while the witnesses answer: what
		// they cosigned is still a checkpoint of the log, not stored.
		if signed, aerr := formats.AddSignatures(head, all); aerr == nil {
			res.Signed = signed
		}
		return res, err
	} else if err != nil {
		return res, err
	}
	res.Witnessing, err = p.Check(res.Signed, vkey, now())
	return res, err
}

// askWitness submits head to one witness and returns its verified
// cosignature lines.
func askWitness(ctx context.Context, l *ledger.Log, c *witness.Client, w formats.PolicyWitness, r *WitnessResult, head []byte, cp formats.Checkpoint) ([]string, error) {
	for attempt := 0; ; attempt++ {
		proof, err := witnessProof(l, r.Old, cp.Size)
		if err != nil {
			return nil, err
		}
		body, err := c.AddCheckpoint(ctx, w.URL, r.Old, proof, head)
		var ce *witness.ConflictError
		switch {
		case errors.As(err, &ce) && ce.Size > cp.Size:
			return nil, fmt.Errorf("%w: %s holds size %d, the log %d", ErrWitnessAhead, w.Name, ce.Size, cp.Size)
		case errors.As(err, &ce) && attempt == 0:
			r.Old, r.Resent = ce.Size, true
			continue
		case err != nil:
			return nil, err
		}
		lines, err := formats.SignatureLines(body)
		if err != nil {
			return nil, err
		}
		var ok []string
		for _, line := range lines {
			one, err := formats.AddSignatures(head, []string{line})
			sl, perr := formats.ParseSigLine(strings.TrimSuffix(line, "\n"))
			if err == nil && perr == nil && w.Verifier().Name() == sl.Name {
				if _, err := w.Verifier().Time(one); err == nil {
					ok = append(ok, line)
				}
			}
		}
		if len(ok) == 0 {
			return nil, fmt.Errorf("%w: %s answered 200 without a cosignature that verifies under %s", ErrBadCosignature, w.Name, w.VKey)
		}
		return ok, nil
	}
}

// witnessProof is the consistency proof from old to size (RFC 6962
// §2.1.2), empty when old is 0 or size.
func witnessProof(l *ledger.Log, old, size int64) (tlog.TreeProof, error) {
	if old == 0 || old == size {
		return nil, nil
	}
	p, err := l.ProveConsistency(old, size)
	if err != nil {
		return nil, err
	}
	return tlog.TreeProof(p.Path), nil
}
