// Command runnerkey builds the agent binary bench/runnerkey.sh admits: a
// real Go program committed to a fresh git repository (so the binary
// carries real build metadata), padded with an embedded file of
// pseudo-random bytes to -mib MiB, as bench/admission builds its agent
// (testkit.BuildAgentIn). It prints the binary's path.
//
//	go run ./bench/runnerkey -dir /tmp/agent -mib 64
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/writ-ledger/writ/internal/testkit"
)

func main() {
	dir := flag.String("dir", "", "an empty `DIR` to build in (created if absent)")
	mib := flag.Int("mib", 64, "size of the agent binary, MiB")
	flag.Parse()
	if *dir == "" || *mib < 3 {
		fmt.Fprintln(os.Stderr, "bench/runnerkey: -dir is required, and -mib must be at least 3")
		os.Exit(2)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "bench/runnerkey:", err)
		os.Exit(1)
	}
	// The stand-in agent itself is about 2 MiB (bench/admission's setup).
	path, err := testkit.BuildAgentIn(*dir, testkit.BuildOptions{PadBytes: *mib<<20 - 2<<20})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/runnerkey: building the agent:", err)
		os.Exit(1)
	}
	fmt.Println(path)
}
