package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/clicmd"
	"github.com/writ-ledger/writ/internal/cliflags"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/provenance"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
	"github.com/writ-ledger/writ/transfer"
)

var outFlag = &cli.StringFlag{Name: "out", Usage: "write the record to `FILE` (- for stdout)"}

func keysFlag(usage string) cli.Flag {
	return &cli.StringSliceFlag{Name: "key", Usage: usage}
}

// oneKey returns the one --key path of a command whose record or check
// takes exactly one key ("" when none is given): cliflags.One, naming why.
func oneKey(c *cli.Context, why string) (string, error) {
	return cliflags.One(c.StringSlice("key"), "key", why)
}

// finish encodes rec, signs it with keys (none: bare CBOR), writes it to
// --out and prints its digest. res is the command's JSON result; finish
// fills in its recorded part.
func finish(c *cli.Context, rec schemas.Record, keys []*sign.PrivateKey, res interface{ base() *recorded }, more ...string) error {
	out, err := sign.EncodeRecord(rec, keys...)
	if err != nil {
		return fieldFlagErr(c, err)
	} else if err := clicmd.CheckBeforeWriting(c, out); err != nil {
		return err
	}
	path := c.String("out")
	if err := writeOutput(c, path, out); err != nil {
		return err
	}
	if path == "-" {
		return nil // stdout carries the record itself
	}
	digest := schemas.SHA256Digest(out)
	*res.base() = recorded{Kind: rec.Kind(), Digest: digest, Out: path, Signed: len(keys) > 0}
	label := fmt.Sprintf("signed %s record %s, written to %s", rec.Kind(), digest, path)
	if len(keys) == 0 {
		label = fmt.Sprintf("unsigned %s record %s, written to %s", rec.Kind(), digest, path)
	}
	return emitSorted(c, res, append([]string{label}, more...)...)
}

// finishKeys loads the signing keys refs names (loadSigningKeys), then
// signs and writes rec with them (finish).
func finishKeys(c *cli.Context, rec schemas.Record, refs []string, res interface{ base() *recorded }, more ...string) error {
	keys, err := loadSigningKeys(c, refs)
	if err != nil {
		return err
	}
	return finish(c, rec, keys, res, more...)
}

func rootCommand() *cli.Command {
	return &cli.Command{
		Name:  "root",
		Usage: "sign root records",
		Subcommands: []*cli.Command{{
			Name:  "sign",
			Usage: "sign a root record: the trusted keys (--pub) and threshold, signed by at least threshold of them (--key)",
			Flags: []cli.Flag{
				keysFlag("private key `FILE` or PKCS#11 URI (pkcs11:token=T;object=O) of a root key that signs (repeat)"),
				&cli.StringSliceFlag{Name: "pub", Usage: "public key `FILE` of a root key (repeat)"},
				&cli.IntFlag{Name: "threshold", Value: 1, Usage: "signatures required for root acts"},
				&cli.StringFlag{Name: "expires", Required: true, Usage: "RFC 3339 time or duration from now"},
				&cli.StringFlag{Name: "previous", Usage: "rotation: the current root record `FILE`; --key must then include its threshold of its keys"},
				outFlag, passphraseFileFlag, identityFlag, jsonFlag,
			},
			Action: rootSign,
		}},
	}
}

func rootSign(c *cli.Context) error {
	now := time.Now()
	expires, err := parseTime("expires", c.String("expires"), now)
	if err != nil {
		return err
	}
	pubs, err := sign.LoadPublicKeys(c.StringSlice("pub"))
	if err != nil {
		return exitcode.Input(err)
	}
	if len(pubs) == 0 {
		return exitcode.Usagef("--pub is required: the root's public keys")
	}
	keys, err := loadSigningKeys(c, c.StringSlice("key"))
	if err != nil {
		return err
	}
	prev, err := previousRoot(c)
	if err != nil {
		return err
	}
	rec, err := delegation.NewRoot(delegation.RootParams{Keys: pubs, Threshold: c.Int("threshold"), IssuedAt: now, Expires: expires,
		Previous: prev, Signers: sign.PublicKeys(keys)})
	if err != nil {
		return exitcode.Input(err)
	}
	return finish(c, rec, keys, &rootResult{Version: rec.Version})
}

// previousRoot reads the --previous root record (a signed envelope), or
// nil without the flag. Its signatures are checked when the rotation is
// appended, against the ledger; here it only supplies the version and
// the keys that must sign.
func previousRoot(c *cli.Context) (*schemas.Root, error) {
	path := c.String("previous")
	if path == "" {
		return nil, nil
	}
	data, err := readWhole(c, path, schemas.MaxRecordSize)
	if err != nil {
		return nil, err
	}
	rec, err := delegation.ParseRootEnvelope(data)
	if err != nil {
		return nil, exitcode.Input(fmt.Errorf("--previous %s: %w", path, err))
	}
	return rec, nil
}

