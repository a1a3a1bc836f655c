#!/usr/bin/env bash
# writ's ledger benchmarks, with the targets of the ledger issue and this
# machine's own ceilings, printed as ratios. Run from anywhere:
#   bench/run.sh            # N=1000000 entries for the large-ledger figures
#   N=100000 bench/run.sh   # quicker
# Needs Go; uses /usr/bin/time for peak RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-1000000}
ROUNDS=${ROUNDS:-50}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

echo "== verified appends (signed ~300-byte instructions, signature + schema + authority checked, one record per call)"
go test ./verify -run '^$' -bench 'VerifiedAppend|Ed25519Ceiling' -benchtime 20000x -count 1 | tee "$work/bench.txt"
ceiling=$(awk '/Ed25519Ceiling/ { for (i = 1; i <= NF; i++) if ($(i+1) == "verifies/s") print $i }' "$work/bench.txt")
for c in 1 8 64; do
  a=$(awk -v c="appenders=$c-" 'index($1, c) { for (i = 1; i <= NF; i++) if ($(i+1) == "appends/s") print $i }' "$work/bench.txt")
  p50=$(awk -v c="appenders=$c-" 'index($1, c) { for (i = 1; i <= NF; i++) if ($(i+1) == "p50-µs") print $i }' "$work/bench.txt")
  p99=$(awk -v c="appenders=$c-" 'index($1, c) { for (i = 1; i <= NF; i++) if ($(i+1) == "p99-µs") print $i }' "$work/bench.txt")
  echo "appenders=$c: $a appends/s (p50 ${p50} µs, p99 ${p99} µs); vs target 30000: $(ratio "$a" 30000); vs this machine's Ed25519 ceiling $ceiling/s: $(ratio "$a" "$ceiling")"
done
disk=$(awk '/appenders=64/ { for (i = 1; i <= NF; i++) if ($(i+1) == "disk/envelope") print $i }' "$work/bench.txt")
echo "disk space per entry / envelope bytes: $disk (target at most 1.5)"

echo
echo "== crash consistency: $ROUNDS rounds of SIGKILL during concurrent appends"
WRIT_CRASH_ROUNDS=$ROUNDS go test ./ledger -run '^TestCrashConsistency$' -count 1 -v | grep -E 'round [0-9]+:|^crash: |^(ok|FAIL|---)' | tail -5

echo
echo "== a ledger of $N signed instructions"
go build -o "$work/writ" ./cmd/writ
go run ./bench/mkledger -dir "$work/big" -n "$N" | tee "$work/mk.txt"
env_bytes=$(awk '/^authority:/ { print $(NF-2) }' "$work/mk.txt")
on_disk=$(du -s --block-size=1 "$work/big/authority" | cut -f1)
echo "authority log on disk: $on_disk bytes for $env_bytes envelope bytes: $(ratio "$on_disk" "$env_bytes") (target at most 1.5)"
# Peak resident memory, sampled every 50 ms: anonymous (heap, Badger's
# buffers) and file-backed (Badger mmaps its tables; those pages are page
# cache the kernel can drop, but they count in RSS).
"$work/writ" ledger verify --dir "$work/big" > /dev/null &
pid=$!; anon=0; file=0; start=$(date +%s.%N)
while kill -0 "$pid" 2>/dev/null; do
  a=$(awk '/RssAnon/ {print $2}' /proc/$pid/status 2>/dev/null || true)
  f=$(awk '/RssFile/ {print $2}' /proc/$pid/status 2>/dev/null || true)
  [ -n "$a" ] && [ "$a" -gt "$anon" ] && anon=$a
  [ -n "$f" ] && [ "$f" -gt "$file" ] && file=$f
  sleep 0.05
done
wait "$pid"
secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
echo "writ ledger verify of $N entries: ${secs}s; peak anonymous RSS $((anon / 1024)) MiB (vs 256 MiB: $(ratio "$anon" $((256 * 1024)))), peak file-backed RSS $((file / 1024)) MiB"
