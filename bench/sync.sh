#!/usr/bin/env bash
# A runner's replica of the authority log: `writ ledger sync` from the log
# published as C2SP tlog-tiles static files (`writ ledger publish`) behind a
# real nginx on loopback, on a generated ledger of N signed instructions
# (bench/mkledger). Prints `writ ledger verify`'s entries/s, the first sync's
# entries/s and their ratio (goal: sync at 0.8 of verify's rate or better),
# the requests and bytes of a sync with nothing new (goal: 1 request, the
# checkpoint), and bytes fetched per byte of new entry for appends of 1, 10,
# 100 and 289 records (each through `writ ledger append`, publish, sync).
# Every step's exit status is checked and the replica's root must be the
# writer's after every sync.
#   bench/sync.sh               # N=1000000 (several minutes)
#   bench/sync.sh -n 20000      # quicker
#   bench/sync.sh -keep         # keep the work directory
# Needs Go and nginx (Debian: apt-get install -y nginx).
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./bench/sync "$@"
