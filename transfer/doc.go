// Package transfer owns what a runner receives and executes: streaming
// digests of files, comparison with a digest someone else computed, Go
// build metadata read from binaries, and pins.
//
// # Digests
//
// A digest is "sha256:" and 64 lowercase hex digits (FIPS 180-4 SHA-256 of
// the file's bytes). Files are hashed as they stream through a fixed
// buffer, so memory does not grow with file size. A digest reported by a
// sender is never trusted: [Compare] hashes the local file and compares.
//
// # Build metadata
//
// [ReadBuild] reads a Go binary's build information (debug/buildinfo): Go
// version, main package and module, and the vcs settings vcs, vcs.revision,
// vcs.time and vcs.modified. A build is "dirty" when vcs.modified=true (built
// from a modified tree) and "unknown" when no vcs.revision is recorded
// (built with -buildvcs=false, by go run, outside a repository, or not a Go
// binary at all). [NewPin] refuses both unless explicitly allowed, and the
// pin always records what was seen.
package transfer
