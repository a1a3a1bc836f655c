package cliflags

import (
	"fmt"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/admission"
	"github.com/writ-ledger/writ/engine"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/httpbound"
	"github.com/writ-ledger/writ/internal/serving"
	"github.com/writ-ledger/writ/ledger/publish"
	"github.com/writ-ledger/writ/logservice"
)

// HTTPLimits are the bounds of every HTTP server writ runs (witness
// serve, ledger serve): what one client, and all of them, can make it
// hold. The defaults are httpbound's; LIMITATIONS.md states the memory
// they bound.
func HTTPLimits() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "max-in-flight", Value: httpbound.DefaultMaxInFlight, Usage: "answer at most `N` requests at once, and hold at most N request bodies' bytes while they arrive; more are refused 503 with Retry-After"},
		&cli.IntFlag{Name: "max-per-client", Value: httpbound.DefaultMaxPerClient, Usage: fmt.Sprintf("at most `N` of them from one IP address, and %d × N open connections; more are refused 429 with Retry-After (behind a proxy, set it to --max-in-flight)", httpbound.ConnsPerClientFactor)},
		&cli.IntFlag{Name: "max-conns", Value: httpbound.DefaultMaxConns, Usage: "keep at most `N` connections open; more are refused 503 with Retry-After"},
		&cli.DurationFlag{Name: "read-timeout", Value: httpbound.DefaultReadTimeout, Usage: fmt.Sprintf("a request's headers must arrive within min(%s, `DURATION`), its body within DURATION", httpbound.DefaultReadHeaderTimeout)},
	}
}

// AdmissionLimits are the bounds of admission serve.
func AdmissionLimits() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "max-in-flight", Value: admission.DefaultMaxConnections, Usage: "answer at most `N` requests at once; more are refused at once (busy, with retry_after)"},
		&cli.IntFlag{Name: "max-per-client", Value: admission.DefaultMaxPerClient, Usage: "at most `N` of them from one client process (its pid, from the kernel)"},
		&cli.DurationFlag{Name: "read-timeout", Value: admission.DefaultRequestTimeout, Usage: "a request must arrive whole within `DURATION`"},
	}
}

// Writer are ledger serve --write's own flags, but for those it shares
// with other commands (the witness timeout, the key's unlocking).
func Writer() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "write", Usage: "serve the authority log's writer too: take records at POST /writ/v1/add (writ ledger append --to), check and append them"},
		&cli.StringFlag{Name: "tls-cert", Usage: "serve HTTPS with this certificate chain `FILE` (PEM; read again on SIGHUP); without it, --write listens on loopback only"},
		&cli.StringFlag{Name: "tls-key", Usage: "the certificate's private key `FILE` (PEM)"},
		&cli.StringFlag{Name: "client-ca", Usage: "with --tls-cert: take only clients with a certificate from these CAs (`FILE`, PEM)"},
		&cli.IntFlag{Name: "max-records", Value: logservice.DefaultMaxRecords, Usage: "at most `N` records in one submission (413 past it)"},
		&cli.Float64Flag{Name: "rate", Value: logservice.DefaultRate, Usage: "records one IP address may submit per second, on average (429 with Retry-After past it)"},
		&cli.IntFlag{Name: "burst", Value: logservice.DefaultBurst, Usage: "records one IP address may submit at once (at least --max-records)"},
		&cli.IntFlag{Name: "max-clients", Value: logservice.DefaultMaxClients, Usage: "IP addresses whose rate is kept at once (503 for a new one past it)"},
		&cli.StringFlag{Name: "client-ip-header", Usage: "behind a proxy on this host: rate-limit by the client address the proxy sets in this `HEADER` (X-Real-IP), not by the proxy's"},
		&cli.StringFlag{Name: "policy", Usage: "with --write: witness policy `FILE` (C2SP tlog-policy): gather its witnesses' cosignatures after each commit, and serve the last checkpoint its quorum cosigned"},
	}
}

// MaxAnswer bounds the memory ledger serve's answers hold, all requests
// together (publish.ServeOptions.MaxAnswerBytes), in MiB.
var MaxAnswer = &cli.IntFlag{Name: "max-answer-mib", Value: publish.DefaultMaxAnswerBytes >> 20,
	Usage: fmt.Sprintf("hold at most `MIB` mebibytes of answers in memory at once, all clients together (bodies not yet written, gzip at work; at least %d); past it, 503 with Retry-After", publish.MinMaxAnswerBytes>>20)}

// AnswerBytes reads MaxAnswer, in bytes (serving.AnswerBytes).
func AnswerBytes(c *cli.Context) (int64, error) { return serving.AnswerBytes(c.Int(MaxAnswer.Name)) }

// ApplyAdmissionLimits reads AdmissionLimits into the server's fields
// (serving.AdmissionLimits.Apply).
func ApplyAdmissionLimits(c *cli.Context, s *admission.Server) error {
	return serving.AdmissionLimits{MaxInFlight: c.Int("max-in-flight"), MaxPerClient: c.Int("max-per-client"),
		ReadTimeout: c.Duration("read-timeout")}.Apply(s)
}

// Engine are the flags naming a distributed engine (engine.Config):
// required for ledger migrate, optional for ledger serve --write.
func Engine(required bool) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "dsn", Required: required, EnvVars: []string{"WRIT_ENGINE_DSN"}, Usage: "the engine database's `DSN` (user:password@tcp(host:3306)/dbname; $WRIT_ENGINE_DSN keeps the password out of the process list)"},
		&cli.StringFlag{Name: "bucket", Required: required, Usage: "the S3 `BUCKET` that holds the log (it must exist)"},
		&cli.StringFlag{Name: "s3-endpoint", Usage: "the object store's base `URL` when it is not AWS S3 (addressed path-style)"},
	}
}

// EngineConfig reads Engine's flags, with the object store's credentials
// from the environment (engine.LoadAWS): nil when --dsn and --bucket
// are both unset. Errors: bad input for one without the other, or for
// credentials that are missing.
func EngineConfig(c *cli.Context) (*engine.Config, error) {
	dsn, bucket := c.String("dsn"), c.String("bucket")
	if dsn == "" && bucket == "" {
		return nil, nil
	} else if dsn == "" || bucket == "" {
		return nil, exitcode.Usagef("--dsn and --bucket come together: the engine's database and its bucket")
	}
	engine.QuietLogs()
	aws, err := engine.LoadAWS(c.Context, c.String("s3-endpoint"))
	if err != nil {
		return nil, exitcode.Input(err)
	}
	return &engine.Config{DSN: dsn, Bucket: bucket, Endpoint: c.String("s3-endpoint"), AWS: aws}, nil
}
