#!/usr/bin/env bash
# writ's performance figures, each as a ratio to its target, measured in
# one run against this machine's own Ed25519 verification ceilings (each
# measured right before its figure: a shared machine's speed drifts, by a
# third or more within a run):
#   - verified appends, 64 appenders (and 1 and 1,024, to show the commit
#     latency and the CPU-bound rate), against the crypto/ed25519 ceiling
#     (target 0.8), and against writ's verifier and batch ceilings;
#   - `writ audit` of N signed authority entries and of N entries half of
#     them decisions, and `writ ledger verify` of the first: entries/s
#     against the ceiling (target 0.8), peak RSS against 256 MiB;
#   - proofs at N entries: p50 against 100 µs, p99 against 1 ms;
#   - `writ admission serve`: everything but hashing, p99 against the
#     fsync floor's p99 + 0.5 ms; decisions/s with 16 clients, against the
#     group commit's and the hashing limits (no target).
# Every figure's CPU profile (pprof) goes to $PROFILES, and the top of each
# is printed at the end; without PROFILES=DIR they are in a temporary
# directory removed on exit.
#
#   bench/perf.sh        # N=1000000: about 10 minutes on 2 cores, 1 GiB of disk in $TMPDIR
#   N=3000 APPENDS=2000 ADMISSION="-agent-mib 4 -requests 20 -seconds 1" bench/perf.sh
#                        # the CI smoke run: about a minute; start-up dominates, so its
#                        # "NOT met" verdicts say nothing about the targets
#
# Needs Go and GNU time (/usr/bin/time) for peak RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v /usr/bin/time > /dev/null || { echo "bench/perf.sh: GNU time (/usr/bin/time) is required for peak RSS" >&2; exit 2; }
N=${N:-1000000}
APPENDS=${APPENDS:-40000}
ADMISSION=${ADMISSION:-}
work=$(mktemp -d)
kept=${PROFILES:-}
PROFILES=${PROFILES:-$work/profiles}
mkdir -p "$PROFILES"
trap 'rm -rf "$work"' EXIT

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# verdict RATIO TARGET low|high: "met" when RATIO is at least (high) or at
# most (low) TARGET.
verdict() { awk -v r="$1" -v t="$2" -v w="$3" 'BEGIN { ok = (w == "high") ? r >= t : r <= t; print ok ? "met" : "NOT met" }'; }
metric() { # metric FILE BENCH UNIT: the value before UNIT on BENCH's line
  awk -v b="$2" -v u="$3" 'index($1, b) == 1 { for (i = 1; i < NF; i++) if ($(i+1) == u) print $i }' "$1" | tail -1
}

# ceilings sets std, writv, batch and torsion: verifications per second on
# every core (sign's ceiling benchmarks).
ceilings() {
  go test ./sign -run '^$' -bench 'Ceiling|TorsionCheck' -benchtime 1s -count 1 > "$work/ceil.txt"
  std=$(metric "$work/ceil.txt" BenchmarkCeilingStdlib verifies/s)
  writv=$(metric "$work/ceil.txt" BenchmarkCeilingWrit verifies/s)
  batch=$(metric "$work/ceil.txt" BenchmarkCeilingBatch64 verifies/s)
  torsion=$(metric "$work/ceil.txt" BenchmarkTorsionCheckR verifies/s)
  echo "ceilings, $(nproc) cores: crypto/ed25519 $std/s; writ's verifier $writv/s; voi batch of 64 $batch/s (cofactored); per-R torsion check $torsion/s"
}

# peak CMD...: runs CMD (stdout to $work/peak.out) and sets secs, rss (its
# peak resident MiB, the kernel's high-water mark through GNU time), and
# anon and file (the largest anonymous and file-backed parts seen, sampled
# every 0.25 s with shell builtins only, so that sampling costs the
# measured command no CPU).
peak() {
  /usr/bin/time -f '%M' -o "$work/maxrss" "$@" > "$work/peak.out" &
  local pid=$! child k v _ start
  anon=0 file=0 start=$(date +%s.%N)
  while kill -0 "$pid" 2> /dev/null; do
    child=$(cat "/proc/$pid/task/$pid/children" 2> /dev/null || true)
    if [ -n "$child" ] && [ -r "/proc/${child%% *}/status" ]; then
      while read -r k v _; do
        case $k in
          RssAnon:) [ "$v" -gt "$anon" ] && anon=$v ;;
          RssFile:) [ "$v" -gt "$file" ] && file=$v ;;
        esac
      done < "/proc/${child%% *}/status" 2> /dev/null || true
    fi
    sleep 0.25
  done
  wait "$pid"
  secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
  rss=$(($(cat "$work/maxrss") / 1024)) anon=$((anon / 1024)) file=$((file / 1024))
}

go build -o "$work/writ" ./cmd/writ

