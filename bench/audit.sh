#!/usr/bin/env bash
# The auditor's cost: `writ audit` of a generated ledger of N entries (half
# signed authority records, half decisions; bench/mkledger makes it), with
# entries verified per second and peak RSS, against the issue's targets
# (40,000 entries/s, peak RSS under 256 MiB).
#   bench/audit.sh              # N=1000000
#   N=100000 bench/audit.sh     # quicker
# Needs Go and /usr/bin/time (GNU time, for peak RSS).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-1000000}
command -v /usr/bin/time > /dev/null || { echo "bench/audit.sh: /usr/bin/time is required" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/writ" ./cmd/writ
go run ./bench/mkledger -dir "$work/big" -n $((N / 2)) -decisions $((N / 2)) > "$work/mk.txt"
t0=$(date +%s%N)
/usr/bin/time -f '%M' -o "$work/rss" "$work/writ" --json audit --ledger "$work/big" > "$work/audit.json"
t1=$(date +%s%N)
grep -q '"ok":true' "$work/audit.json" || { echo "bench/audit.sh: the generated ledger did not audit" >&2; exit 1; }
entries=$(grep -o '"entries_verified":[0-9]*' "$work/audit.json" | cut -d: -f2)
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
rate=$(awk -v n="$entries" -v s="$secs" 'BEGIN { printf "%.0f", n / s }')
rss=$(( $(cat "$work/rss") / 1024 ))
echo "== writ audit of $entries entries ($((N / 2)) signed authority records, $((N / 2)) decisions); $(nproc) cores"
echo "wall ${secs}s, ${rate} entries/s (target 40000: $(awk -v r="$rate" 'BEGIN { printf "%.2f", r / 40000 }')), peak RSS ${rss} MiB (target under 256: $(awk -v m="$rss" 'BEGIN { printf "%.2f", m / 256 }'))"
