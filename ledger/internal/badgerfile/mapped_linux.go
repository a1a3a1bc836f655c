package badgerfile

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ReleaseMapped asks the kernel to reclaim the pages this process has
// touched of the store's table files (*.sst under dir). Badger maps every
// table file into memory (MAP_SHARED); a walk over a whole log (Verify, an
// audit) touches every page once, and without this they all stay in the
// process's resident set (a 1M-entry log: 230 MiB). MADV_PAGEOUT (Linux
// 5.4+; elsewhere the call fails and nothing happens) reclaims clean file
// pages, which a later access reads again from the file, unchanged. It is
// advice that never changes memory contents, whatever the range holds by
// the time it is given: between reading /proc/self/maps and the call, a
// compaction may unmap a table and the process may reuse the range for
// private memory (MADV_DONTNEED would zero that; a hostile review showed
// it, TestReleaseMappedReusedRange). Only shared mappings naming a .sst
// file directly under dir are advised; anything unexpected in
// /proc/self/maps is skipped. Best effort: errors are ignored, and no
// result depends on it.
func ReleaseMapped(dir string) {
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
		unix.Syscall(unix.SYS_MADVISE, uintptr(start), uintptr(end-start), unix.MADV_PAGEOUT)
	}
}
