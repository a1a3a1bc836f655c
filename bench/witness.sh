#!/usr/bin/env bash
# Witnessing's cost and its crash safety:
#  1. bench/witness: the writer's checkpoint signing alone (Log.Refresh),
#     the same followed by collecting cosignatures from two writ witnesses
#     over HTTP on loopback, the extra latency as a ratio to signing, and
#     one witness's add-checkpoint rate as a ratio to the signing rate;
#  2. bench/witness_crash.sh: ROUNDS (default 50) SIGKILLs of a serving
#     witness during concurrent add-checkpoint requests; no rollback and no
#     two inconsistent cosigned checkpoints.
#   bench/witness.sh               # N=200 checkpoints, 50 crash rounds
#   N=50 ROUNDS=5 bench/witness.sh # smoke
# Needs Go.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== witnessing latency and rate"
go run ./bench/witness -n "${N:-200}"
ROUNDS=${ROUNDS:-50} bench/witness_crash.sh
