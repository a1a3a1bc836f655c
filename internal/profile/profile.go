// Package profile profiles a whole writ run for the benchmarks in bench/:
// with WRIT_CPUPROFILE=FILE a CPU profile of the run is written to FILE,
// and with WRIT_MEMPROFILE=FILE a heap profile (allocations and the live
// heap) at its end; both are pprof files for `go tool pprof`. Unset,
// nothing is measured. A profile that cannot be written is reported as a
// warning and does not change the run's outcome.
package profile

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// The environment variables that ask for the profiles.
const (
	EnvCPU = "WRIT_CPUPROFILE"
	EnvMem = "WRIT_MEMPROFILE"
)

// Start starts the profiles the environment asks for and returns the
// function that stops and writes them. warn receives the message of a
// profile that cannot be started or written.
func Start(warn func(msg string)) (stop func()) {
	var cpu *os.File
	if path := os.Getenv(EnvCPU); path != "" {
		f, err := os.Create(path)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			warn(fmt.Sprintf("%s: %v", EnvCPU, err))
		} else {
			cpu = f
		}
	}
	return func() {
		if cpu != nil {
			pprof.StopCPUProfile()
			cpu.Close()
		}
		if path := os.Getenv(EnvMem); path != "" {
			runtime.GC()
			f, err := os.Create(path)
			if err == nil {
				err = pprof.WriteHeapProfile(f)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
			if err != nil {
				warn(fmt.Sprintf("%s: %v", EnvMem, err))
			}
		}
	}
}
