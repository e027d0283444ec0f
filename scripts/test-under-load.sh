#!/usr/bin/env bash
# test-under-load.sh: the "never flaky" check. Runs `make $TARGET` (test by
# default) RUNS times in a row (3 by default) while a CPU-heavy job runs
# beside it: LOAD_JOBS busy loops (one per core by default) at the tests'
# own priority. Stops at the first failed run; prints
# each run's wall time and the load average after it.
#
#   scripts/test-under-load.sh                 # 3 x make test beside 1 busy loop per core
#   RUNS=5 TARGET=test-fast scripts/test-under-load.sh
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
TARGET=${TARGET:-test}
LOAD_JOBS=${LOAD_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
LOG_DIR=${LOG_DIR:-$(mktemp -d)}

pids=()
stop_load() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap stop_load EXIT
for _ in $(seq "$LOAD_JOBS"); do
	bash -c 'while :; do :; done' &
	pids+=("$!")
done
echo "load: $LOAD_JOBS busy loops (pids ${pids[*]}); logs in $LOG_DIR"

for run in $(seq "$RUNS"); do
	start=$(date +%s)
	if make --no-print-directory "$TARGET" >"$LOG_DIR/run-$run.log" 2>&1; then
		status=green
	else
		status=FAILED
	fi
	echo "run $run/$RUNS: make $TARGET $status in $(( $(date +%s) - start )) s (load average $(cut -d' ' -f1-3 /proc/loadavg))"
	grep -E '(passed|failed|skipped) \(top-level tests\)' "$LOG_DIR/run-$run.log" || true
	if [ "$status" != green ]; then
		echo "see $LOG_DIR/run-$run.log" >&2
		exit 1
	fi
done
echo "$RUNS green runs in a row under load"
