package verify

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
)

// Marker is the exact, case-sensitive byte sequence that makes a brief
// token a citation of a provisioned file (rule R37).
const Marker = ".provision/"

// Token is one whitespace-separated token of a brief, with its line
// (1-based).
type Token struct {
	Line int
	Text string
}

// Tokens splits a brief into lines ("\n"; a "\r" before it is dropped)
// and each line on Unicode whitespace (strings.Fields). A path written
// across two tokens is two tokens: the rules are lexical.
func Tokens(brief string) []Token {
	var out []Token
	for i, line := range strings.Split(brief, "\n") {
		for _, f := range strings.Fields(line) {
			out = append(out, Token{Line: i + 1, Text: f})
		}
	}
	return out
}

// Citation kinds: what R37 makes of one token.
const (
	NotCitation  = "not-citation" // no marker, or its structure proves it is not one
	CitationFile = "file"         // normalizes to .provision/<name>.<ext>: must be shipped
	CitationRaw  = "raw"          // a spelled file name that cannot be normalized confidently
)

var (
	// urlBefore matches when the text before a marker ends inside a URL:
	// an RFC 3986 §3.1 scheme, "://", and URL characters running up to
	// the marker. Characters that end a URL in prose and markup (quotes,
	// brackets, braces, parentheses, commas, '<', '>', '|', '\', '^',
	// '`') stop it: a URL earlier in the token does not swallow a later
	// citation.
	urlBefore = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[A-Za-z0-9._~%!$&*+;=:@/?#-]*$`)
	// fileName is one file name with an extension: name characters, a
	// dot, and an extension of letters and digits.
	fileName = regexp.MustCompile(`^[\p{L}\p{N}_-][\p{L}\p{N}_.-]*\.[\p{L}\p{N}]+$`)
	// nestedDir is one or more directory names, each ending in '/'.
	nestedDir = regexp.MustCompile(`^(?:[\p{L}\p{N}_.-]+/)+$`)
	// fragment is a bare name with nothing after it: name characters
	// only, no dot.
	fragment = regexp.MustCompile(`^[\p{L}\p{N}_-]+$`)
	// placeholder is a stand-in, not a name: angle-bracketed words or
	// globs, an optional extension, and nothing spelled after them
	// (.provision/<document>, .provision/<name>.md, .provision/*.md).
	placeholder = regexp.MustCompile(`^(<[^<>]*>|\*)+(\.[\p{L}\p{N}]+)?[^\p{L}\p{N}]*$`)
	// nameChar finds a letter or digit anywhere.
	nameChar = regexp.MustCompile(`[\p{L}\p{N}]`)
)

// Cite classifies one token under R37 and, for a file citation, returns
// its destination (.provision/<name>.<ext>). Each occurrence of the
// marker is judged by what precedes it: inside a URL (a scheme "name://"
// and URL characters running up to the marker) it is part of the URL; a
// name character (letter, digit, '_', '-', '.') right before it makes a
// directory named "x.provision/"; a '=' right before it makes the
// right-hand side of an assignment. Anything else before it ('/', '~',
// '$', '<', '`', a quote, a bracket, or nothing) makes a citation. What
// follows the marker decides its kind: nothing, or directories ending in
// '/', is not a citation; exactly <name>.<ext> is a file; a placeholder
// (angle-bracketed words or globs, an optional extension, nothing spelled
// after: <document>, <name>.md, *.md) or a bare fragment (name characters
// only: PLAN, PLAN_) is not a citation; anything else that spells a
// letter or digit (Plan…, Plan</code>, PLAN*.md, {plan,spec}.md,
// canon/Plan) is raw. The first occurrence that is a citation decides.
func Cite(token string) (kind, dest string) {
	for from := 0; ; {
		i := strings.Index(token[from:], Marker)
		if i < 0 {
			return NotCitation, ""
		}
		at := from + i
		from = at + len(Marker)
		if !citesAt(token, at) {
			continue
		}
		rest := token[from:]
		switch {
		case rest == "" || nestedDir.MatchString(rest):
			continue // .provision/ or .provision/canon/: a directory
		case fileName.MatchString(rest):
			return CitationFile, Marker + rest
		case placeholder.MatchString(rest) || fragment.MatchString(rest):
			continue // .provision/<document>, .provision/*.md, .provision/PLAN
		case nameChar.MatchString(rest):
			// Anything else that spells something (.provision/Plan…,
			// .provision/Plan</code>, .provision/PLAN*.md,
			// .provision/{plan,spec}.md): whatever file it means, it
			// cannot be normalized confidently.
			return CitationRaw, ""
		}
	}
}

// citesAt reports whether the marker at byte offset at of token is a
// citation by what precedes it.
func citesAt(token string, at int) bool {
	before := token[:at]
	if urlBefore.MatchString(before) {
		return false // inside a URL: https://host/.provision/Plan.md
	}
	if before == "" {
		return true // the bare form
	}
	r, _ := utf8.DecodeLastRuneInString(before)
	switch {
	case r == '=':
		return false // an assignment operand: /tmp/p.md=.provision/Plan.md
	case r == '.' || r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r):
		return false // a directory x.provision/: vendor.provision/config.md
	}
	return true // '/', '~', '$', '<', markup, quotes: a citation
}

