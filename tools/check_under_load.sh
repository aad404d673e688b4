#!/usr/bin/env bash
# The functional tests under load: BUSY processes (default 2) spin beside them, and the tests run
# RUNS times in a row (default 3); each run's result and times are printed, then a summary. The
# tests wait for states, never for a time (tests/_wait.py), so they must pass every time: a
# failure here is a test that measures the machine's speed instead of the code.
#
#   tools/check_under_load.sh                  # python -m pytest -q -p no:cacheprovider tests/functional
#   RUNS=1 BUSY=4 tools/check_under_load.sh -n 2 -x
#   TESTS="tests/functional tests/unit" tools/check_under_load.sh
#
# Extra arguments go to pytest. Exit status: 0 when every run passed, 1 otherwise. The busy
# processes are killed on exit (also on Ctrl-C).
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

RUNS=${RUNS:-3}
BUSY=${BUSY:-2}
TESTS=${TESTS:-tests/functional}
PY=${PYTHON:-python}

busy=()
stop_busy() {
  for pid in "${busy[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${busy[@]}"; do wait "$pid" 2>/dev/null; done
  busy=()
}
trap stop_busy EXIT
trap 'stop_busy; exit 130' INT TERM

for _ in $(seq "$BUSY"); do
  "$PY" -c 'while True: pass' &
  busy+=($!)
done
echo "check_under_load: $BUSY busy processes (${busy[*]}), $RUNS runs of: $PY -m pytest -q -p no:cacheprovider $TESTS $*"
echo "check_under_load: load average at the start: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"

failed=0
summary=()
for run in $(seq "$RUNS"); do
  log=$(mktemp "${TMPDIR:-/tmp}/check_under_load.XXXXXX")
  start=$(date +%s.%N)
  t0=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)  # this shell's children's CPU, in ticks
  # shellcheck disable=SC2086
  "$PY" -m pytest -q -p no:cacheprovider $TESTS "$@" >"$log" 2>&1
  rc=$?
  end=$(date +%s.%N)
  t1=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
  wall=$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.0f", b - a}')
  cpu=$(awk -v a="$t0" -v b="$t1" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.0f", (b - a) / hz}')
  result=$(grep -E '^[0-9]+ (passed|failed)|^=+ .*(passed|failed|error)' "$log" | tail -1 | tr -d '=' | xargs)
  [ "$rc" -eq 0 ] && verdict=pass || { verdict=FAIL; failed=1; }
  line="run $run/$RUNS: $verdict (exit $rc) in $wall s wall, $cpu s CPU of the tests (busy processes not counted), load $(cut -d' ' -f1 /proc/loadavg): $result"
  echo "check_under_load: $line"
  if [ "$rc" -ne 0 ]; then
    grep -E '^(FAILED|ERROR) ' "$log" | sed 's/^/    /'
    echo "    (the whole output: $log)"
  else
    rm -f "$log"
  fi
  summary+=("$line")
done
stop_busy
echo "check_under_load: summary"
printf '  %s\n' "${summary[@]}"
[ "$failed" -eq 0 ] && echo "check_under_load: every run passed" || echo "check_under_load: a run failed"
exit "$failed"
