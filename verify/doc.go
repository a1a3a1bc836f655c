// Package verify composes sign, delegation, transfer and ledger into the
// runner's admission verdict and the decision records that log it. The
// runner that holds a ledger directory open and records every decision
// is package verify/runner; the auditor's end-to-end check of a ledger
// is package verify/audit.
//
// # Verdicts and modes
//
// [Admit] runs every check it can on a dispatch and collects the failures
// (findings) in check order. The verdict follows from the findings and the
// enforcement mode:
//
//   - an internal finding (a panic anywhere in the verdict path, the clock
//     included) refuses under internal-error, whatever else failed;
//   - an integrity or content finding refuses in every mode: a wrong byte
//     is never admitted; so does a governed finding whose rule the runner
//     listed in Config.AlwaysRefuse (`writ admit --refuse RULE`), which
//     can tighten a mode and never loosen it;
//   - otherwise, a finding of a governed class (authenticity, authority,
//     freshness, provenance) is refused under enforce, gives would-refuse
//     under warn, and is admitted under off: as admitted-unsigned when no
//     verified authority stands behind the dispatch (an authenticity or
//     authority finding), else as admitted, with the rule recorded;
//   - no finding: admitted, rule "ok".
//
// The verdict's rule is the first integrity finding, else the first
// governed one. Every decision, in every mode, is recorded with [Record];
// a decision lists only the checks that ran.
//
// # Rules
//
// The vocabulary is closed; [Rules] holds it in check order and `writ
// admit --rules` prints it:
//
//	rule                       class         checks that
//	ok                         pass          every check that ran passed
//	ledger-unverified          integrity     the runner's ledger verifies against its signed checkpoint
//	vkey-mismatch              integrity     the ledger's checkpoints are signed by the key given with --vkey
//	ledger-inconsistent        integrity     the authority log extends the one this runner last trusted
//	root-untrusted             integrity     the ledger's first root is the one given with --trust-root
//	ledger-unwitnessed         integrity     the authority checkpoint is cosigned by the witness policy's quorum
//	malformed-dispatch         integrity     the dispatch is a canonical envelope of an instruction, or a canonical bare instruction
//	unsigned                   authenticity  the instruction is signed
//	wrong-record-kind          authenticity  the envelope was signed as an instruction
//	bad-signature              authenticity  every signature by a trusted key verifies
//	unknown-key                authenticity  the signer's key is trusted by the ledger
//	wrong-machine              integrity     the instruction names this machine
//	replay                     integrity     the instruction id was never admitted on this runner before
//	work-claimed               integrity     no other session holds a live work claim on the stream
//	receipt-missing            integrity     a receipt accompanies the dispatch (with --require-receipt)
//	receipt-invalid            integrity     the receipt proves the dispatch is in the verified authority log
//	root-expired               authority     the ledger's root has not expired
//	quarantined                authority     no signed quarantine drains this machine now (refuses in every mode)
//	revoked                    authority     neither the signer's key nor a delegation on its chain is revoked
//	no-delegation              authority     the signer holds a delegation from the root
//	out-of-scope               authority     a delegation grants instruct for this stream and machine
//	outside-window             authority     that delegation is valid now and at the instruction's issued_at
//	instruction-not-yet-valid  freshness     not_before <= now
//	instruction-expired        freshness     now < expires
//	agent-not-pinned           provenance    the ledger pins the agent artifact for this platform
//	pin-expired                freshness     the latest pin has not expired
//	agent-pin-mismatch         integrity     the digest the instruction names, if any, is the pin's
//	agent-binary-unreadable    integrity     the agent binary is present and readable
//	agent-digest-mismatch      integrity     the agent binary hashes, here, to the pinned digest
//	engine-not-named           provenance    the instruction names the engine when the runner runs one
//	engine-not-pinned          provenance    the ledger pins the engine artifact the instruction names
//	engine-pin-mismatch        integrity     the engine digest the instruction names, if any, is the pin's
//	engine-binary-unreadable   integrity     the engine binary is present and readable
//	engine-digest-mismatch     integrity     the engine binary hashes, here, to its pinned digest
//	build-mismatch             integrity     the binary's build metadata, read here, is the pin's
//	dirty-build                provenance    the binary was not built from a modified tree
//	unknown-build              provenance    the binary records its source revision
//	provenance-required        provenance    the binaries run are pinned with provenance from the builders the instructing delegation lists, if any
//	rollback                   freshness     the pinned version is not below this runner's high-water mark (or a downgrade allows it)
//	stale-ledger               freshness     the ledger's newest checkpoint is within the maximum age
//	provision-unreadable       integrity     every provisioned file is present
//	provision-digest-mismatch  integrity     every provisioned file hashes, here, to its digest
//	provision-unexpected       integrity     the provision directory holds only the files the instruction names
//	r30-workspace-path         content       R30: a remote brief names no path beneath the control plane's workspace
//	r37-provision-citation     content       R37: every provisioned file a remote brief cites is shipped with it
//	policy-refused             policy        no rule of the runner's admission policy (--policy-cel) refuses
//	internal-error             internal      no internal error occurred (a panic is a refusal)
//
// # Binaries, rollback and freshness
//
// Every binary a dispatch runs (the agent, and the engine when the
// instruction names one) is looked up by artifact name in the latest
// unrevoked pin for this platform, hashed here and compared; its Go build
// metadata is read again from the file (debug/buildinfo), not from the
// pin. Provisioned files are hashed here against the instruction's
// digests. The digest a sender reports is compared with the pin, never
// used in place of hashing.
//
// A runner's high-water marks (artifact → highest semantic version it
// has admitted) are carried in every decision record, so they are signed
// and survive restarts; [Admit] raises them for each binary an admitted
// verdict lets run and never lowers them. A pin below the mark is a
// rollback unless an unexpired, unrevoked, root-threshold downgrade
// record names exactly that artifact and version; the mark stays where
// it was. With Config.MaxLedgerAge set, the ledger's newest checkpoint
// must carry a signed time (cosignature/v1, C2SP tlog-cosignature) no
// older than that.
//
// # Check, then decide
//
// [Admit] is [Check] followed by [Checked.Decide]: a runner (package
// verify/runner) checks admissions in parallel, then decides each under
// its lock against its history (replay, work claims, [History]) as it is
// at that moment. [Refusing] is the admission of a runner whose ledger
// cannot be trusted, which runs no check.
//
// # Remote orders: R30 and R37
//
// A brief sent to a remote runner (transport "ssh") is text an agent will
// act on; two lexical content rules refuse, in every mode, orders it
// could only fail or misread. Tokens are the brief split into lines and
// each line on whitespace ([Tokens]); local dispatches and empty briefs
// are outside the rules.
//
// R30 (r30-workspace-path): with Config.ControlWorkspace set (`writ admit
// --control-workspace /ws/control`), a token that spells that absolute
// path or a path beneath it anywhere is refused, naming the line and the
// token. An absolute path starts at a '/' that begins the token or
// follows a character no path name holds, and is cleaned ("//", "/./",
// "/../") as the sending host would resolve it: "/ws/control/repo/main.go",
// "(/ws/control/x)", "--config=/ws/control/app.yaml", "/ws//control/x",
// "file:///ws/control/x" and "PATH=/bin:/ws/control/bin" are refused;
// "/ws/controller/x", "ws/control/x" and "https://host/ws/control/x" are
// not.
//
// R37 (r37-provision-citation): a token containing the exact,
// case-sensitive marker ".provision/" is a citation unless what precedes
// the marker proves otherwise ([Cite]):
//
//	https://host/.provision/Plan.md   inside a URL: a scheme "name://" and URL characters run up to the marker
//	vendor.provision/config.md        a directory x.provision/: a name character precedes it
//	..provision/Plan.md               the same ('.' is a name character)
//	/tmp/p.md=.provision/Plan.md      an assignment whose right-hand side starts at the marker
//
// A '/' before the marker is a path separator, so these are citations:
// /repo/.provision/Plan.md, docs/.provision/Plan.md, ~/.provision/Plan.md,
// $HOME/.provision/Plan.md, <ws>/.provision/Plan.md and the bare
// .provision/Plan.md. A citation of exactly .provision/<name>.<ext> (name
// characters, a dot, an extension of letters and digits, nothing after)
// must be in the dispatch's provisioning set, or R37 refuses naming the
// line, the destination and the remedy "--provision
// <source>=.provision/<name>.<ext>". A citation that spells a file name
// but cannot be normalized confidently (.provision/Plan.md… with an
// ellipsis, `.provision/Plan.md` in markup, .provision/Plan.md* with a
// glob, .provision/Plan.md, with punctuation, .provision/canon/Plan.md
// nested), and anything else after the marker that spells a letter or
// digit (.provision/Plan…, .provision/Plan</code>, .provision/PLAN*.md,
// .provision/PLAN., .provision/{plan,spec}.md), is refused on the raw
// token, verbatim, asking the author to write the path plainly or ship
// the file: writ never guesses a destination. A URL earlier in the token
// does not hide a later citation: quotes, brackets, braces, parentheses
// and commas end a URL ({"ref":"https://wiki/x","plan":".provision/P.md"}
// and [https://wiki/P](.provision/P.md) cite). Not citations, and never
// refused: directories (.provision/, .provision/canon/), placeholders
// (angle-bracketed words or globs, an optional extension, nothing
// spelled after: .provision/<document>, .provision/<name>.md,
// .provision/*.md), and bare fragments with nothing after them
// (.provision/PLAN, .provision/PLAN_, .provision/PLAN-v2), a
// path split across tokens, and any marker that is not exactly
// ".provision/" (.Provision/, a division slash U+2215, a fullwidth slash
// U+FF0F, "&#47;", a backslash, a zero-width character inside it).
package verify
