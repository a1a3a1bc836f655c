// Command generate rebuilds writ's published test vectors
// (testvectors/data/*.json) from testvectors.Build. The output is the same
// on every run; TestVectorsUpToDate fails when the committed files differ.
//
//	go run ./testvectors/generate
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/writ-ledger/writ/testvectors"
)

func main() {
	dir := filepath.Join("testvectors", "data")
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	files := testvectors.Build()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, files[n], 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "generate: %v\n", err)
			os.Exit(1)
		}
		fmt.Println(p)
	}
}
