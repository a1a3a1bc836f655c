package token

import (
	"crypto/x509"
	"errors"
)

// MaxCAFile bounds a PEM bundle of TLS roots (writ token verify
// --ca-file), in bytes: a whole system bundle (Debian's
// ca-certificates.crt, 144 roots) is about 220 KB, and an internal
// provider's roots a few KB; 1 MiB holds four system bundles while a
// wrong path (a log, a device) is refused, not read whole.
const MaxCAFile = 1 << 20

// ErrNoCertificate: a PEM bundle given to Roots holds no certificate.
var ErrNoCertificate = errors.New("no PEM certificate in it")

// Roots returns the TLS roots a key fetch trusts: the system's (none when
// the system pool cannot be read), with the certificates of each PEM
// bundle in bundles added (an internal provider's roots; they open no
// address). A bundle holding no certificate is ErrNoCertificate.
func Roots(bundles ...[]byte) (*x509.CertPool, error) {
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	for _, pem := range bundles {
		if !roots.AppendCertsFromPEM(pem) {
			return nil, ErrNoCertificate
		}
	}
	return roots, nil
}
