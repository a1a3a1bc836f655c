package main

import (
	"fmt"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/admission"
	"github.com/writ-ledger/writ/internal/httpbound"
	"github.com/writ-ledger/writ/internal/serving"
	"github.com/writ-ledger/writ/ledger/publish"
)

// httpLimitFlags are the bounds of every HTTP server writ runs (witness
// serve, ledger serve): what one client, and all of them, can make it
// hold. The defaults are httpbound's; LIMITATIONS.md states the memory
// they bound.
func httpLimitFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "max-in-flight", Value: httpbound.DefaultMaxInFlight, Usage: "answer at most `N` requests at once; more are refused 503 with Retry-After"},
		&cli.IntFlag{Name: "max-per-client", Value: httpbound.DefaultMaxPerClient, Usage: fmt.Sprintf("at most `N` of them from one IP address, and %d × N open connections; more are refused 429 with Retry-After (behind a proxy, set it to --max-in-flight)", httpbound.ConnsPerClientFactor)},
		&cli.IntFlag{Name: "max-conns", Value: httpbound.DefaultMaxConns, Usage: "keep at most `N` connections open; more are refused 503 with Retry-After"},
		&cli.DurationFlag{Name: "read-timeout", Value: httpbound.DefaultReadTimeout, Usage: fmt.Sprintf("a request's headers must arrive within min(%s, `DURATION`), its body within DURATION", httpbound.DefaultReadHeaderTimeout)},
	}
}

// maxAnswerFlag bounds the memory ledger serve's answers hold, all
// requests together (publish.ServeOptions.MaxAnswerBytes), in MiB.
var maxAnswerFlag = &cli.IntFlag{Name: "max-answer-mib", Value: publish.DefaultMaxAnswerBytes >> 20,
	Usage: fmt.Sprintf("hold at most `MIB` mebibytes of answers in memory at once, all clients together (bodies not yet written, gzip at work; at least %d); past it, 503 with Retry-After", publish.MinMaxAnswerBytes>>20)}

// maxAnswerBytes reads maxAnswerFlag, in bytes (serving.AnswerBytes).
func maxAnswerBytes(c *cli.Context) (int64, error) {
	return serving.AnswerBytes(c.Int(maxAnswerFlag.Name))
}

// admissionLimitFlags are the bounds of admission serve.
func admissionLimitFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "max-in-flight", Value: admission.DefaultMaxConnections, Usage: "answer at most `N` requests at once; more are refused at once (busy, with retry_after)"},
		&cli.IntFlag{Name: "max-per-client", Value: admission.DefaultMaxPerClient, Usage: "at most `N` of them from one client process (its pid, from the kernel)"},
		&cli.DurationFlag{Name: "read-timeout", Value: admission.DefaultRequestTimeout, Usage: "a request must arrive whole within `DURATION`"},
	}
}

// admissionLimits reads admissionLimitFlags into the server's fields
// (serving.AdmissionLimits.Apply).
func admissionLimits(c *cli.Context, s *admission.Server) error {
	return serving.AdmissionLimits{MaxInFlight: c.Int("max-in-flight"), MaxPerClient: c.Int("max-per-client"),
		ReadTimeout: c.Duration("read-timeout")}.Apply(s)
}
