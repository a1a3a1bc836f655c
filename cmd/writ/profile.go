package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
)

// Profiling for the benchmarks in bench/: with WRIT_CPUPROFILE=FILE a
// command writes a CPU profile of its whole run to FILE, and with
// WRIT_MEMPROFILE=FILE a heap profile (allocations and the live heap) at
// its end; both are pprof files for `go tool pprof`. Unset, nothing is
// measured. A profile that cannot be written is reported on stderr and
// does not change the command's exit code.
const (
	envCPUProfile = "WRIT_CPUPROFILE"
	envMemProfile = "WRIT_MEMPROFILE"
)

// startProfiles starts the profiles the environment asks for and returns
// the function that stops and writes them.
func startProfiles(stderr io.Writer, asJSON bool) (stop func()) {
	var cpu *os.File
	if path := os.Getenv(envCPUProfile); path != "" {
		f, err := os.Create(path)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			writeDiag(stderr, asJSON, levelWarning, fmt.Sprintf("%s: %v", envCPUProfile, err))
		} else {
			cpu = f
		}
	}
	return func() {
		if cpu != nil {
			pprof.StopCPUProfile()
			cpu.Close()
		}
		if path := os.Getenv(envMemProfile); path != "" {
			runtime.GC()
			f, err := os.Create(path)
			if err == nil {
				err = pprof.WriteHeapProfile(f)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
			if err != nil {
				writeDiag(stderr, asJSON, levelWarning, fmt.Sprintf("%s: %v", envMemProfile, err))
			}
		}
	}
}
