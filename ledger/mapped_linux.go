package ledger

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// releaseMapped tells the kernel this process is done, for now, with the
// pages it has touched of the store's table files (*.sst under dir).
// Badger maps every table file into memory (MAP_SHARED); a walk over a
// whole log (Verify, an audit) touches every page once, and without this
// they all stay in the process's resident set (a 1M-entry log: 230 MiB).
// MADV_DONTNEED on a shared file mapping only drops this process's page
// table entries: the pages stay in the page cache, and a later access maps
// them again from the file, unchanged (madvise(2)). Only mappings that are
// shared and name a .sst file directly under dir are touched; anything
// unexpected in /proc/self/maps is skipped. Best effort: errors are
// ignored, the walk's results never depend on it.
func releaseMapped(dir string) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return
	}
	data, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		// start-end perms offset dev inode path
		f := strings.Fields(sc.Text())
		if len(f) != 6 || len(f[1]) != 4 || f[1][3] != 's' {
			continue
		}
		path := f[5]
		if filepath.Dir(path) != abs || !strings.HasSuffix(path, ".sst") {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start || start%uint64(os.Getpagesize()) != 0 {
			continue
		}
		unix.Syscall(unix.SYS_MADVISE, uintptr(start), uintptr(end-start), unix.MADV_DONTNEED)
	}
}
