//go:build !race

package main

// raceBuild: this test binary has the race detector, which multiplies a
// process's memory; the flood tests then report peak RSS without
// asserting it.
const raceBuild = false
