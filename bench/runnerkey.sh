#!/usr/bin/env bash
# The runner key's cost (issue 17): one `writ admit` as its own process,
# with the default runner setup (runner key kept as file, made by the
# first admission), against `cosign verify-blob --key` on the same agent
# binary, and `writ admit` with the runner key kept with a passphrase at
# the default work factor (18), for comparison. Wall time and peak RSS
# from /usr/bin/time, median of RUNS runs each, interleaved; the ratios
# writ/cosign (goal: time at most 1.00 with the default setup).
#   bench/runnerkey.sh                 # 64 MiB agent, 9 runs
#   RUNS=5 AGENT_MIB=16 bench/runnerkey.sh
# cosign is built from its Go module as a user would (go install
# ...@COSIGN_VERSION, several minutes the first time). Needs Go, git and
# GNU time.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-9}
AGENT_MIB=${AGENT_MIB:-64}
COSIGN_VERSION=${COSIGN_VERSION:-v2.6.5}
command -v /usr/bin/time > /dev/null || { echo "bench/runnerkey.sh: /usr/bin/time (GNU time) is required" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "building cosign $COSIGN_VERSION (go install github.com/sigstore/cosign/v2/cmd/cosign@$COSIGN_VERSION), writ, and a ${AGENT_MIB} MiB agent" >&2
GOBIN="$work/bin" go install "github.com/sigstore/cosign/v2/cmd/cosign@$COSIGN_VERSION"
go build -o "$work/bin/writ" ./cmd/writ
agent=$(go run ./bench/runnerkey -dir "$work/agent" -mib "$AGENT_MIB")
writ=$work/bin/writ
cosign=$work/bin/cosign
cd "$work"

# The authority: keys for records (their cost is not measured, so a low
# work factor), one operator who may instruct runner-1, a pin of the
# agent, and two runners' ledgers holding the same records.
export WRIT_PASSPHRASE='bench passphrase'
for k in root op rel; do "$writ" key generate --out $k --work-factor 10 > /dev/null; done
"$writ" root sign --key root.key --pub root.pub --expires 8760h --out root.cose > /dev/null
not_after=$(date -u -d '+720 hours' +%Y-%m-%dT%H:%M:%SZ)
"$writ" delegate --key root.key --to op.pub --action instruct --stream bench --machine runner-1 --not-after "$not_after" --out op.del > /dev/null
"$writ" delegate --key root.key --to rel.pub --action pin --artifact agent --not-after "$not_after" --out rel.del > /dev/null
"$writ" pin --key rel.key --artifact agent --version 1.0.0 --out agent.pin "$agent" > /dev/null
for l in file pass; do
  "$writ" ledger init --dir "$l" --root root.cose --origin "bench.example/$l" --work-factor 10 > /dev/null
  "$writ" ledger append --dir "$l" op.del rel.del agent.pin > /dev/null
done
# One signed dispatch per admission (an instruction is admitted once).
for i in $(seq 0 "$RUNS"); do
  "$writ" instruct --key op.key --stream bench --machine runner-1 --agent agent --out "d$i.cose" > /dev/null
done
unset WRIT_PASSPHRASE

# cosign: a key pair, the agent signed with it (no transparency log: the
# verification below is against the key alone).
export COSIGN_PASSWORD='bench password'
mkdir home
HOME=$work/home "$cosign" generate-key-pair > /dev/null 2>&1
HOME=$work/home "$cosign" sign-blob --key cosign.key --tlog-upload=false --yes --output-signature sig "$agent" > /dev/null 2>&1
unset COSIGN_PASSWORD

# The commands measured, each one process (env execs what it runs).
# --insecure-ignore-tlog: the signature is in no log, and this machine
# may have no route to Rekor. SIGSTORE_REKOR_PUBLIC_KEY (never read when
# the log is ignored) keeps verify-blob from fetching sigstore's trusted
# root over TUF first (verify_blob.go), so the figure is cosign's own
# verification, without network time: that only favours cosign.
cosign_env=(env HOME="$work/home" SIGSTORE_REKOR_PUBLIC_KEY="$work/cosign.pub")
cosign_verify=("$cosign" verify-blob --key cosign.pub --signature sig --insecure-ignore-tlog=true "$agent")
pass_env=(env WRIT_PASSPHRASE='runner passphrase')
# measure NAME CMD...: runs CMD under /usr/bin/time, appends "secs KiB"
# to NAME.times, and fails loudly if CMD fails.
measure() {
  local name=$1; shift
  if ! /usr/bin/time -f '%e %M' -o time.out "$@" > out.txt 2> err.txt; then
    echo "bench/runnerkey.sh: $name failed:" >&2; cat out.txt err.txt >&2; exit 1
  fi
  cat time.out >> "$name.times"
}

# The first admission makes each runner's key (the default setup, and
# --runner-key-protection passphrase at the default work factor); it and
# one cosign run warm the page cache and are not counted.
"$writ" admit --ledger file --machine runner-1 --mode enforce --agent-binary "$agent" d0.cose > /dev/null 2> err.txt
grep -qx 'file' file/runner.protection
"${pass_env[@]}" "$writ" admit --ledger pass --machine runner-1 --mode enforce --runner-key-protection passphrase --agent-binary "$agent" d0.cose > /dev/null 2> err.txt
grep -qx 'passphrase' pass/runner.protection
"${cosign_env[@]}" "${cosign_verify[@]}" > /dev/null 2>&1

for i in $(seq 1 "$RUNS"); do
  admit=("$writ" admit --ledger file --machine runner-1 --mode enforce --agent-binary "$agent" "d$i.cose")
  measure writ_file "${admit[@]}"; grep -q '^verdict: admitted$' out.txt
  measure cosign "${cosign_env[@]}" "${cosign_verify[@]}"; grep -q '^Verified OK$' err.txt
  admit=("$writ" admit --ledger pass --machine runner-1 --mode enforce --agent-binary "$agent" "d$i.cose")
  measure writ_pass "${pass_env[@]}" "${admit[@]}"; grep -q '^verdict: admitted$' out.txt
done
"$writ" audit --ledger file | grep -q '^runner key protection: file$'

median() { sort -n -k"$2" "$1" | awk -v n="$RUNS" -v k="$2" 'NR == int((n + 1) / 2) { print $k }'; }
spread() { sort -n -k1 "$1" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.2f-%.2f s", lo, hi }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
for n in writ_file writ_pass cosign; do
  declare "${n}_s=$(median "$n.times" 1)" "${n}_k=$(median "$n.times" 2)"
done
size=$(awk -v b="$(stat -c %s "$agent")" 'BEGIN { printf "%.1f", b / 1048576 }')
echo "== the runner key's cost: one process per admission, the same ${size} MiB agent; median of $RUNS runs; $(nproc) cores"
row() { printf '%-62s %6.2f s %5s MiB   (runs %s)\n' "$1" "$2" "$(mib "$3")" "$(spread "$4.times")"; }
row "writ admit, runner key kept as file (the default)" "$writ_file_s" "$writ_file_k" writ_file
row "writ admit, runner key kept with passphrase (work factor 18)" "$writ_pass_s" "$writ_pass_k" writ_pass
row "cosign verify-blob --key ($COSIGN_VERSION)" "$cosign_s" "$cosign_k" cosign
echo "writ/cosign, file (default):  time $(ratio "$writ_file_s" "$cosign_s") (goal at most 1.00), peak RSS $(ratio "$writ_file_k" "$cosign_k")"
echo "writ/cosign, passphrase:      time $(ratio "$writ_pass_s" "$cosign_s"), peak RSS $(ratio "$writ_pass_k" "$cosign_k")"
