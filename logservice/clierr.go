package logservice

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/humanize"
	"github.com/writ-ledger/writ/ledger"
)

// CommandError returns an error of Client.Append as `writ ledger append
// --to` reports it, with the exit code and next acts a local append of
// the same files (names, in the order sent) has: a refusal keeps the
// service's code, rule and hints, and a refused record is named by its
// file; an unusable URL is bad usage (2); an answer that does not verify
// is a no (1) that says not to submit again before checking the log; no
// answer at all (the service down, or the connection lost: the records
// may be appended) is busy (4), with the advice to submit again.
func CommandError(err error, url string, names []string) error {
	var r *Refusal
	switch {
	case err == nil:
		return nil
	case errors.As(err, &r):
		named := &namedRefusal{msg: r.Err, r: r}
		if r.Record != nil && *r.Record >= 0 && *r.Record < len(names) {
			named.msg = "nothing appended: " + names[*r.Record] + ": " + r.Err
		}
		if r.RetryAfter > 0 && r.Exit == exitcode.Busy {
			named.msg += fmt.Sprintf(" (the service says retry after %ds)", r.RetryAfter)
		}
		// The hints come from the other end: one line each, marked as its.
		hints := make([]string, len(r.Hints))
		for i, h := range r.Hints {
			hints[i] = "the service says: " + humanize.OneLine(h)
		}
		return &exitcode.Error{Code: r.Exit, Err: named, Hints: hints}
	case errors.Is(err, ledger.ErrVKeyMismatch): // --vkey, its rule and next act (failure.TrustRefusal)
		return err
	case errors.Is(err, ErrServiceURL):
		return &exitcode.Error{Code: exitcode.Usage, Err: fmt.Errorf("--to: %w", err)}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &exitcode.Error{Code: exitcode.Busy, Err: fmt.Errorf("nothing appended: nothing listens at %s: %w", url, err),
			Hints: []string{"check that the service is running there (writ ledger serve --write prints its address), then retry"}}
	case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return &exitcode.Error{Code: exitcode.Usage, Err: fmt.Errorf("nothing appended: %s speaks plain HTTP: %w", url, err), Hints: []string{"give --to http://... (plain HTTP is for loopback only)"}}
	case tlsRefused(err) != "":
		return &exitcode.Error{Code: exitcode.Usage, Err: fmt.Errorf("nothing appended: %s: %w", url, err), Hints: []string{tlsRefused(err)}}
	case errors.Is(err, ErrAnswer):
		return exitcode.Refused(fmt.Errorf("%s: %w", url, err),
			"the records may be in the log: check it (writ ledger sync from the service) before submitting them again")
	}
	return &exitcode.Error{Code: exitcode.Busy, Err: fmt.Errorf("no answer from %s (the records may or may not be appended): %w", url, err),
		Hints: []string{"check that the service is running at " + url + ", then submit the same records again: one it already appended is refused as a duplicate, never appended twice"}}
}

// namedRefusal is a Refusal whose message names the refused record's
// file; its rule is the refusal's.
type namedRefusal struct {
	msg string
	r   *Refusal
}

func (n *namedRefusal) Error() string  { return n.msg }
func (n *namedRefusal) Unwrap() error  { return n.r }
func (n *namedRefusal) RuleID() string { return n.r.Rule }

// tlsRefused is the next act for a TLS handshake that failed on a
// certificate (the submission was never sent), "" for any other error.
func tlsRefused(err error) string {
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var verr *tls.CertificateVerificationError
	var alert tls.AlertError
	switch {
	case errors.As(err, &unknown) || errors.As(err, &host) || errors.As(err, &verr):
		return "the service's certificate does not verify here: trust its CA (SSL_CERT_FILE=FILE) or use the name it is for"
	case errors.As(err, &alert):
		return "the service refused this client in the TLS handshake (" + alert.Error() + "): give --client-cert and --client-key from a CA its --client-ca takes"
	}
	return ""
}
