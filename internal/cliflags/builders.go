package cliflags

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/fileio"
	"github.com/writ-ledger/writ/provenance"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// DelegateBuilder is writ delegate's --builder flag.
var DelegateBuilder = &cli.StringSliceFlag{Name: "builder", Usage: "with pin or instruct: a builder the delegate's pins, or the pins of the binaries its instructions run, must carry provenance from " +
	"(repeat; none: provenance not demanded): `ID=KEY`, its builder id and the public key that signs its provenance (a PEM file, " +
	"or its digest sha256:HEX as writ pin --json prints it), or 'ID=ROOT ISSUER IDENTITY source=REPO' for keyless Sigstore bundles: " +
	"a trusted root file (or its digest), the OIDC issuer and subject its signing certificate must name, and the repository " +
	"(HOST/OWNER/REPO) the provenance must name; ' source=REPO' may end a key's too"}

// Builders reads DelegateBuilder's values: each "ID=KEY", or "ID=ROOT
// ISSUER IDENTITY", optionally ending " source=REPO" (required after a
// ROOT; REPO as HOST/OWNER/REPO or a URL, schemas.RepoPath), fields
// apart by one space (none of them holds one).
// ID=KEY is split at the last '='; KEY is a PEM public key file
// (provenance.KeyDigest), ROOT a Sigstore trusted root file (the SHA-256
// of its bytes), either one also as its digest ("sha256:" and 64
// lowercase hex digits). Errors: bad usage for a value of another shape;
// bad input for a file that cannot be read or a key that is not one.
func Builders(c *cli.Context) ([]schemas.Builder, error) {
	var out []schemas.Builder
	for _, v := range c.StringSlice("builder") {
		fields := strings.Split(v, " ")
		source := ""
		if last := fields[len(fields)-1]; len(fields) > 1 && strings.HasPrefix(last, "source=") {
			fields, source = fields[:len(fields)-1], strings.TrimPrefix(last, "source=")
			if !strings.Contains(source, "://") {
				source = "https://" + source
			}
			if source = schemas.RepoPath(source); source == "" {
				return nil, exitcode.Usagef("--builder %q: source=REPO, a repository as HOST/OWNER/REPO", v)
			}
		}
		i := strings.LastIndex(fields[0], "=")
		if i <= 0 || i == len(fields[0])-1 || (len(fields) != 1 && len(fields) != 3) {
			return nil, exitcode.Usagef("--builder %q: ID=KEY (a PEM public key, or sha256:HEX), or 'ID=ROOT ISSUER IDENTITY source=REPO' (a Sigstore trusted root, or sha256:HEX, the certificate's OIDC issuer and subject, and the repository)", v)
		}
		b := schemas.Builder{ID: fields[0][:i], Key: fields[0][i+1:], Source: source}
		if len(fields) == 3 {
			b.Issuer, b.Identity = fields[1], fields[2]
		}
		if !strings.HasPrefix(b.Key, "sha256:") {
			data, err := fileio.ReadWhole(c.App.Reader, b.Key, provenance.MaxTrustedRootSize)
			if err == nil && b.Issuer != "" {
				b.Key = schemas.SHA256Digest(data)
			} else if err == nil {
				b.Key, err = provenance.KeyDigest(data)
			}
			if err != nil {
				return nil, exitcode.Input(fmt.Errorf("--builder %s: %w", v, err))
			}
		}
		out = append(out, b)
	}
	return out, nil
}

// DelegationParams reads writ delegate's flags as the delegation they
// describe, its times relative to now: --to (a writ public key file),
// --action, --stream, --machine, --artifact, --builder (Builders),
// --not-before, --not-after, --depth. Errors: bad usage for a time or a
// builder; bad input for a key file.
func DelegationParams(c *cli.Context, now time.Time) (delegation.DelegationParams, error) {
	var p delegation.DelegationParams
	nb, err := ParseTime("not-before", c.String("not-before"), now)
	if err != nil {
		return p, err
	}
	na, err := ParseTime("not-after", c.String("not-after"), now)
	if err != nil {
		return p, err
	}
	to, err := sign.LoadPublicKey(c.String("to"))
	if err != nil {
		return p, exitcode.Input(err)
	}
	builders, err := Builders(c)
	if err != nil {
		return p, err
	}
	return delegation.DelegationParams{To: to, Actions: delegation.Actions(CommaList(c.StringSlice("action"))),
		Streams: c.StringSlice("stream"), Machines: c.StringSlice("machine"), Artifacts: c.StringSlice("artifact"), Builders: builders,
		NotBefore: nb, NotAfter: na, Depth: c.Int("depth"), IssuedAt: now}, nil
}

// RunnerBinaries checks the binaries a runner is told it runs
// (--agent-binary, and --engine-binary when given) before anything is
// judged or recorded: each exists and is a regular file. A mistyped path
// is the operator's mistake, not a dispatch to refuse: it is bad usage
// (exit 2), and no decision is recorded. Errors: bad usage naming the
// flag, the path and what is there instead.
func RunnerBinaries(c *cli.Context) error {
	for _, flag := range []string{"agent-binary", "engine-binary"} {
		path := c.String(flag)
		if path == "" {
			continue
		}
		fi, err := os.Stat(path)
		switch {
		case err != nil:
			return exitcode.Usagef("--%s %s: %v; nothing was recorded (give the path of the binary this runner runs)", flag, path, errors.Unwrap(err))
		case fi.IsDir():
			return exitcode.Usagef("--%s %s: not a regular file (a directory); nothing was recorded (give the path of the binary this runner runs)", flag, path)
		case !fi.Mode().IsRegular():
			return exitcode.Usagef("--%s %s: not a regular file (mode %s); nothing was recorded (give the path of the binary this runner runs)", flag, path, fi.Mode().Type())
		}
	}
	return nil
}

// Dispatch refuses, before anything is judged or recorded, a dispatch
// file that is not one: text, PEM, JSON, an age file, a program or
// nothing at all (sign.Readable), which a runner is handed by mistake (a
// passphrase file, a key, the agent itself). Recording it would keep the
// file's digest in the decision log for good, a hash of a secret among
// them. Errors: bad input (exit 2) naming the file and what it looks
// like, never its bytes.
func Dispatch(path string, raw []byte) error {
	if head := raw[:min(len(raw), 64)]; sign.Readable(head) {
		return exitcode.Input(fmt.Errorf("%s is not a dispatch: this is %s; nothing was judged or recorded", path, sign.Describe(head)),
			"give the file writ instruct wrote (a signed COSE envelope, or the bare CBOR of --unsigned)")
	}
	return nil
}
