package main

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// record is the JSON result of every command that writes a record.
const record = "kind, digest (sha256:<hex> of the bytes written), out, signed (false for bare CBOR)"

// verdictJSON is an admission verdict's JSON result.
const verdictJSON = "verdict, rule, class, reason, next_act, mode, instruction_id, instruction_digest, signer, machine, stream, decision_index, passed (rule ids), failed (rule, reason), compared (subject, expected, actual); claim when the stream is claimed"

// jsonFields documents each command's JSON result under --json (its
// top-level fields; snake_case; hashes lowercase hex, digests
// sha256:<hex>, times RFC 3339 UTC). It is shown in the command's --help,
// and the tests fail when a command prints a field its entry does not
// name. A failure is {"error", "exit", "rule", "hints"} on stderr for
// every command; that is not repeated here.
var jsonFields = map[string]string{
	"key generate":           "key_id (64 hex), private_key, public_key (the files written, or the token URI)",
	"key id":                 "key_id (64 hex)",
	"verify":                 "valid, form (cose or dsse), key_id, alg (COSE algorithm number), payload_bytes, content_type, kind (the writ record kind, or \"\"); when the signature verifies but the payload is not its record: signature_valid, record_valid, declared_kind, error; when it does not verify: valid false and error",
	"root sign":              record + ", version (the root version)",
	"delegate":               record + ", delegate (the delegate's key id)",
	"revoke":                 record + ", target",
	"issuer":                 record + ", issuer",
	"quarantine":             record + ", machine, act (quarantine or lift)",
	"downgrade":              record + ", artifact, version",
	"pin":                    record + ", artifact, version, platform, binary_digest, size (bytes), build (the Go build metadata pinned)",
	"instruct":               record + ", instruction_id (32 hex: the id admit and audit name it by)",
	"transfer verify":        "match, expected, actual (digests)",
	"authority explain":      "key, action, at, allowed; when allowed: chain (each link's index, digest, key, issued_by, actions, not_before, not_after); when not: rule, reason",
	"ledger init":            "vkey (the checkpoint verifier key), origin, root_digest, index (0)",
	"ledger vkey":            "vkey, origin",
	"ledger append":          "index, kind, digest: one object per appended record",
	"ledger checkpoint":      "log, origin, size, root_hash, checkpoint (the signed note with its cosignatures); with --policy: witnessing (the quorum that cosigned it)",
	"ledger verify":          "ok; when ok: logs (each log's log, origin, size, root_hash); when not: log, index, error",
	"ledger repair":          "dir, set_aside (DIR/set-aside/STAMP, where the damaged stores are kept; \"\" when nothing was moved), logs (each log's log, action: whole, rebuilt or restored, size and checkpoint (entries), skipped (files not used)), undo (the command that undoes it); with --undo: set_aside, restored, kept",
	"ledger export":          "out, bytes, logs (the section names); nothing with --out -",
	"ledger import":          "log, origin, before, after (entries), recovered (entries an interrupted import left and this one dropped), root_hash: one object per imported log",
	"ledger prove":           "index, tree_size, leaf_hash, root_hash, proof (hashes, RFC 9162 §2.1.3)",
	"ledger consistency":     "old_size, new_size, old_root, new_root, proof (hashes, RFC 9162 §2.1.4)",
	"ledger entry":           "index, out, bytes, digest (sha256:<hex> of the entry); nothing with --out -",
	"ledger receipt":         "index, tree_size, out, digest (of the receipt), witnessed (whether --policy's quorum cosigned its checkpoint)",
	"ledger verify-receipt":  "valid, index, tree_size, position_signed (false: RFC 9942 signs the root only), root_hash; with --policy: witnessing",
	"ledger publish":         "log, origin, before, after (entries), files, bytes; with --policy: witnessing",
	"ledger serve":           "listen (the host:port it listens on), message (the banner): one object once it listens",
	"ledger sync":            "origin, before, after (entries), root_hash, requests, bytes (fetched), refreshed (a newer checkpoint of the same size was stored); with --policy: witnessing",
	"admit":                  verdictJSON + "; with --rules instead one object per rule: rule, class, governed, summary, next_act",
	"admission serve":        "none: a server; it logs on stderr",
	"admission request":      verdictJSON + "; run (whether the runner may run the dispatch), hash_us, record_us, total_us (the server's time, microseconds)",
	"token verify":           "valid, issuer, subject, audience, expires, kid",
	"audit":                  "ok, entries_verified, authority_entries, decisions, would_refuse_under_enforce, by_verdict, by_rule, authority_checkpoint and decision_checkpoint (origin, size, root_hash), traffic (by_mode, by_machine, by_stream, by_signer, unsigned, unsigned_share, would_refuse_by_rule, days (every day of the period; partial marks a day it covers in part), flagged_builds, authority_events, since, until (whole seconds), first_decision, last_decision, outside_period, ...), witnessing, runner_key_protection, trust (authority_key and decisions_key: name, key_id, source: given, state or ledger; trust_root, first_root, independent: no key was taken from the ledger itself), audited_at (the audit's clock; an open period ends there), failure (log, index, error); with --fleet: ok, authority_checkpoint, witnessing, failure, runners (each runner's name, url, ok, report, failure), total",
	"quickstart":             "message: one object per step",
	"witness key generate":   "key_id, name, private_key, public_key, vkey, vkey_file",
	"witness serve":          "listen (the host:port it listens on), message (the banner): one object once it listens",
	"witness add-checkpoint": "origin, size, signatures (the witness's cosignature lines)",
	"witness checkpoint":     "origin, checkpoint (the witness's latest cosigned checkpoint of that log as served, not verified here)",
}

// documentJSON appends each command's JSON fields to its --help, and
// gives every command the --json flag (also accepted before the command
// name).
func documentJSON(cmds []*cli.Command, prefix string) {
	for _, c := range cmds {
		name := strings.TrimSpace(prefix + " " + c.Name)
		if len(c.Subcommands) > 0 {
			documentJSON(c.Subcommands, name)
			continue
		}
		if !slices.ContainsFunc(c.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), "json") }) {
			c.Flags = append(c.Flags, jsonFlag)
		}
		if doc, ok := jsonFields[name]; ok {
			if c.Description != "" {
				c.Description += "\n\n"
			}
			c.Description += "JSON result (--json): " + doc + "."
		}
	}
}
