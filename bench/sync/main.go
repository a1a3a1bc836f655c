// Command sync benchmarks a runner's replica of the authority log kept
// current from the log published as C2SP tlog-tiles static files behind
// a real nginx on loopback, every step through the writ binary. On a
// generated ledger of N signed instructions (bench/mkledger) it prints:
//   - `writ ledger verify` of the writer's ledger, entries/s;
//   - `writ ledger publish` of it: files, bytes, seconds;
//   - the first `writ ledger sync` of a new replica, entries/s, and its
//     ratio to verify's rate (goal 0.8: a runner syncs at 80% of the
//     speed of verifying the same entries locally), and bytes fetched
//     per byte of entry;
//   - a second sync with nothing new (goal: 1 request, the checkpoint);
//   - rounds of 1, 10, 100 and 289 new records, each appended with
//     `writ ledger append`, published and synced: requests and bytes
//     fetched per byte of new entry.
//
// Bytes "fetched" are as sync counts them (bodies after gzip decoding);
// "wire" bytes are the bodies nginx sent (its access log), gzip applied.
// Every step's exit status is checked, and after every sync the
// replica's size and root must be the writer's; at the end the replica
// is verified end to end.
//
//	go run ./bench/sync              # N=1000000
//	go run ./bench/sync -n 3000      # smoke
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
)

const passphrase = "bench" // bench/mkledger's checkpoint key passphrase

// rounds are the appends after the first sync; extra is their total.
var rounds = []int{1, 10, 100, 289}

const extra = 400

type bench struct {
	root          string // the module
	work          string
	bin           string // the writ binary
	big, rep, pub string // the writer's ledger, the replica, the published log
	extraDir      string
}

