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
// "git+https://github.com/OWNER/REPO@refs/heads/main").
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
			if i := strings.LastIndex(uri, "@"); i > strings.Index(uri, "://") {
				uri = uri[:i]
			}
			return uri, c
		}
	}
	return "", ""
}

// sameSource checks the provenance's source against the binary's build
// metadata: the commit is vcs.revision, and, when the binary's module
// path is a repository path on a host (github.com/OWNER/REPO/...), the
// provenance's repository is that one.
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
	repo := repoPath(a.Repository)
	mod := b.Module
	if mod == "" {
		mod = b.Path
	}
	if repo != "" && strings.Count(mod, "/") >= 2 && strings.Contains(mod, ".") {
		if mod != repo && !strings.HasPrefix(mod, repo+"/") {
			return refuse(rules.ProvenanceSource, "the provenance's repository is not the one the binary's module path names", mod, a.Repository)
		}
	}
	return nil
}

// repoPath is a git URI's host and path, lower-cased, without scheme,
// user or ".git" ("git+https://github.com/o/r.git" gives
// "github.com/o/r"); "" for one it cannot read.
func repoPath(uri string) string {
	uri = strings.TrimPrefix(uri, "git+")
	i := strings.Index(uri, "://")
	if i < 0 {
		return ""
	}
	rest := uri[i+3:]
	if at := strings.Index(rest, "@"); at >= 0 && at < strings.Index(rest+"/", "/") {
		rest = rest[at+1:]
	}
	return strings.ToLower(strings.TrimSuffix(strings.TrimSuffix(rest, "/"), ".git"))
}
