//go:build !linux

package badgerfile

// ReleaseMapped is a no-op where writ has no way to drop mapped table
// pages (see mapped_linux.go).
func ReleaseMapped(string) {}
