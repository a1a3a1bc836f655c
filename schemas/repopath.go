package schemas

import "strings"

// RepoPath is a git repository URI as HOST/PATH, lower-cased, without
// scheme, user, port, "@ref" or ".git": "git+https://github.com/o/r.git"
// and "git@github.com:o/r" both give "github.com/o/r". It is "" for a
// URI it cannot read as one (no scheme and not scp-like USER@HOST:PATH).
func RepoPath(uri string) string {
	uri = strings.TrimPrefix(uri, "git+")
	var host, path string
	if i := strings.Index(uri, "://"); i >= 0 {
		rest := uri[i+3:]
		slash := strings.Index(rest, "/")
		if slash < 0 {
			return ""
		}
		host, path = rest[:slash], rest[slash+1:]
		if at := strings.LastIndex(host, "@"); at >= 0 {
			host = host[at+1:]
		}
		if colon := strings.Index(host, ":"); colon >= 0 {
			host = host[:colon]
		}
	} else if at, colon := strings.Index(uri, "@"), strings.Index(uri, ":"); at > 0 && colon > at && !strings.Contains(uri[:colon], "/") {
		host, path = uri[at+1:colon], uri[colon+1:]
	} else {
		return ""
	}
	if at := strings.Index(path, "@"); at >= 0 {
		path = path[:at]
	}
	path = strings.TrimSuffix(strings.Trim(path, "/"), ".git")
	if host == "" || path == "" || strings.ContainsAny(host+path, " \t\n?#") {
		return ""
	}
	return strings.ToLower(host + "/" + path)
}
