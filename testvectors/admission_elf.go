package testvectors

import (
	"encoding/binary"
	"strings"
)

// Go's module-info sentinels (cmd/go/internal/modload infoStart and
// infoEnd): debug/buildinfo strips 16 bytes from each end of the module
// information.
const (
	modInfoStart = "0w\xaf\x0c\x92t\b\x02A\xe1\xc1\x07\xe6\xd6\x18\xe6"
	modInfoEnd   = "\xf92C1\x86\x18 r\x00\x82B\x10A\x16\xd8\xf2"
)

// buildInfoELF returns a minimal ELF64 little-endian x86-64 file whose
// only content is a Go build-information blob (the format debug/buildinfo
// reads since Go 1.18: the 14-byte magic "\xff Go buildinf:", pointer
// size, flags 2 for inline strings, padding to 32 bytes, then the Go
// version and the module information, each a uvarint length and its
// bytes). One writable PT_LOAD segment maps the whole file at 0x400000.
// It executes nothing: it stands in for an agent binary that records
// the module path, GOOS/GOARCH and a clean VCS revision, in a few hundred
// bytes instead of a real Go binary's megabytes.
func buildInfoELF(goVersion, path, version, revision, vcsTime string) []byte {
	mod := strings.Join([]string{
		"path\t" + path,
		"mod\t" + path + "\t" + version + "\t",
		"build\t-compiler=gc",
		"build\tGOARCH=amd64",
		"build\tGOOS=linux",
		"build\tvcs=git",
		"build\tvcs.revision=" + revision,
		"build\tvcs.time=" + vcsTime,
		"build\tvcs.modified=false",
	}, "\n") + "\n"
	blob := []byte("\xff Go buildinf:")
	blob = append(blob, 8, 2)
	blob = append(blob, make([]byte, 16)...)
	blob = binary.AppendUvarint(blob, uint64(len(goVersion)))
	blob = append(blob, goVersion...)
	mod = modInfoStart + mod + modInfoEnd
	blob = binary.AppendUvarint(blob, uint64(len(mod)))
	blob = append(blob, mod...)

	const ehsize, phsize, blobAt, base = 64, 56, 128, 0x400000
	size := uint64(blobAt + len(blob))
	f := make([]byte, blobAt, size)
	le := binary.LittleEndian
	copy(f, "\x7fELF\x02\x01\x01") // 64-bit, little-endian, ELF version 1
	le.PutUint16(f[16:], 2)        // ET_EXEC
	le.PutUint16(f[18:], 0x3e)     // EM_X86_64
	le.PutUint32(f[20:], 1)        // EV_CURRENT
	le.PutUint64(f[24:], base)     // entry
	le.PutUint64(f[32:], ehsize)   // program headers follow the ELF header
	le.PutUint16(f[52:], ehsize)
	le.PutUint16(f[54:], phsize)
	le.PutUint16(f[56:], 1) // one program header
	ph := f[ehsize:]
	le.PutUint32(ph[0:], 1)     // PT_LOAD
	le.PutUint32(ph[4:], 4|2)   // PF_R|PF_W: the data segment debug/buildinfo searches
	le.PutUint64(ph[16:], base) // vaddr (offset 0)
	le.PutUint64(ph[24:], base) // paddr
	le.PutUint64(ph[32:], size) // filesz
	le.PutUint64(ph[40:], size) // memsz
	le.PutUint64(ph[48:], 0x1000)
	return append(f, blob...)
}
