#!/usr/bin/env bash
# The witness under SIGKILL: a witness process (ledger/witness's test
# binary as its own child) serves while 8 submitters send it growing
# checkpoints of one log and of three forks of it; it is killed at a random
# moment and restarted on the same state directory, ROUNDS times. Passes
# when no two checkpoints it ever cosigned are inconsistent and the size it
# holds after each restart is at least every size it cosigned before the
# kill (TestCrashNoRollback). Run from anywhere:
#   bench/witness_crash.sh             # 50 rounds
#   ROUNDS=200 bench/witness_crash.sh
# Needs Go.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-50}
echo "== witness crash consistency: $ROUNDS rounds of SIGKILL during concurrent add-checkpoint requests"
WRIT_WITNESS_CRASH_ROUNDS=$ROUNDS go test ./ledger/witness -run '^TestCrashNoRollback$' -count 1 -v |
  grep -E 'round [0-9]+:|rounds:|^(ok|FAIL|---)|crash_test.go' | tail -6
