package verify

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

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
	// scheme is an RFC 3986 §3.1 scheme followed by "://".
	scheme = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://`)
	// fileName is one file name with an extension: name characters, a
	// dot, and an extension of letters and digits.
	fileName = regexp.MustCompile(`^[\p{L}\p{N}_-][\p{L}\p{N}_.-]*\.[\p{L}\p{N}]+$`)
	// nestedDir is one or more directory names, each ending in '/'.
	nestedDir = regexp.MustCompile(`^(?:[\p{L}\p{N}_.-]+/)+$`)
	// spelled finds a file name spelled out anywhere: a name character,
	// a dot, an extension character.
	spelled = regexp.MustCompile(`[\p{L}\p{N}_-]\.[\p{L}\p{N}]`)
	// spelledName is a name spelled from the marker on: it starts with a
	// name character (letter, digit, '_' or '-').
	spelledName = regexp.MustCompile(`^[\p{L}\p{N}_-]`)
	// fragment is a bare name with nothing after it: name characters
	// only, no dot.
	fragment = regexp.MustCompile(`^[\p{L}\p{N}_-]+$`)
)

// Cite classifies one token under R37 and, for a file citation, returns
// its destination (.provision/<name>.<ext>). Each occurrence of the
// marker is judged by what precedes it: a scheme ("name://") anywhere
// before it makes a URL; a name character (letter, digit, '_', '-', '.')
// right before it makes a directory named "x.provision/"; a '=' right
// before it makes the right-hand side of an assignment. Anything else
// before it ('/', '~', '$', '<', '`', a quote, or nothing) makes a
// citation. What follows the marker decides its kind: nothing, or
// directories ending in '/', is not a citation; exactly <name>.<ext> is a
// file; a spelled name.ext with anything else around it is raw, and so is
// a name (starting with a letter, digit, '_' or '-') followed by anything
// that is not a name character; placeholders (starting with anything
// else) and bare fragments (name characters only, nothing after them) are
// not citations. The first occurrence that is a citation decides.
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
		case spelled.MatchString(rest):
			return CitationRaw, ""
		case spelledName.MatchString(rest) && !fragment.MatchString(rest):
			// A name with something after it (.provision/Plan…,
			// .provision/Plan</code>, .provision/PLAN*.md): whatever file
			// it means, it cannot be normalized confidently.
			return CitationRaw, ""
		}
		// .provision/<document>, .provision/PLAN, .provision/PLAN_: a
		// placeholder or a bare fragment, not a file name
	}
}

// citesAt reports whether the marker at byte offset at of token is a
// citation by what precedes it.
func citesAt(token string, at int) bool {
	before := token[:at]
	if scheme.MatchString(before) {
		return false // a URL: https://host/.provision/Plan.md
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
	root := strings.TrimRight(a.cfg.ControlWorkspace, "/")
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
			a.fail(RuleWorkspacePath, "the brief names a path beneath the control plane's workspace %s, which exists only on the sending host: %s", a.cfg.ControlWorkspace, list(r30))
		} else {
			a.pass("brief-no-workspace-path")
		}
	}
	if len(r37) > 0 {
		a.fail(RuleProvisionCitation, "%s", list(r37))
	} else {
		a.pass("brief-citations-shipped")
	}
}

// beneath reports whether token is the absolute path root or a path
// under it (root without a trailing '/'; "" is the filesystem root).
// Quotes, brackets and emphasis opening the token are skipped first
// ("`/ws/a`", "(/ws/a)"): they do not make the path any less real on the
// sending host. What follows the path is not trimmed: "/ws/a," is still
// beneath /ws.
func beneath(token, root string) bool {
	token = strings.TrimLeft(token, "\"'`([{<*_")
	if !strings.HasPrefix(token, "/") {
		return false
	}
	return token == root || strings.HasPrefix(token, root+"/")
}

// list joins violations, at most maxReported of them and a count of the
// rest.
func list(v []string) string {
	if len(v) <= maxReported {
		return strings.Join(v, "; ")
	}
	return strings.Join(v[:maxReported], "; ") + fmt.Sprintf("; and %d more", len(v)-maxReported)
}
