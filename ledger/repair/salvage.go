package repair

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/pb"
	"google.golang.org/protobuf/proto"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/internal/fileutil"
)

// salvage builds, in the new directory to, a Badger store from the files
// of a damaged one kept in from (and from its unlisted tables, in
// fromUnlisted, if any): every table that reads back whole (footer, index
// and every block checksum), listed at level 0 of a new MANIFEST, where
// Badger reads the newest version of each key across all of them; the
// write-ahead logs (*.mem) that are not empty; the key registry. Value
// logs are left out: Badger keeps a value there only above its 1 MiB
// threshold, and no value a log stores comes near it (an entry is at
// most 65,535 bytes); verification of the result would find one. It
// returns the names of the files it did not use (damaged), as found in
// from. The files in from are only read.
func salvage(from, fromUnlisted, to string) (skipped []string, err error) {
	if err := os.Mkdir(to, 0o700); err != nil {
		return nil, err
	}
	var tables []string
	for _, d := range []string{from, fromUnlisted} {
		names, _ := filepath.Glob(filepath.Join(d, "*.sst*"))
		tables = append(tables, names...)
	}
	used := map[uint64]bool{}
	var next uint64 = 1
	var ids []uint64
	for _, p := range tables {
		if _, err := ledger.ReadTableFile(p); err != nil {
			skipped = append(skipped, relName(from, p))
			continue
		}
		id, err := strconv.ParseUint(strings.TrimSuffix(filepath.Base(p), ".sst"), 10, 64)
		if err != nil || used[id] || id == 0 {
			for used[next] {
				next++
			}
			id = next
		}
		used[id] = true
		if err := fileutil.Copy(p, filepath.Join(to, fmt.Sprintf("%06d.sst", id))); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	logs, _ := os.ReadDir(from)
	for _, e := range logs {
		if !(strings.HasSuffix(e.Name(), ".mem") || e.Name() == "KEYREGISTRY") || !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err != nil || fi.Size() == 0 {
			continue // an empty log holds nothing (badgerfile.RemoveEmptyLogs)
		}
		if err := fileutil.Copy(filepath.Join(from, e.Name()), filepath.Join(to, e.Name())); err != nil {
			return nil, err
		}
	}
	slices.Sort(ids)
	return skipped, writeManifest(to, ids)
}

// relName names p relative to dir's parent ("authority/000003.sst",
// "authority.unlisted-tables/000009.sst").
func relName(dir, p string) string {
	if r, err := filepath.Rel(filepath.Dir(dir), p); err == nil {
		return r
	}
	return p
}

// writeManifest writes a Badger MANIFEST in dir listing the tables ids,
// all at level 0, uncompressed index keys unencrypted, blocks compressed
// as Badger's defaults compress them (as writ writes its stores): the
// format badger.ReplayManifestFile reads (magic "Bdgr", external magic 0,
// Badger's version 8, then one change set: length, CRC-32C, protobuf).
func writeManifest(dir string, ids []uint64) error {
	set := pb.ManifestChangeSet{}
	comp := uint32(badger.DefaultOptions("").Compression)
	for _, id := range ids {
		set.Changes = append(set.Changes, &pb.ManifestChange{Id: id, Op: pb.ManifestChange_CREATE,
			Level: 0, EncryptionAlgo: pb.EncryptionAlgo_aes, Compression: comp})
	}
	body, err := proto.Marshal(&set)
	if err != nil {
		return err
	}
	buf := []byte{'B', 'd', 'g', 'r', 0, 0, 0, 8}
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(body)))
	buf = binary.BigEndian.AppendUint32(buf, crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
	buf = append(buf, body...)
	f, err := os.OpenFile(filepath.Join(dir, badger.ManifestFilename), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(buf); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
