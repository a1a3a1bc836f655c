package main

import (
	"cmp"
	"context"
	"fmt"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/cliflags"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/serving"
	"github.com/writ-ledger/writ/logservice"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify"
)

// ledgerAppendTo submits entries to the writer service at --to and
// prints what a local append prints, once the answer verifies.
func ledgerAppendTo(c *cli.Context, entries [][]byte) error {
	if f := cliflags.Given(c, "policy", "passphrase-file", "identity"); f != nil {
		return exitcode.Usagef("--%s is for a local append (--dir): the service holds the key and its policy", f[0])
	}
	vkey, err := logKeyValue(c, "vkey")
	if err != nil {
		return err
	} else if vkey == nil {
		return exitcode.Usagef("--to needs --vkey: the service's answer is verified under the log's key (writ ledger vkey --dir DIR on the writer)")
	}
	hc, err := logservice.HTTPClient(c.String("client-cert"), c.String("client-key"))
	if err != nil {
		return exitcode.Input(fmt.Errorf("--client-cert, --client-key: %w", err))
	}
	res, err := (&logservice.Client{URL: c.String("to"), VKey: vkey, HTTP: hc}).Append(c.Context, entries)
	if err != nil {
		return logservice.CommandError(err, c.String("to"), c.Args().Slice())
	}
	for _, e := range res.Entries {
		a := delegation.Applied{Index: e.Index, Kind: schemas.Kind(e.Kind), Digest: e.Digest}
		if err := emitSorted(c, a, fmt.Sprintf("%d %s %s", a.Index, a.Kind, a.Digest)); err != nil {
			return err
		}
	}
	return nil
}

// ledgerServeWrite is ledger serve --write (serving.Writer).
func ledgerServeWrite(c *cli.Context, answerBytes int64) error {
	if c.Bool("decisions") {
		return exitcode.Usagef("--write serves the authority log; a runner's decision log is written by its admissions")
	}
	eng, err := cliflags.EngineConfig(c)
	if err != nil || (eng != nil && c.String("policy") != "") {
		return cmp.Or(err, exitcode.Usagef("--policy with --dsn: witness cosignatures of a log on an engine are not gathered yet (LIMITATIONS.md)"))
	}
	policy, err := readPolicy(c)
	if err != nil {
		return err
	}
	l, err := openAuthorityKeyed(c)
	if err != nil {
		return err
	}
	defer l.Close()
	scheme := map[bool]string{true: "https", false: "http"}[c.String("tls-cert") != ""]
	banner := func(addr string) string {
		return fmt.Sprintf("serving authority log %s for writing at %s://%s/ (verifier key %s)%s", l.Origin(), scheme, addr, l.VerifierKey(),
			map[bool]string{true: ", one of its writers on the engine of bucket " + c.String("bucket")}[eng != nil])
	}
	return serving.Writer{HTTP: listenServer(c, banner),
		TLS: serving.TLSFiles{Cert: c.String("tls-cert"), Key: c.String("tls-key"), ClientCA: c.String("client-ca")},
		Options: logservice.Options{MaxRecords: c.Int("max-records"), Rate: c.Float64("rate"), Burst: c.Int("burst"),
			MaxClients: c.Int("max-clients"), MaxAnswerBytes: answerBytes, Policy: policy, WitnessTimeout: c.Duration("witness-timeout"), ClientIPHeader: c.String("client-ip-header"),
			Warn: func(format string, args ...any) { diag(c, levelWarning, format, args...) }},
		Loaded: func(a *verify.Authority) {
			if note := a.ReplayNote(); note != "" {
				diag(c, levelNote, "%s", note)
			}
		},
		Warn:   func(format string, args ...any) { diag(c, levelWarning, format, args...) },
		Engine: eng,
	}.Run(context.Background(), l)
}
