//go:build !linux

package ledger

// releaseMapped is a no-op where writ has no way to drop mapped table
// pages (see mapped_linux.go).
func releaseMapped(string) {}
