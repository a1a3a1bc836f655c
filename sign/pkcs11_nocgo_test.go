//go:build !cgo

package sign_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/sign"
)

// TestPKCS11NoCgo: a writ built without cgo parses token URIs as any
// writ does, and says why it cannot use them.
func TestPKCS11NoCgo(t *testing.T) {
	const ref = "pkcs11:token=t;object=o"
	_, err := sign.LoadKey(ref, sign.KeyOptions{})
	if !errors.Is(err, sign.ErrTokenModule) || !strings.HasPrefix(err.Error(), ref+": ") || !strings.Contains(err.Error(), "built without cgo") {
		t.Fatalf("LoadKey: %v", err)
	}
	if _, err := sign.GenerateTokenKey(ref, sign.KeyOptions{}); !errors.Is(err, sign.ErrTokenModule) {
		t.Fatalf("GenerateTokenKey: %v", err)
	}
	if _, err := sign.LoadKey(ref+";pin-value=1234", sign.KeyOptions{}); !errors.Is(err, sign.ErrTokenURI) {
		t.Fatalf("pin-value: %v", err)
	}
}
