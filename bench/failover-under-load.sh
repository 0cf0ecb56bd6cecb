#!/usr/bin/env bash
# The failover test (test/int/pg-failover.int.test.ts) N times in a row (default 20) with 4 CPU
# spinners beside it, as issue 37 asks: a loaded machine makes a failover slow and its commits'
# answers get lost. Prints one line per round and the count that passed.
#   DEVMIND_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test bench/failover-under-load.sh [N]
set -u
cd "$(dirname "$0")/.."
rounds="${1:-20}"
spinners=()
for _ in 1 2 3 4; do
  node -e 'for (;;) {}' &
  spinners+=("$!")
done
stop_spinners() { for pid in "${spinners[@]}"; do kill "$pid" 2>/dev/null; done; }
trap stop_spinners EXIT
passed=0
for round in $(seq 1 "$rounds"); do
  log="$(mktemp)"
  start=$(date +%s)
  if npx vitest run test/int/pg-failover.int.test.ts >"$log" 2>&1; then
    passed=$((passed + 1))
    result=pass
  else
    result=FAIL
    cp "$log" "/tmp/failover-under-load-round-$round.log"
  fi
  summary=$(grep -o 'failover summary .*' "$log" | head -1)
  echo "round $round/$rounds: $result in $(( $(date +%s) - start )) s ${summary}"
  rm -f "$log"
done
echo "failover under load (4 spinners): $passed of $rounds passed"
[ "$passed" -eq "$rounds" ]