func delegateCommand() *cli.Command {
	return &cli.Command{
		Name:  "delegate",
		Usage: "sign a delegation: key --to may do --action on matching streams, machines and artifacts in a window",
		Flags: []cli.Flag{
			keysFlag("private key `FILE` or PKCS#11 URI (pkcs11:token=T;object=O): root keys up to the threshold, or one delegate holding delegate (re-delegation, which must narrow its own)"),
			&cli.StringFlag{Name: "to", Required: true, Usage: "the delegate's public key `FILE`"},
			&cli.StringSliceFlag{Name: "action", Required: true, Usage: "`ACTIONS` granted: one or several, comma-separated (instruct,pin), or the flag repeated: instruct, pin, delegate, revoke, quarantine, issuer"},
			&cli.StringSliceFlag{Name: "stream", Usage: "stream `PATTERN` ('*' matches within one path segment; repeat)"},
			&cli.StringSliceFlag{Name: "machine", Usage: "machine `PATTERN` (repeat)"},
			&cli.StringSliceFlag{Name: "artifact", Usage: "artifact `PATTERN` for pin (repeat)"},
			cliflags.DelegateBuilder,
			&cli.StringFlag{Name: "not-before", Value: "0s", Usage: "RFC 3339 time or duration from now"},
			&cli.StringFlag{Name: "not-after", Required: true, Usage: "RFC 3339 time or duration from now (exclusive)"},
			&cli.IntFlag{Name: "depth", Value: 0, Usage: "remaining re-delegation depth"},
			outFlag, passphraseFileFlag, identityFlag, jsonFlag, clicmd.LedgerCheckFlag,
		},
		Action: delegate,
	}
}

func delegate(c *cli.Context) error {
	p, err := cliflags.DelegationParams(c, time.Now())
	if err != nil {
		return err
	}
	if p.DelegatesNothing() {
		// Valid, but the action grants nothing: every re-delegation by
		// this key would be refused (its depth is 0).
		diag(c, levelWarning, "--action delegate with --depth 0 (the default) lets this key re-delegate nothing: every re-delegation it signs will be refused; give --depth 1 or more for as many further links")
	}
	keys, err := loadSigningKeys(c, c.StringSlice("key"))
	if err != nil {
		return err
	}
	rec, err := delegation.NewDelegation(p)
	if errors.Is(err, delegation.ErrNegativeDepth) {
		return exitcode.Usagef("--depth must not be negative")
	} else if err != nil {
		return fieldFlagErr(c, err)
	}
	return finish(c, rec, keys, &delegateResult{Delegate: p.To.ID()})
}

func pinCommand() *cli.Command {
	return &cli.Command{
		Name:      "pin",
		Usage:     "sign a pin: the digest, size, version and build metadata of BINARY for an artifact",
		ArgsUsage: "BINARY",
		Flags:     cliflags.Pin(outFlag, passphraseFileFlag, identityFlag, jsonFlag, clicmd.LedgerCheckFlag),
		Action:    pin,
	}
}

func pin(c *cli.Context) error {
	if err := wantArgs(c, 1, "one argument: the BINARY to pin"); err != nil {
		return err
	}
	now := time.Now()
	exp, err := parseTime("expires", c.String("expires"), now)
	if err != nil {
		return err
	}
	opts, err := cliflags.PinOptions(c)
	if err != nil {
		return err
	}
	opts.IssuedAt, opts.Expires = now, exp
	rec, attested, err := transfer.NewAttestedPin(c.Args().First(), opts)
	if errors.Is(err, transfer.ErrDirtyBuild) || errors.Is(err, transfer.ErrUnknownBuild) || errors.Is(err, provenance.ErrRefused) {
		return exitcode.Refused(err) // a verdict on the binary, not bad input: exit 1
	} else if err != nil {
		return fieldFlagErr(c, err)
	}
	path, err := oneKey(c, "a pin carries exactly one signature, by a key delegated pin")
	if err != nil {
		return err
	}
	res := &pinResult{Artifact: rec.Artifact, Version: rec.Version, Platform: rec.Platform, BinaryDigest: rec.Digest, Size: rec.Size, Build: rec.Build, Provenance: attested}
	return finishKeys(c, rec, []string{path}, res, fmt.Sprintf("binary %s %s %s: %s, %d bytes", rec.Artifact, rec.Version, rec.Platform, rec.Digest, rec.Size))
}

