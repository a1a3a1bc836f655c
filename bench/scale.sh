#!/usr/bin/env bash
# Issue 30's targets: every act costs what is new, not the whole history.
# Two ledgers built the same way (bench/mkledger), SMALL and LARGE signed
# instructions, each with signed instructions kept aside (-extra); on each,
# in ROUNDS rounds of one new record, the seconds (best of the rounds) and
# peak RSS (GNU time; the largest of the rounds) of:
#   - `writ ledger append` of one record (one-shot, the writer's ledger);
#   - `writ ledger publish` of it (tlog-tiles into the published directory);
#   - `writ ledger sync` of it into an existing replica, over HTTP from
#     bench/tileserve on loopback, and the bytes fetched (sync's own count
#     and the server's access log, which must agree);
#   - `writ admit` of one new dispatch (an instruction not in the log,
#     --mode off) on the replica as the runner's ledger; the runner's first
#     admission (runner key, decision log) is made before and not counted;
# and once each, the peak RSS of `writ ledger export` of the writer's
# ledger and `writ ledger import` of that bundle into a new directory.
# Prints LARGE/SMALL of each: time and RSS against 1.5 (target at most),
# bytes fetched against 1.5 (they should not grow at all); and, at LARGE,
# the first sync of a new replica (full replay) in entries/s against
# `writ ledger verify` of the writer's ledger (target 0.8 or more; the
# figure bench/sync.sh prints, measured here on the same ledger without
# nginx). LARGE is rounded up so that both logs have the same size mod 256:
# the right-edge tiles a sync of one new record fetches have the same
# width at both sizes.
#
#   bench/scale.sh                           # SMALL=10000 LARGE=1000000: about 10 minutes on 2 cores,
#                                            # 2 GiB in $TMPDIR
#   SMALL=10000 LARGE=300000 bench/scale.sh  # 6 minutes on 2 cores under load
#   SMALL=10000 LARGE=100000 bench/scale.sh  # 3.5 minutes on 2 cores under load
#   SMALL=2000 LARGE=5000 ROUNDS=1 bench/scale.sh  # smoke: seconds; the ratios say little
#   PROFILES=DIR bench/scale.sh              # also the last round's CPU profiles (pprof), DIR/NAME-ACT.pprof
#
# Needs Go and GNU time (/usr/bin/time) for peak RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v /usr/bin/time > /dev/null || { echo "bench/scale.sh: GNU time (/usr/bin/time) is required for peak RSS" >&2; exit 2; }
SMALL=${SMALL:-10000}
LARGE=${LARGE:-1000000}
ROUNDS=${ROUNDS:-3}
[ "$SMALL" -ge 1 ] && [ "$LARGE" -gt "$SMALL" ] && [ "$ROUNDS" -ge 1 ] || { echo "bench/scale.sh: need 1 <= SMALL < LARGE and ROUNDS >= 1" >&2; exit 2; }
work=$(mktemp -d)
server=
trap '[ -z "$server" ] || kill "$server" 2> /dev/null || true; rm -rf "$work"' EXIT

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
rate() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", a / b }'; }
# verdict RATIO TARGET low|high: "met" when RATIO is at least (high) or at
# most (low) TARGET.
verdict() { awk -v r="$1" -v t="$2" -v w="$3" 'BEGIN { ok = (w == "high") ? r >= t : r <= t; print ok ? "met" : "NOT met" }'; }
die() { echo "bench/scale.sh: $*" >&2; exit 1; }
# field NAME: NAME's number in the JSON result $work/peak.out (the first).
field() { grep -o "\"$1\":[0-9]*" "$work/peak.out" | head -1 | cut -d: -f2; }

# peak CMD...: runs CMD (stdout to $work/peak.out, stderr to
# $work/peak.err) and sets secs (wall, 3 decimals) and rss (peak resident
# MiB, the kernel's high-water mark through GNU time, 1 decimal: a one-shot
# act's RSS is tens of MiB).
peak() {
  local start
  start=$(date +%s.%N)
  /usr/bin/time -f '%M' -o "$work/maxrss" "$@" > "$work/peak.out" 2> "$work/peak.err" || {
    cat "$work/peak.out" "$work/peak.err" >&2
    die "failed: $*"
  }
  secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.3f", e - s }')
  rss=$(awk -v k="$(tail -1 "$work/maxrss")" 'BEGIN { printf "%.1f", k / 1024 }')
}
# keep ACT SIZE: records secs and rss for ACT at SIZE, keeping the best
# time and the largest RSS over rounds.
declare -A T M B
keep() {
  local k="$1,$2"
  if [ -z "${T[$k]:-}" ] || awk -v a="$secs" -v b="${T[$k]}" 'BEGIN { exit !(a < b) }'; then T[$k]=$secs; fi
  if [ -z "${M[$k]:-}" ] || awk -v a="$rss" -v b="${M[$k]}" 'BEGIN { exit !(a > b) }'; then M[$k]=$rss; fi
}
# served SINCE: requests and body bytes in the access log after line SINCE.
served() { tail -n +"$(($1 + 1))" "$work/access.log" | awk '{ r++; b += $2; if ($1 != 200) bad++ } END { printf "%d %d %d", r, b, bad }'; }

