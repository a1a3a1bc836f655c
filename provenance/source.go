package provenance

import (
	"strings"

	prov "github.com/in-toto/attestation/go/predicates/provenance/v1"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
)

// source returns the repository and commit the provenance names: the
// first resolved dependency with a gitCommit digest, or, on a git URI
// ("git+..."), a sha1 or sha256 one (as the SLSA GitHub generator writes
// a commit), its URI without the "@ref" suffix (SLSA's convention:
// "git+https://github.com/OWNER/REPO@refs/heads/main"; an "@" before the
// path, a URI's user, is kept).
func source(p *prov.Provenance) (string, string) {
	for _, d := range p.GetBuildDefinition().GetResolvedDependencies() {
		dg := d.GetDigest()
		c := dg["gitCommit"]
		if c == "" && strings.HasPrefix(d.GetUri(), "git+") {
			if c = dg["sha1"]; c == "" {
				c = dg["sha256"]
			}
		}
		if c != "" {
			uri := d.GetUri()
			if s := strings.Index(uri, "://"); s >= 0 {
				if slash := strings.Index(uri[s+3:], "/"); slash >= 0 {
					if at := strings.LastIndex(uri, "@"); at > s+3+slash {
						uri = uri[:at]
					}
				}
			}
			return uri, c
		}
	}
	return "", ""
}

// sameSource checks the provenance's source against the binary's build
// metadata: the commit is vcs.revision, and, when the binary's module
// path is a repository path on a host (HOST/OWNER/REPO/..., its first
// element holding a dot), the provenance names a repository (schemas.RepoPath) of at least HOST/OWNER/REPO that the module path is, or is under,
// compared without regard to case (hosts and GitHub's paths ignore it).
func sameSource(a *Attested, b *schemas.Build) error {
	if b == nil || b.Revision == "" {
		return refuse(rules.ProvenanceSource, "the binary records no source revision to compare with the provenance's", a.Commit, "none")
	}
	if a.Commit == "" {
		return refuse(rules.ProvenanceSource, "the provenance names no source commit (a resolved dependency with a gitCommit digest)", b.Revision, "none")
	}
	if !strings.EqualFold(a.Commit, b.Revision) {
		return refuse(rules.ProvenanceSource, "the provenance's source commit is not the revision the binary records", b.Revision, a.Commit)
	}
	mod := b.Module
	if mod == "" {
		mod = b.Path
	}
	mod = strings.ToLower(mod)
	if strings.Count(mod, "/") < 2 || !strings.Contains(strings.Split(mod, "/")[0], ".") {
		return nil // the module path names no repository on a host
	}
	repo := schemas.RepoPath(a.Repository)
	if strings.Count(repo, "/") < 2 || (mod != repo && !strings.HasPrefix(mod, repo+"/")) {
		return refuse(rules.ProvenanceSource, "the provenance's repository is not the one the binary's module path names", mod, a.Repository)
	}
	return nil
}