// maxReported bounds how many violations one finding lists.
const maxReported = 5

// checkContent applies the remote-order rules to an instruction sent over
// ssh with a brief: R30 (no absolute path beneath the control plane's
// workspace root, when the runner knows it) and R37 (every provisioned
// file the brief cites is in this dispatch's provisioning set). Local
// dispatches and empty briefs are outside them.
func (a *admission) checkContent(instr *schemas.Instruction) {
	if instr.Transport != "ssh" || instr.Brief == "" {
		return
	}
	shipped := map[string]bool{}
	for _, p := range instr.Provision {
		shipped[p.Dest] = true
	}
	root := strings.TrimRight(path.Clean(a.cfg.ControlWorkspace), "/") // "/ws//control/." is /ws/control
	var r30, r37 []string
	for _, t := range Tokens(instr.Brief) {
		if a.cfg.ControlWorkspace != "" && beneath(t.Text, root) {
			r30 = append(r30, fmt.Sprintf("line %d: %q", t.Line, t.Text))
		}
		switch kind, dest := Cite(t.Text); kind {
		case CitationFile:
			if !shipped[dest] {
				r37 = append(r37, fmt.Sprintf("line %d cites %s, which this dispatch does not provision: ship it with --provision <source>=%s", t.Line, dest, dest))
			}
		case CitationRaw:
			r37 = append(r37, fmt.Sprintf("line %d cites %q, which is not a plain .provision/<name>.<ext>: write the path plainly, or ship the file and cite it as .provision/<name>.<ext>", t.Line, t.Text))
		}
	}
	if a.cfg.ControlWorkspace != "" {
		if len(r30) > 0 {
			a.fail(rules.WorkspacePath, "the brief names a path beneath the control plane's workspace %s, which exists only on the sending host: %s", a.cfg.ControlWorkspace, list(r30))
		} else {
			a.pass("brief-no-workspace-path")
		}
	}
	if len(r37) > 0 {
		a.fail(rules.ProvisionCitation, "%s", list(r37))
	} else {
		a.pass("brief-citations-shipped")
	}
}

// beneath reports whether token spells, anywhere, an absolute path that
// is root or lies under it (root without a trailing '/'; "" is the
// filesystem root). An absolute path starts at a '/' that begins the
// token or follows a character no path name holds (quotes, brackets, '=',
// ':', ...: "`/ws/a`", "--config=/ws/a", "file:///ws/a") and runs while
// path characters follow; it is cleaned (path.Clean: "//", "/./", "/../")
// before it is compared, as the sending host would resolve it.
func beneath(token, root string) bool {
	under := func(p string) bool {
		p = path.Clean(p)
		return p == root || strings.HasPrefix(p, root+"/") || (root == "" && strings.HasPrefix(p, "/"))
	}
	for i := 0; i < len(token); i++ {
		if token[i] != '/' || (i > 0 && isPathChar(token[i-1])) {
			continue
		}
		j := i
		for j < len(token) && isPathChar(token[j]) {
			j++
		}
		if under(token[i:j]) {
			return true
		}
		// file://host/path names /path on that host.
		if run := token[i:j]; strings.HasPrefix(run, "//") && i >= 5 && strings.EqualFold(token[i-5:i], "file:") {
			if k := strings.IndexByte(run[2:], '/'); k >= 0 && under(run[2+k:]) {
				return true
			}
		}
		i = j
	}
	return false
}

// isPathChar reports whether c can be part of a path name as a brief
// writes one: ASCII letters, digits, '/', '.', '_', '-', '~', '+', '@',
// '%'. Any other byte, a non-ASCII one included (a curly quote, a
// zero-width space), ends a path and may start one: R30 errs toward
// seeing a path, never toward missing one.
func isPathChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("/._-~+@%", c) >= 0
}

// list joins violations, at most maxReported of them and a count of the
// rest.
func list(v []string) string {
	if len(v) <= maxReported {
		return strings.Join(v, "; ")
	}
	return strings.Join(v[:maxReported], "; ") + fmt.Sprintf("; and %d more", len(v)-maxReported)
}