# LARGE rounded up to SMALL's size mod 256.
pad=$(( ((SMALL - LARGE) % 256 + 256) % 256 ))
LARGE=$((LARGE + pad))
extra=$((2 * ROUNDS + 1))

go build -o "$work/writ" ./cmd/writ
go build -o "$work/tileserve" ./bench/tileserve
writ="$work/writ"
printf 'bench\n' > "$work/passphrase" # bench/mkledger's key passphrase
printf 'an agent binary (unpinned: admit runs --mode off)\n' > "$work/agent"
mkdir "$work/www"
"$work/tileserve" -dir "$work/www" -log "$work/access.log" -addr-file "$work/url" &
server=$!
for _ in $(seq 100); do [ -s "$work/url" ] && break; sleep 0.05; done
[ -s "$work/url" ] || die "bench/tileserve did not start"
url=$(cat "$work/url")

echo "== issue 30: cost per act at SMALL=$SMALL and LARGE=$LARGE signed instructions (+3 authority records each; LARGE rounded up by $pad so both logs' sizes are equal mod 256: $(((SMALL + 3) % 256)) before the rounds); $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg); best time and largest RSS of $ROUNDS round(s)"

# profiles NAME ROUND [ACT]: with PROFILES=DIR, the last round's ACT
# (append when not given) writes its CPU profile to DIR/NAME-ACT.pprof.
profiles() {
  unset WRIT_CPUPROFILE
  if [ -n "${PROFILES:-}" ] && [ "$2" = "$ROUNDS" ]; then
    mkdir -p "$PROFILES"
    export WRIT_CPUPROFILE="$PROFILES/$1-${3:-append}.pprof"
  fi
}

# measure NAME N: builds ledger NAME of N instructions and measures its acts.
measure() {
  local name=$1 n=$2 led="$work/$1" rep="$work/$1.rep" x="$work/$1.extra" vkey size r i since out
  local t0
  t0=$(date +%s.%N)
  go run ./bench/mkledger -dir "$led" -n "$n" -extra "$extra" -extra-dir "$x" | sed "s|$work/||; s/^/  mkledger: /"
  vkey=$("$writ" ledger vkey --dir "$led")
  size=$((n + 3))
  "$writ" --json ledger publish --dir "$led" --to "$work/www/$name" > /dev/null

  peak "$writ" --json ledger verify --dir "$led"
  grep -q '"ok":true' "$work/peak.out" || die "$name did not verify"
  [ "$(field size)" = "$size" ] || die "$name: verify says $(field size) entries, not $size"
  T[verify,$name]=$secs M[verify,$name]=$rss
  # bench/mkledger appends without the append gate, so the ledger holds
  # no persisted authority state yet: it is written once, by a full
  # replay, as the first writer of any ledger of an older writ writes it,
  # before the acts are measured (not counted; its figures are printed).
  peak "$writ" --json ledger verify --dir "$led" --rebuild-state
  grep -q '"ok":true' "$work/peak.out" || die "$name did not verify after --rebuild-state"
  echo "  $name: the writer's state written once by a full replay (ledger verify --rebuild-state, not counted) ${secs}s, $rss MiB"
  peak "$writ" --json ledger sync --dir "$rep" --from "$url/$name" --vkey "$vkey"
  [ "$(field after)" = "$size" ] || die "$name: the first sync reached $(field after), not $size"
  T[first-sync,$name]=$secs M[first-sync,$name]=$rss
  echo "  $name: writ ledger verify of $size entries ${T[verify,$name]}s ($(rate "$size" "${T[verify,$name]}") entries/s, ${M[verify,$name]} MiB); first sync of a new replica ${T[first-sync,$name]}s ($(rate "$size" "${T[first-sync,$name]}") entries/s, ${M[first-sync,$name]} MiB, $(field bytes) bytes)"

  # The runner's first admission makes its key and decision log: not counted.
  peak "$writ" --json admit --ledger "$rep" --machine "runner-$((n % 64))" --mode off --agent-binary "$work/agent" "$x/000000.cose"
  grep -q '"verdict":"admitted"' "$work/peak.out" || die "$name: the first admission was not admitted: $(cat "$work/peak.out")"
  echo "  $name: the runner's first admission (not counted) ${secs}s, $rss MiB"

  B[$name]=""
  for r in $(seq "$ROUNDS"); do
    i=$((2 * r - 1))
    profiles "$name" "$r"
    peak "$writ" --json ledger append --dir "$led" --passphrase-file "$work/passphrase" "$x/$(printf %06d "$i").cose"
    [ "$(field index)" = "$size" ] || die "$name: appended at $(field index), not $size"
    keep append "$name"
    profiles "$name" "$r" publish
    size=$((size + 1))
    peak "$writ" --json ledger publish --dir "$led" --to "$work/www/$name"
    [ "$(field after)" = "$size" ] || die "$name: published $(field after), not $size"
    keep publish "$name"
    profiles "$name" "$r" sync
    since=$(wc -l < "$work/access.log")
    peak "$writ" --json ledger sync --dir "$rep" --from "$url/$name"
    [ "$(field after)" = "$size" ] || die "$name: synced to $(field after), not $size"
    keep sync "$name"
    read -r reqs wire bad <<< "$(served "$since")"
    [ "$wire" = "$(field bytes)" ] && [ "$reqs" = "$(field requests)" ] && [ "$bad" = 0 ] ||
      die "$name: sync says $(field requests) requests, $(field bytes) bytes; the server $reqs, $wire bytes ($bad not 200)"
    B[$name]="${B[$name]} $wire"
    i=$((2 * r))
    profiles "$name" "$r" admit
    peak "$writ" --json admit --ledger "$rep" --machine "runner-$(((n + i) % 64))" --mode off --agent-binary "$work/agent" "$x/$(printf %06d "$i").cose"
    grep -q '"verdict":"admitted"' "$work/peak.out" || die "$name: a dispatch was not admitted: $(cat "$work/peak.out")"
    keep admit "$name"
    unset WRIT_CPUPROFILE
  done
  [ "$("$writ" ledger checkpoint --dir "$rep" | sed -n 3p)" = "$("$writ" ledger checkpoint --dir "$led" | sed -n 3p)" ] ||
    die "$name: the replica's root is not the writer's"

  peak "$writ" --json ledger export --dir "$led" --out "$work/$name.bundle"
  keep export "$name"
  out=$(field bytes)
  peak "$writ" --json ledger import --dir "$work/$name.imported" --vkey "$vkey" "$work/$name.bundle"
  [ "$(field after)" = "$size" ] || die "$name: imported $(field after), not $size"
  keep import "$name"
  rm -rf "$work/$name.imported" "$work/$name.bundle"
  echo "  $name: rounds done, $size entries, replica's root the writer's; bundle $out bytes; bytes fetched by each one-record sync:${B[$name]}; $(awk -v s="$t0" -v e="$(date +%s.%N)" 'BEGIN { printf "%.0f", e - s }')s in all"
}

