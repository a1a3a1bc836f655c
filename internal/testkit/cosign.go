package testkit

import (
	"errors"
	"testing"
)

// CosignModule is the cosign release the interop tests run (go install
// CosignModule): a real producer of in-toto attestations, as DSSE
// envelopes and Sigstore bundles.
const CosignModule = "github.com/sigstore/cosign/v3/cmd/cosign@v3.1.3"

// RequireCosignEnv is the environment variable that, set to "1", makes
// Cosign fail the test instead of skipping it when cosign is not
// installed. CI sets it.
const RequireCosignEnv = "WRIT_REQUIRE_COSIGN"

var errNoCosign = errors.New("cosign is not installed (go install " + CosignModule + ")")

// Cosign returns the path of the cosign binary (on PATH, in $GOBIN or in
// $GOPATH/bin). Without it the test is skipped, or fails when
// RequireCosignEnv is "1".
func Cosign(t testing.TB) string {
	t.Helper()
	p := goBinary("cosign")
	if p == "" {
		requireOrSkip(t, errNoCosign, errNoCosign, RequireCosignEnv)
	}
	return p
}
