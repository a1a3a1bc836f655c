package transfer_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/writ-ledger/writ/transfer"
)

// A release engineer pins a file; a runner later compares the file it
// received with the pin's digest, hashing it itself. The file here is
// not a Go binary, so it records no build and the pin needs AllowUnknown;
// a binary built by `go build` in a clean git checkout records its
// revision and pins without it.
func ExampleNewPin() {
	dir, err := os.MkdirTemp("", "writ-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	agent := filepath.Join(dir, "agent")
	if err := os.WriteFile(agent, []byte("#!/bin/sh\necho agent\n"), 0o755); err != nil {
		fmt.Println(err)
		return
	}
	opts := transfer.PinOptions{Artifact: "agent", Version: "1.2.0", Platform: "linux/amd64",
		IssuedAt: time.Unix(1795946400, 0), Expires: time.Unix(1795946400, 0).AddDate(0, 0, 30)}
	_, err = transfer.NewPin(agent, opts)
	fmt.Println("without AllowUnknown:", errors.Is(err, transfer.ErrUnknownBuild))

	opts.AllowUnknown = true
	pin, err := transfer.NewPin(agent, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("pinned", pin.Artifact, pin.Version, pin.Platform, pin.Size, "bytes")

	_, err = transfer.Compare(agent, pin.Digest)
	fmt.Println("as pinned:", err == nil)

	// The file changes after the pin: the runner's own hash differs.
	if err := os.WriteFile(agent, []byte("#!/bin/sh\necho AGENT\n"), 0o755); err != nil {
		fmt.Println(err)
		return
	}
	_, err = transfer.Compare(agent, pin.Digest)
	var m *transfer.MismatchError
	fmt.Println("after a change:", errors.As(err, &m) && m.Expected == pin.Digest && m.Actual != pin.Digest)
	// Output:
	// without AllowUnknown: true
	// pinned agent v1.2.0 linux/amd64 21 bytes
	// as pinned: true
	// after a change: true
}
