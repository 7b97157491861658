#!/usr/bin/env bash
# Issue #25's churn benchmark: one tuning run on a loopback cluster, undisturbed and then
# with one worker SIGKILLed every KILL_EVERY seconds (and started again at once, as a
# supervisor would), two other workers kept alive throughout. The same pipeline, photos,
# seed and budget both times; each from an empty database. For each it prints the wall
# time of `stipple submit --wait`, the run's training evaluations (lost = budget minus
# those), the pool's counters (re-dispatched leases, duplicate results) and the duplicate
# measurements as a share of the evaluations; then the churned time over the undisturbed.
# Each run's workers start with empty caches; the killed one restarts on its own cache.
# The issue's goal: 0 lost, <= 5% duplicate measurements, within 2x of the undisturbed.
#
#   bench/churn_bench.sh [BUILD_DIR]    # default build/
#
# Environment: BUDGET (training evaluations, default 500), SEED (default 1), KILL_EVERY
# (seconds, default 10). Run it on an idle machine: every candidate is timed.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=cluster_common.sh
source "$root/bench/cluster_common.sh"
build=$(cd "${1:-$root/build}" && pwd)
stipple=$build/stipple
budget=${BUDGET:-500}
seed=${SEED:-1}
kill_every=${KILL_EVERY:-10}
pipeline=$root/datasets/pipelines/two_pass_blur.stp
photos=(--images "$root/datasets/fixtures/people-256x192.png"
  --test-images "$root/datasets/fixtures/natural-high-64x48.png")
tmp=$(mktemp -d)
pids=() # process groups we started (each in a session of its own, setsid)

cleanup() {
  local p
  for p in "${pids[@]}"; do kill -KILL -- "-$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now() { date +%s.%N; }

# start_session (cluster_common.sh), remembered for the cleanup.
spawn() { # NAME COMMAND...
  start_session "$@"
  pids+=("$spawned")
}

# Waits until N workers are registered and not lost.
wait_workers() { # N ADDRESS
  local i
  for i in $(seq 300); do
    if [ "$("$stipple" workers --coordinator "$2" 2>/dev/null | grep '^w[0-9]' |
      grep -vc lost)" -ge "$1" ]; then
      return
    fi
    sleep 0.1
  done
  echo "churn_bench: $1 worker(s) did not register" >&2
  exit 1
}

# One run; CHURN 1 kills the third worker every kill_every seconds. Sets seconds_<NAME>.
run() { # NAME CHURN
  local name=$1 churn=$2 db=$tmp/$1.db i
  spawn "coordinator-$name" "$stipple" coordinator --listen 127.0.0.1:0 --db "$db"
  local address
  address=$(coordinator_address "$tmp/coordinator-$name.log" churn_bench)
  for i in 1 2 3; do
    spawn "worker-$name-$i" "$stipple" worker --coordinator "$address" --cache "$tmp/cache-$name-$i"
  done
  local churned=${pids[-1]}
  wait_workers 3 "$address"
  local t0 t1 kills=0
  t0=$(now)
  # The submit's own end time, not the end of the kill loop's sleep that sees it gone.
  (
    code=0
    "$stipple" submit "$pipeline" --coordinator "$address" "${photos[@]}" --budget "$budget" \
      --seed "$seed" --wait >"$tmp/submit-$name.log" 2>&1 || code=$?
    now >"$tmp/end-$name"
    exit "$code"
  ) &
  local submit=$!
  while [ "$churn" = 1 ] && kill -0 "$submit" 2>/dev/null; do
    sleep "$kill_every"
    if kill -0 "$submit" 2>/dev/null; then
      kill -KILL -- "-$churned" 2>/dev/null || true
      wait "$churned" 2>/dev/null || true
      kills=$((kills + 1))
      spawn "worker-$name-3" "$stipple" worker --coordinator "$address" --cache "$tmp/cache-$name-3"
      churned=${pids[-1]}
    fi
  done
  local status=0
  wait "$submit" || status=$?
  t1=$(cat "$tmp/end-$name")
  local seconds evaluations counters redispatched duplicates
  seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
  evaluations=$(sqlite3 "$db" "SELECT COUNT(*) FROM run_evaluations l JOIN evaluations e
    ON e.id = l.evaluation_id WHERE e.split = 'train'")
  counters=$("$stipple" workers --coordinator "$address" | head -n 1)
  redispatched=$(sed -n 's/.* \([0-9]*\) re-dispatched.*/\1/p' <<<"$counters")
  duplicates=$(sed -n 's/.* \([0-9]*\) duplicate results.*/\1/p' <<<"$counters")
  awk -v n="$name" -v s="$seconds" -v e="$evaluations" -v b="$budget" -v k="$kills" \
    -v r="$redispatched" -v d="$duplicates" -v st="$status" 'BEGIN {
      printf "%-11s %7.1f s, submit exit %d, %d kills: %d of %d evaluations (lost %d), " \
        "%d re-dispatched, %d duplicate results (%.1f%%)\n",
        n, s, st, k, e, b, b - e, r, d, e ? 100 * d / e : 0 }'
  printf -v "seconds_$name" '%s' "$seconds"
  for i in "${pids[@]}"; do kill -TERM -- "-$i" 2>/dev/null || true; done
  for i in "${pids[@]}"; do wait "$i" 2>/dev/null || true; done
  pids=()
}

echo "churn_bench: two_pass_blur, budget $budget, seed $seed, 3 workers, one killed every" \
  "${kill_every} s in the second run; $(nproc) cores, $(uptime | sed 's/.*load average/load average/')"
run undisturbed 0
run churn 1
awk -v a="$seconds_undisturbed" -v b="$seconds_churn" \
  'BEGIN { printf "churn / undisturbed: %.2fx (goal <= 2x)\n", b / a }'
