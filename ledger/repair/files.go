package repair

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dgraph-io/badger/v4"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/internal/badgerfile"
	"github.com/writ-ledger/writ/ledger/replica"
)

// storeFiles is what Repair reads of a damaged store's files, without
// Badger and without changing them: which tables its MANIFEST lists and
// which do not read back, the log's stored verifier key and origin, and
// every signed checkpoint the files still hold.
type storeFiles struct {
	manifest string          // why the MANIFEST does not read back whole ("" when it does)
	listed   map[uint64]bool // the tables the MANIFEST lists (when it reads back whole)
	present  map[uint64]bool // the tables in the store directory
	bad      map[uint64]bool // those of them that do not read back
	badNames []string        // every table that does not read back, as relName names it
	vkey     string          // the newest m/vkey the tables that read back hold ("" if none)
	origin   string          // the newest m/origin, likewise
	signed   []signedIn      // every signed checkpoint found, and where
}

// signedIn is a signed checkpoint found in a store's files.
type signedIn struct {
	note  []byte
	where string // the file, as relName names it
}

// readStoreFiles reads the store at store (and its unlisted tables, in
// store+ledger.UnlistedSuffix) as storeFiles.
func readStoreFiles(store string) storeFiles {
	f := storeFiles{listed: map[uint64]bool{}, present: map[uint64]bool{}, bad: map[uint64]bool{}}
	f.readManifest(store)
	var tables []string
	for _, d := range []string{store, store + ledger.UnlistedSuffix} {
		names, _ := filepath.Glob(filepath.Join(d, "*.sst*"))
		tables = append(tables, names...)
	}
	var vkeyVer, originVer uint64
	for _, p := range tables {
		id, idErr := strconv.ParseUint(strings.TrimSuffix(filepath.Base(p), ".sst"), 10, 64)
		inStore := filepath.Dir(p) == filepath.Clean(store) && idErr == nil
		if inStore {
			f.present[id] = true
		}
		tf, err := ledger.ReadTableFile(p)
		if err != nil {
			if inStore {
				f.bad[id] = true
			}
			f.badNames = append(f.badNames, relName(store, p))
			continue
		}
		if tf.VKey != "" && tf.VKeyVersion >= vkeyVer {
			f.vkey, vkeyVer = tf.VKey, tf.VKeyVersion
		}
		if tf.Origin != "" && tf.OriginVersion >= originVer {
			f.origin, originVer = tf.Origin, tf.OriginVersion
		}
		for _, n := range tf.Signed {
			f.signed = append(f.signed, signedIn{n, relName(store, p)})
		}
	}
	return f
}

// readManifest replays the MANIFEST of store with Badger's reader and
// records the tables it lists, or why it does not read back whole.
func (f *storeFiles) readManifest(store string) {
	mf, err := os.Open(filepath.Join(store, badger.ManifestFilename))
	if err != nil {
		f.manifest = "missing or unreadable"
		return
	}
	defer mf.Close()
	m, end, err := badger.ReplayManifestFile(mf, 0, badger.DefaultOptions(store))
	fi, serr := mf.Stat()
	switch {
	case err != nil:
		f.manifest = "does not read as a Badger MANIFEST"
	case serr != nil || end != fi.Size():
		f.manifest = "cut short: it ends inside a record"
	default:
		for id := range m.Tables {
			f.listed[id] = true
		}
	}
}

// readLogs finds the signed checkpoints of the log origin that the
// write-ahead and value logs of store hold: Badger writes each value
// there as it is, so a checkpoint is found as the bytes of a signed note
// (floor keeps only those whose signature verifies).
func (f *storeFiles) readLogs(store, origin string) {
	if origin == "" {
		return
	}
	entries, _ := os.ReadDir(store)
	for _, e := range entries {
		if !badgerfile.IsWriteLog(e.Name()) || !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(store, e.Name()))
		if err != nil {
			continue
		}
		for _, n := range notesIn(b, origin) {
			f.signed = append(f.signed, signedIn{n, relName(store, filepath.Join(store, e.Name()))})
		}
	}
}

// notesIn returns every run of bytes in b shaped as a signed note whose
// text starts with the line origin: up to eight text lines, a blank line,
// and at least one signature line ("— name signature").
func notesIn(b []byte, origin string) [][]byte {
	var out [][]byte
	start := []byte(origin + "\n")
	for i := 0; ; {
		j := bytes.Index(b[i:], start)
		if j < 0 {
			return out
		}
		at := i + j
		i = at + 1
		rest := b[at:min(len(b), at+formats.MaxCheckpointSize)]
		off, lines := 0, 0
		for ; lines < 8; lines++ {
			nl := bytes.IndexByte(rest[off:], '\n')
			if nl <= 0 {
				break
			}
			off += nl + 1
		}
		if lines < 3 || off >= len(rest) || rest[off] != '\n' {
			continue
		}
		off++
		sigs := 0
		for bytes.HasPrefix(rest[off:], []byte(formats.SigLinePrefix)) {
			nl := bytes.IndexByte(rest[off:], '\n')
			if nl < 0 {
				break
			}
			off += nl + 1
			sigs++
		}
		if sigs > 0 {
			out = append(out, bytes.Clone(rest[:off]))
		}
	}
}

// lost says why the entries of the store cannot all be recovered from its
// files, or "": a table its MANIFEST lists is missing or does not read
// back, or, when the MANIFEST does not read back whole (so that no one can
// say which tables it listed), any table does not read back.
func (f *storeFiles) lost() string {
	if f.manifest != "" {
		if len(f.badNames) > 0 {
			return fmt.Sprintf("%s does not read back, and the MANIFEST (%s) cannot say whether the store needs it", strings.Join(f.badNames, ", "), f.manifest)
		}
		return ""
	}
	ids := make([]uint64, 0, len(f.listed))
	for id := range f.listed {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		name := fmt.Sprintf("%06d.sst", id)
		switch {
		case !f.present[id]:
			return name + " is missing, and the MANIFEST lists it"
		case f.bad[id]:
			return name + " does not read back, and the MANIFEST lists it"
		}
	}
	return ""
}

// floor returns the newest checkpoint among the signed ones the files
// hold that verifies under one of keys, as a replica.Floor, and
// whether there is one. It verifies them from the largest size they
// claim down, until one verifies.
func (f *storeFiles) floor(keys ...*formats.LogKey) (replica.Floor, bool) {
	claimed := func(s signedIn) int64 {
		lines := strings.SplitN(string(s.note), "\n", 3)
		if len(lines) < 3 {
			return -1
		}
		n, err := strconv.ParseInt(lines[1], 10, 64)
		if err != nil {
			return -1
		}
		return n
	}
	signed := slices.Clone(f.signed)
	slices.SortStableFunc(signed, func(a, b signedIn) int { return cmp.Compare(claimed(b), claimed(a)) })
	for _, s := range signed {
		for _, k := range keys {
			if cp, err := formats.OpenCheckpoint(s.note, k); err == nil {
				return replica.Floor{Checkpoint: cp, Where: "a signed checkpoint in " + s.where}, true
			}
		}
	}
	return replica.Floor{}, false
}