func main() {
	n := flag.Int("n", 1000000, "signed instructions in the generated ledger")
	keep := flag.Bool("keep", false, "keep the work directory")
	flag.Parse()
	if *n < 1 {
		fail("-n must be at least 1")
	}
	root, err := os.Getwd()
	if err != nil {
		fail("%v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "bench", "mkledger")); err != nil {
		fail("run from the module root (go run ./bench/sync): %v", err)
	}
	work, err := os.MkdirTemp("", "writ-bench-sync-")
	if err != nil {
		fail("%v", err)
	}
	if *keep {
		fmt.Fprintf(os.Stderr, "bench/sync: work directory %s (kept)\n", work)
	} else {
		cleanups = append(cleanups, func() { os.RemoveAll(work) })
	}
	b := &bench{root: root, work: work, bin: filepath.Join(work, "writ"), big: filepath.Join(work, "big"),
		rep: filepath.Join(work, "rep"), pub: filepath.Join(work, "www", "authority"), extraDir: filepath.Join(work, "extra")}
	b.main(*n)
	cleanup()
}

func (b *bench) main(n int) {
	fmt.Printf("== writ ledger sync of a replica from a published log behind nginx; %d cores (GOMAXPROCS %d), %s/%s; load average %s\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, loadavg())
	defer func() {
		fmt.Printf("load average at the end %s (other work on the machine skews these figures)\n", loadavg())
	}()
	run(b.root, "go", "build", "-o", b.bin, "./cmd/writ")
	out, d := run(b.root, "go", "run", "./bench/mkledger", "-dir", b.big, "-n", fmt.Sprint(n),
		"-extra", fmt.Sprint(extra), "-extra-dir", b.extraDir)
	fmt.Printf("mkledger (%.1fs):\n  %s\n", d.Seconds(), strings.ReplaceAll(strings.TrimSpace(string(out)), "\n", "\n  "))
	var vk vkeyOut
	b.writ(&vk, "ledger", "vkey", "--dir", b.big)

	size, root, d := b.verify(b.big)
	w := b.head(b.big)
	if size != w.Size || root != w.RootHash || size != int64(n)+3 {
		fail("writ ledger verify: size %d root %s; checkpoint size %d root %s; expected %d entries", size, root, w.Size, w.RootHash, n+3)
	}
	verifyRate := float64(size) / d.Seconds()
	fmt.Printf("verify:  writ ledger verify --dir big: %d entries, wall %.2fs, %.0f entries/s (root %s)\n", size, d.Seconds(), verifyRate, root)

	var p publishOut
	d = b.writ(&p, "ledger", "publish", "--dir", b.big, "--to", b.pub)
	if p.Before != 0 || p.After != size {
		fail("writ ledger publish: %+v, expected 0 → %d", p, size)
	}
	fmt.Printf("publish: writ ledger publish --dir big: %d files, %d bytes, wall %.2fs\n", p.Files, p.Bytes, d.Seconds())
	total := entryBytes(b.pub, size)

	url, log := b.nginx()
	from := url + "/authority"
	sync := func(vkey ...string) (syncOut, time.Duration) {
		var s syncOut
		args := append([]string{"ledger", "sync", "--dir", b.rep, "--from", from}, vkey...)
		return s, b.writ(&s, args...)
	}

	s, d := sync("--vkey", vk.VKey)
	b.sameRoot("first sync", s)
	reqs, bad, wire := log.served(s.Requests)
	if s.Before != 0 || reqs != s.Requests || bad != 0 {
		fail("first sync: %+v; nginx served %d requests (%d not 200)", s, reqs, bad)
	}
	syncRate := float64(s.After) / d.Seconds()
	fmt.Printf("first sync: writ ledger sync (new replica): %d entries, wall %.2fs, %.0f entries/s; %d requests, %d bytes fetched (wire %d)\n",
		s.After, d.Seconds(), syncRate, s.Requests, s.Bytes, wire)
	fmt.Printf("sync/verify ratio: %.2f (goal 0.8: %.2f)\n", syncRate/verifyRate, syncRate/verifyRate/0.8)
	fmt.Printf("first sync bytes fetched / entry bytes: %d / %d = %.3f (wire %.3f)\n", s.Bytes, total, float64(s.Bytes)/float64(total), float64(wire)/float64(total))

	s, d = sync()
	b.sameRoot("steady-state sync", s)
	reqs, bad, wire = log.served(s.Requests)
	if s.Before != size || s.After != size || reqs != s.Requests || bad != 0 {
		fail("steady-state sync: %+v; nginx served %d requests (%d not 200)", s, reqs, bad)
	}
	fmt.Printf("steady-state sync (nothing new): %d requests (goal 1, the checkpoint), %d bytes fetched (wire %d), wall %.2fs\n",
		s.Requests, s.Bytes, wire, d.Seconds())

	b.appendRounds(size, sync, log)

	rsize, rroot, d := b.verify(b.rep)
	w = b.head(b.big)
	if rsize != w.Size || rroot != w.RootHash {
		fail("writ ledger verify of the replica: size %d root %s; the writer's: size %d root %s", rsize, rroot, w.Size, w.RootHash)
	}
	fmt.Printf("replica verified end to end: %d entries, root %s (the writer's), wall %.2fs\n", rsize, rroot, d.Seconds())
}

// appendRounds appends each round's records to the big ledger (of size
// entries), publishes and syncs them, and prints one table row a round.
func (b *bench) appendRounds(size int64, sync func(...string) (syncOut, time.Duration), log *accessLog) {
	files, err := filepath.Glob(filepath.Join(b.extraDir, "*.cose"))
	if err != nil || len(files) != extra {
		fail("%s holds %d records, not %d (%v)", b.extraDir, len(files), extra, err)
	}
	sort.Strings(files)
	pass := filepath.Join(b.work, "passphrase")
	if err := os.WriteFile(pass, []byte(passphrase+"\n"), 0o600); err != nil {
		fail("%v", err)
	}
	fmt.Println("appends, each published and synced:")
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "new entries\tnew bytes\tappend s\tpublish files\tpublish bytes\tpublish s\tsync requests\tfetched bytes\twire bytes\tfetched/new\twire/new\tsync s\t")
	for _, k := range rounds {
		batch := files[:k]
		files = files[k:]
		var newBytes int64
		for _, f := range batch {
			fi, err := os.Stat(f)
			if err != nil {
				fail("%v", err)
			}
			newBytes += fi.Size()
		}
		var p publishOut
		da := b.append(pass, batch, size)
		d := b.writ(&p, "ledger", "publish", "--dir", b.big, "--to", b.pub)
		if p.Before != size || p.After != size+int64(k) {
			fail("publish after appending %d: %+v, expected %d → %d", k, p, size, size+int64(k))
		}
		if got := entryBytes(b.pub, p.After) - entryBytes(b.pub, size); got != newBytes {
			fail("the published new entries are %d bytes, the appended files %d", got, newBytes)
		}
		s, ds := sync()
		b.sameRoot(fmt.Sprintf("sync of %d new entries", k), s)
		reqs, bad, wire := log.served(s.Requests)
		if s.Before != size || s.After != size+int64(k) || reqs != s.Requests || bad != 0 {
			fail("sync of %d new entries: %+v; nginx served %d requests (%d not 200)", k, s, reqs, bad)
		}
		fmt.Fprintf(tw, "%d\t%d\t%.2f\t%d\t%d\t%.2f\t%d\t%d\t%d\t%.1f\t%.1f\t%.2f\t\n", k, newBytes, da.Seconds(), p.Files, p.Bytes, d.Seconds(),
			s.Requests, s.Bytes, wire, float64(s.Bytes)/float64(newBytes), float64(wire)/float64(newBytes), ds.Seconds())
		size = s.After
	}
	tw.Flush()
}

// loadavg returns the 1, 5 and 15 minute load averages, or "unknown".
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

// append appends the record files with `writ ledger append` and checks
// they got the indexes after size.
func (b *bench) append(pass string, files []string, size int64) time.Duration {
	out, d := run(b.work, b.bin, append([]string{"--json", "ledger", "append", "--dir", b.big, "--passphrase-file", pass}, files...)...)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(files) {
		fail("writ ledger append of %d records printed %d results:\n%s", len(files), len(lines), out)
	}
	for i, line := range lines {
		var a appendOut
		if err := jsonUnmarshal(line, &a); err != nil || a.Index != size+int64(i) || a.Kind != "instruction" {
			fail("writ ledger append: result %d: %q (%v), expected index %d, an instruction", i, line, err, size+int64(i))
		}
	}
	return d
}

// nginx starts nginx on the published directory, with its temporary
// directory (and so its access log) under the work directory.
func (b *bench) nginx() (string, *accessLog) {
	tmp := filepath.Join(b.work, "nginx")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		fail("%v", err)
	}
	old, had := os.LookupEnv("TMPDIR")
	os.Setenv("TMPDIR", tmp)
	url, stop, err := testkit.StartNginx(filepath.Dir(b.pub))
	if had {
		os.Setenv("TMPDIR", old)
	} else {
		os.Unsetenv("TMPDIR")
	}
	if err != nil {
		fail("%v", err)
	}
	cleanups = append(cleanups, func() {
		if err := stop(); err != nil {
			fmt.Fprintln(os.Stderr, "bench/sync:", err)
		}
	})
	logs, err := filepath.Glob(filepath.Join(tmp, "writ-nginx-*", "access.log"))
	if err != nil || len(logs) != 1 {
		fail("nginx's access log under %s: found %v (%v)", tmp, logs, err)
	}
	return url, &accessLog{path: logs[0]}
}