measure small "$SMALL"
measure large "$LARGE"

echo
echo "== LARGE/SMALL ($((LARGE + 3)) / $((SMALL + 3)) entries before the rounds): target at most 1.5"
printf '%-8s  %9s %9s %6s  %-9s  %9s %9s %6s  %s\n' act "small s" "large s" ratio "" "small MiB" "large MiB" ratio ""
for act in append publish sync admit export import; do
  tr=$(ratio "${T[$act,large]}" "${T[$act,small]}") mr=$(ratio "${M[$act,large]}" "${M[$act,small]}")
  tv=$(verdict "$tr" 1.5 low) mv=$(verdict "$mr" 1.5 low)
  case $act in export | import) tv="no target" ;; esac # they copy every entry
  printf '%-8s  %9s %9s %6s  %-9s  %9s %9s %6s  %s\n' "$act" "${T[$act,small]}" "${T[$act,large]}" "$tr" "$tv" "${M[$act,small]}" "${M[$act,large]}" "$mr" "$mv"
done
read -r bs _ <<< "${B[small]}"
read -r bl _ <<< "${B[large]}"
r=$(ratio "$bl" "$bs")
echo "bytes fetched by the sync of one new record (first round; same right-edge tile width at both sizes): $bs small, $bl large; ratio $r (target at most 1.5: $(verdict "$r" 1.5 low); it should not grow)"

echo
vr=$(rate "$((SMALL + 3))" "${T[verify,small]}") sr=$(rate "$((SMALL + 3))" "${T[first-sync,small]}")
echo "SMALL, for comparison: first sync $sr entries/s, verify $vr entries/s; ratio $(ratio "$sr" "$vr")"
vr=$(rate "$((LARGE + 3))" "${T[verify,large]}") sr=$(rate "$((LARGE + 3))" "${T[first-sync,large]}")
r=$(ratio "$sr" "$vr")
echo "LARGE: first sync of a new replica (full replay over HTTP) $sr entries/s (${M[first-sync,large]} MiB) / writ ledger verify $vr entries/s (${M[verify,large]} MiB): $r (target at least 0.8: $(verdict "$r" 0.8 high))"
echo "load average at the end $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine skews these figures)"