echo "== verified appends: signed ~300-byte instructions, each checked (signature, schema, authority) and durable, one per call, 64 appenders"
ceilings
go test ./verify -run '^$' -bench 'VerifiedAppend/appenders=64$' -benchtime "${APPENDS}x" -count 1 \
  -cpuprofile "$PROFILES/append.cpu" -o "$PROFILES/verify.test" > "$work/append.txt"
a=$(metric "$work/append.txt" BenchmarkVerifiedAppend/appenders=64 appends/s)
p50=$(metric "$work/append.txt" BenchmarkVerifiedAppend/appenders=64 p50-µs)
p99=$(metric "$work/append.txt" BenchmarkVerifiedAppend/appenders=64 p99-µs)
r=$(ratio "$a" "$std")
echo "appends, 64 appenders: $a/s (latency p50 $p50 µs, p99 $p99 µs); / crypto/ed25519 ceiling: $r (target 0.8: $(verdict "$r" 0.8 high)); / writ's verifier: $(ratio "$a" "$writv"); / batch: $(ratio "$a" "$batch")"
go test ./verify -run '^$' -bench 'VerifiedAppend/appenders=(1|1024)$' -benchtime "${APPENDS}x" -count 1 > "$work/append2.txt"
for c in 1 1024; do
  a=$(metric "$work/append2.txt" "BenchmarkVerifiedAppend/appenders=$c-" appends/s)
  p50=$(metric "$work/append2.txt" "BenchmarkVerifiedAppend/appenders=$c-" p50-µs)
  note="the latency of one durable commit when alone"
  [ "$c" = 1 ] || note="the group commit full: the CPU-bound rate"
  echo "  for comparison, $c appender(s): $a/s (latency p50 $p50 µs; $note); / crypto/ed25519 ceiling: $(ratio "$a" "$std")"
done

echo
echo "== ledgers of $N entries (bench/mkledger): all signed authority entries, and half decisions"
go run ./bench/mkledger -dir "$work/signed" -n "$N" > /dev/null
go run ./bench/mkledger -dir "$work/mix" -n $((N / 2)) -decisions $((N / 2)) > /dev/null
for job in "audit signed" "audit mix" "ledger-verify signed"; do
  set -- $job
  ceilings > /dev/null
  if [ "$1" = audit ]; then
    peak env WRIT_CPUPROFILE="$PROFILES/$1-$2.cpu" "$work/writ" --json audit --ledger "$work/$2"
    grep -q '"ok":true' "$work/peak.out" || { echo "bench/perf.sh: the $2 ledger did not audit" >&2; exit 1; }
    n=$(grep -o '"entries_verified":[0-9]*' "$work/peak.out" | cut -d: -f2)
  else
    peak env WRIT_CPUPROFILE="$PROFILES/$1-$2.cpu" "$work/writ" --json ledger verify --dir "$work/$2"
    grep -q '"ok":true' "$work/peak.out" || { echo "bench/perf.sh: the $2 ledger did not verify" >&2; exit 1; }
    n=$(grep -o '"size":[0-9]*' "$work/peak.out" | head -1 | cut -d: -f2)
  fi
  rate=$(awk -v n="$n" -v s="$secs" 'BEGIN { printf "%.0f", n / s }')
  r=$(ratio "$rate" "$std")
  echo "writ ${1/-/ } ($2, $n entries): ${secs}s, $rate entries/s; / crypto/ed25519 ceiling $std/s: $r (target 0.8: $(verdict "$r" 0.8 high)); / writ's verifier $writv/s: $(ratio "$rate" "$writv")"
  split="at most $anon MiB anonymous and $file MiB file-backed seen"
  awk -v s="$secs" 'BEGIN { exit !(s < 2) }' && split="too short to sample its parts"
  echo "  peak RSS $rss MiB ($split); / 256 MiB: $(ratio "$rss" 256) (target under 1: $(verdict "$(ratio "$rss" 256)" 0.999 low))"
done

echo
go run ./bench/proofs -dir "$work/signed" -cpuprofile "$PROFILES/proofs.cpu"

echo
# shellcheck disable=SC2086 # ADMISSION holds flags
if ! go run ./bench/admission $ADMISSION -server-cpuprofile "$PROFILES/admission.cpu" > "$work/admission.out" 2> "$work/admission.err"; then
  cat "$work/admission.out" "$work/admission.err" >&2
  echo "bench/perf.sh: bench/admission failed" >&2
  exit 1
fi
grep -v '^writ: ' "$work/admission.out"

echo
echo "== CPU profiles (pprof) in $PROFILES; the top of each:"
for p in "$PROFILES"/*.cpu; do
  [ -s "$p" ] || continue
  bin="$work/writ"
  case "$p" in */append.cpu) bin="$PROFILES/verify.test" ;; */proofs.cpu) bin="" ;; esac
  echo "-- $(basename "$p")"
  go tool pprof -top -nodecount=8 $bin "$p" 2> /dev/null | sed -n '/flat%/,$p' || true
done
[ -n "$kept" ] || echo "(they are removed on exit: set PROFILES=DIR to keep them)"
