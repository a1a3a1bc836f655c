package transfer

import (
	"debug/buildinfo"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/writ-ledger/writ/provenance"
	"github.com/writ-ledger/writ/schemas"
	"golang.org/x/mod/semver"
)

// Errors from NewPin.
var (
	// ErrDirtyBuild: the binary was built from a modified tree
	// (vcs.modified=true).
	ErrDirtyBuild = errors.New("dirty build")
	// ErrUnknownBuild: the binary records no source revision.
	ErrUnknownBuild = errors.New("unknown build")
)

// ReadBuild reads the Go build metadata of the regular file at path. It
// returns nil build (and no error) for a file that is not a Go binary or
// carries no build information, and the binary's GOOS/GOARCH ("" if not
// recorded). Errors are those of Inspect.
func ReadBuild(path string) (*schemas.Build, string, error) {
	in, err := Inspect(path, "sha256")
	if err != nil {
		return nil, "", err
	}
	return in.Build, in.Platform, nil
}

func fromBuildInfo(info *buildinfo.BuildInfo) (*schemas.Build, string) {
	b := &schemas.Build{GoVersion: info.GoVersion, Path: info.Path, Module: info.Main.Path, ModuleVersion: info.Main.Version}
	var goos, goarch, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs":
			b.VCS = s.Value
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			modified = s.Value
		case "GOOS":
			goos = s.Value
		case "GOARCH":
			goarch = s.Value
		}
	}
	// The go command writes vcs.modified as "true" or "false" whenever it
	// records a revision; anything else (absent, "TRUE", "1") cannot be
	// shown clean, so it counts as modified.
	b.Modified = b.Revision != "" && modified != "false" || modified == "true"
	platform := ""
	if goos != "" && goarch != "" {
		platform = goos + "/" + goarch
	}
	return b, platform
}

// PinOptions are the release engineer's choices for NewPin.
type PinOptions struct {
	Artifact     string
	Version      string // semantic version; a leading "v" is added if missing
	Platform     string // GOOS/GOARCH; "" means the binary's, else this machine's
	IssuedAt     time.Time
	Expires      time.Time
	AllowDirty   bool // pin a vcs.modified=true build
	AllowUnknown bool // pin a build without vcs.revision
	// Provenance, when set, is the build provenance attestation (a DSSE
	// envelope or a Sigstore bundle; package provenance) that must vouch
	// for the binary, under ProvenanceKey (a PEM public key) or
	// ProvenanceRoot (a Sigstore trusted root, JSON; a bundle only), one
	// of them, built by one of Builders (empty: any); the pin records it
	// (schemas.Provenance).
	Provenance, ProvenanceKey, ProvenanceRoot []byte
	Builders                                  []string
}

// Platform returns this machine's GOOS/GOARCH, the platform a runner
// looks up pins for.
func Platform() string { return runtime.GOOS + "/" + runtime.GOARCH }

// NewPin reads the binary at path (digest, size, build metadata) and
// returns the pin record for it. It refuses a dirty build (ErrDirtyBuild)
// unless AllowDirty, a build without a source revision (ErrUnknownBuild)
// unless AllowUnknown, a platform that contradicts the binary's own, and
// any field the pin schema rejects (a *schemas.FieldError); with
// o.Provenance, a key that does not load and a provenance that does not
// vouch for the binary (a *provenance.Error).
func NewPin(path string, o PinOptions) (*schemas.Pin, error) {
	p, _, err := NewAttestedPin(path, o)
	return p, err
}

// NewAttestedPin is NewPin, also returning what o.Provenance attested
// (nil without one).
func NewAttestedPin(path string, o PinOptions) (*schemas.Pin, *provenance.Attested, error) {
	version, err := ParseVersion(o.Version)
	if err != nil {
		return nil, nil, err
	}
	in, err := Inspect(path, "sha256")
	if err != nil {
		return nil, nil, fmt.Errorf("the binary to pin: %w", err)
	}
	build, binPlatform := in.Build, in.Platform
	platform := o.Platform
	switch {
	case platform == "" && binPlatform != "":
		platform = binPlatform
	case platform == "":
		platform = Platform()
	case binPlatform != "" && platform != binPlatform:
		return nil, nil, fmt.Errorf("--platform %s: %s was built for %s", platform, path, binPlatform)
	}
	if build != nil && build.Modified && !o.AllowDirty {
		return nil, nil, fmt.Errorf("%w: %s was built from a modified tree (vcs.modified=true, revision %s); rebuild from a clean checkout, or pass --allow-dirty to pin it anyway", ErrDirtyBuild, path, build.Revision)
	}
	if (build == nil || build.Revision == "") && !o.AllowUnknown {
		why := "it records no vcs.revision (built with -buildvcs=false, by go run, or outside a repository)"
		if build == nil {
			why = "it carries no Go build information (not a Go binary, or stripped of it)"
		}
		return nil, nil, fmt.Errorf("%w: %s: %s; pass --allow-unknown-build to pin it anyway", ErrUnknownBuild, path, why)
	}
	digest, size := in.Digest, in.Size
	var attested *provenance.Attested
	var recorded *schemas.Provenance
	if o.Provenance != nil {
		trust := provenance.Trust{Root: o.ProvenanceRoot}
		if o.ProvenanceKey != nil {
			var err error
			if trust.Key, err = provenance.LoadKey(o.ProvenanceKey); err != nil {
				return nil, nil, err
			}
		}
		var err error
		if attested, err = provenance.Check(o.Provenance, trust, provenance.Expect{Digest: digest, Build: build, Builders: o.Builders}); err != nil {
			return nil, nil, err
		}
		if recorded, err = provenance.Record(o.Provenance, trust, attested); err != nil {
			return nil, nil, err
		}
	}
	p := &schemas.Pin{
		V: schemas.SchemaVersion, Artifact: o.Artifact, Platform: platform, Digest: digest, Size: uint64(size),
		Version: version, Build: build, IssuedAt: o.IssuedAt.Unix(), Expires: o.Expires.Unix(), Provenance: recorded,
	}
	if err := p.Validate(); err != nil {
		return nil, nil, err
	}
	return p, attested, nil
}

// ParseVersion returns the semantic version v (SemVer 2.0.0, as
// golang.org/x/mod/semver reads it) with a leading "v", adding one if
// missing: "1.4.2" and "v1.4.2-rc.1+build.5" are accepted, shorthand
// such as "1.4" is not. The error names the --version flag and gives an
// example.
func ParseVersion(v string) (string, error) {
	version := v
	if !strings.HasPrefix(version, "v") {
		version = "v" + version
	}
	if !semver.IsValid(version) || semver.Canonical(version)+semver.Build(version) != version {
		return "", fmt.Errorf("--version %q: not a full semantic version MAJOR.MINOR.PATCH (e.g. 1.4.2)", v)
	}
	return version, nil
}