func instructCommand() *cli.Command {
	return &cli.Command{
		Name:  "instruct",
		Usage: "write an instruction for one machine: signed (--key) or, as a control plane that does not sign yet, --unsigned",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "key", Usage: "private key `FILE` or PKCS#11 URI (pkcs11:token=T;object=O) delegated instruct for this stream and machine (one: an instruction carries one signature)"},
			&cli.BoolFlag{Name: "unsigned", Usage: "write bare deterministic CBOR with no signature"},
			&cli.StringFlag{Name: "stream", Required: true, Usage: "the `STREAM` this instruction belongs to (the operator's delegation must cover it)"},
			&cli.StringFlag{Name: "machine", Required: true, Usage: "the one runner `MACHINE` that may admit it"},
			&cli.StringFlag{Name: "agent", Required: true, Usage: "artifact `NAME` of the agent to run"},
			&cli.StringFlag{Name: "agent-digest", Usage: "the agent `DIGEST` the dispatcher expects (checked against the pin)"},
			&cli.StringFlag{Name: "engine", Usage: "artifact `NAME` of the engine that applies the boundary on the runner"},
			&cli.StringFlag{Name: "engine-digest", Usage: "the engine `DIGEST` the dispatcher expects"},
			&cli.StringSliceFlag{Name: "provision", Usage: "ship `SRC=.provision/NAME`: the runner checks NAME's digest (repeat)"},
			&cli.StringFlag{Name: "brief", Usage: "read the brief from `FILE` (- for stdin)"},
			&cli.StringFlag{Name: "transport", Value: "ssh", Usage: "ssh or local"},
			&cli.StringFlag{Name: "not-before", Value: "0s", Usage: "RFC 3339 time or duration from now"},
			&cli.StringFlag{Name: "expires", Value: "1h", Usage: "RFC 3339 time or duration from now"},
			&cli.StringFlag{Name: "claim-session", Usage: "claim the stream for work `SESSION`: while the claim is live, runners refuse this stream's instructions from other sessions"},
			&cli.StringFlag{Name: "claim-until", Value: "1h", Usage: "with --claim-session: RFC 3339 time or duration from now when the claim lapses (at most 30 days); each admitted instruction of the session sets the claim's end again"},
			&cli.BoolFlag{Name: "release-claim", Usage: "with --claim-session: release that session's claim on the stream"},
			outFlag, passphraseFileFlag, identityFlag, jsonFlag,
		},
		Action: instruct,
	}
}

func instruct(c *cli.Context) error {
	unsigned := c.Bool("unsigned")
	keyPath, err := oneKey(c, "an instruction carries exactly one signature, by a key delegated instruct")
	if err != nil {
		return err
	}
	if unsigned == (keyPath != "") {
		return exitcode.Usagef("give exactly one of --key (signed) and --unsigned")
	}
	now := time.Now()
	nb, err := parseTime("not-before", c.String("not-before"), now)
	if err != nil {
		return err
	}
	exp, err := parseTime("expires", c.String("expires"), now)
	if err != nil {
		return err
	}
	var brief []byte
	if p := c.String("brief"); p != "" {
		if brief, err = readWhole(c, p, schemas.MaxRecordSize); err != nil {
			return err
		}
	}
	prov, err := transfer.Provisions(c.StringSlice("provision"))
	if err != nil {
		return exitcode.Input(err)
	}
	var engine *schemas.ArtifactRef
	if e := c.String("engine"); e != "" {
		engine = &schemas.ArtifactRef{Name: e, Digest: c.String("engine-digest")}
	} else if c.String("engine-digest") != "" {
		return exitcode.Usagef("--engine-digest needs --engine")
	}
	rec := &schemas.Instruction{
		Engine: engine, Provision: prov, Stream: c.String("stream"), Machine: c.String("machine"),
		Agent: schemas.ArtifactRef{Name: c.String("agent"), Digest: c.String("agent-digest")},
		Brief: string(brief), Transport: c.String("transport"), IssuedAt: now.Unix(), NotBefore: nb.Unix(), Expires: exp.Unix(),
	}
	switch session := c.String("claim-session"); {
	case c.IsSet("claim-session") && !schemas.ValidSession(session):
		return exitcode.Usagef("--claim-session %q: 1 to 64 letters, digits, '.', '_' or '-'", session)
	case c.IsSet("claim-session") && c.Bool("release-claim") && c.IsSet("claim-until"):
		return exitcode.Usagef("--release-claim ends the claim: give it without --claim-until")
	case c.IsSet("claim-session"):
		until, err := parseTime("claim-until", c.String("claim-until"), now)
		if err != nil {
			return err
		}
		if d := until.Unix() - now.Unix(); d <= 0 || d > schemas.MaxClaimSeconds {
			return exitcode.Usagef("--claim-until %s: must be in the future and at most 30 days (720h) from now", c.String("claim-until"))
		}
		rec.Claim = &schemas.Claim{Session: session, Until: until.Unix(), Release: c.Bool("release-claim")}
	case c.Bool("release-claim"):
		return exitcode.Usagef("--release-claim needs --claim-session (the session whose claim it ends)")
	case c.IsSet("claim-until"):
		return exitcode.Usagef("--claim-until needs --claim-session")
	}
	rec, err = delegation.NewInstruction(*rec, rand.Reader)
	if err != nil {
		return fieldFlagErr(c, err)
	}
	res, id := &instructResult{InstructionID: rec.ID}, "instruction "+rec.ID+" (the id admit and audit name it by)"
	if unsigned {
		return finish(c, rec, nil, res, id)
	}
	return finishKeys(c, rec, []string{keyPath}, res, id)
}

// fieldFlagErr is exitcode.Input for a record a signing command built that breaks
// a field rule of its kind (schemas.FieldError): the rule every reader
// applies, its message starting with the flag that gave the field
// (cliflags.FieldFlag).
func fieldFlagErr(c *cli.Context, err error) error {
	return exitcode.Input(cliflags.FieldFlag(c.Command, err))
}
