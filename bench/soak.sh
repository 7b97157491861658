#!/usr/bin/env bash
# Issue #25's soak: a loopback cluster (one coordinator, three workers) for SOAK_SECONDS
# (default one hour) with RUNS runs submitted evenly over it, a random worker SIGKILLed
# (and started again, as a supervisor would) every 15-45 s, and the coordinator SIGKILLed
# and started again on the same database and port every 4-8 minutes (2/3 to 4/3 of
# COORDINATOR_KILL_SECONDS, default 360). Then the faults stop
# and the runs are given up to DRAIN_SECONDS to finish. It prints:
#   - runs finished (done) of those submitted, and the state of any that are not;
#   - evaluations lost: for each finished run, its budget minus its training evaluations;
#     and committed rows lost: run_evaluations links read before each coordinator kill
#     and missing after it (goal 0 for both);
#   - duplicate measurements: measurements the workers reported (their logs' "job ...:"
#     lines) beyond the distinct evaluations in the database;
#   - the coordinator's resident memory at the start and the end (first and last sample of
#     every 30 s), and its peak; `pragma integrity_check` at the end.
#
#   bench/soak.sh [BUILD_DIR]    # default build/
#
# Environment: SOAK_SECONDS (default 3600), RUNS (default 20), BUDGET (training
# evaluations per run, default 40), COORDINATOR_KILL_SECONDS, DRAIN_SECONDS (default 900), SOAK_SEED (the fault
# schedule's and the runs' seeds, default 1), KEEP (a folder to keep the logs and the
# database in; default a temporary one, removed). The binaries are copied first, so a
# rebuild during the soak does not change what it runs.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=cluster_common.sh
source "$root/bench/cluster_common.sh"
build=$(cd "${1:-$root/build}" && pwd)
soak_seconds=${SOAK_SECONDS:-3600}
runs=${RUNS:-20}
budget=${BUDGET:-40}
drain_seconds=${DRAIN_SECONDS:-900}
ckill=${COORDINATOR_KILL_SECONDS:-360}
RANDOM=${SOAK_SEED:-1}
if [ -n "${KEEP:-}" ]; then
  mkdir -p "$KEEP"
  tmp=$(cd "$KEEP" && pwd)
else
  tmp=$(mktemp -d)
fi
mkdir -p "$tmp/bin"
cp "$build/stipple" "$build/stipple-evaluator" "$tmp/bin/"
stipple=$tmp/bin/stipple
db=$tmp/soak.db
pipelines=(two_pass_blur blur3x3 unsharp_mask unsharp)
photos=(--images "$root/datasets/fixtures/people-256x192.png"
  --test-images "$root/datasets/fixtures/natural-high-64x48.png")
coordinator=      # the coordinator's process group
workers=(0 0 0)   # the workers' process groups
address=
samples=$tmp/rss  # "SECONDS INCARNATION RSS_KIB" lines

cleanup() {
  local p
  for p in "$coordinator" "${workers[@]}"; do
    if [ -n "$p" ] && [ "$p" != 0 ]; then kill -KILL -- "-$p" 2>/dev/null || true; fi
  done
  wait 2>/dev/null || true
  if [ -z "${KEEP:-}" ]; then rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start=$(date +%s)
elapsed() { echo $(($(date +%s) - start)); }
log() { echo "[$(printf '%5d' "$(elapsed)") s] $*"; }

incarnation=0
start_coordinator() {
  incarnation=$((incarnation + 1))
  : >"$tmp/coordinator-now.log"
  start_session coordinator-now "$stipple" coordinator --listen "${address:-127.0.0.1:0}" --db "$db"
  coordinator=$spawned
  local a
  a=$(coordinator_address "$tmp/coordinator-now.log" soak)
  cat "$tmp/coordinator-now.log" >>"$tmp/coordinator.log"
  address=$a
}
start_worker() { # INDEX
  start_session "worker-$1" "$stipple" worker --coordinator "$address" --cache "$tmp/cache-$1" \
    --benchmark-lock "$tmp/benchmark.lock"
  workers[$1]=$spawned
}
sample_rss() {
  local kib
  kib=$(awk '/^VmRSS:/ { print $2 }' "/proc/$coordinator/status" 2>/dev/null || true)
  [ -n "$kib" ] && echo "$(elapsed) $incarnation $kib" >>"$samples"
  return 0
}
links() { sqlite3 "$db" "SELECT run_id || ' ' || evaluation_id FROM run_evaluations" | sort; }

: >"$samples"
: >"$tmp/lost-links"
start_coordinator
for i in 0 1 2; do start_worker "$i"; done
echo "soak: ${soak_seconds} s, $runs runs of budget $budget (${pipelines[*]}), 3 workers;" \
  "$(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -n 1);" \
  "folder $tmp"
log "coordinator on $address"

next_run=0
submitted=()
next_worker_kill=$((15 + RANDOM % 31))
next_coordinator_kill=$((ckill * 2 / 3 + RANDOM % (ckill * 2 / 3 + 1)))
next_sample=0
worker_kills=0
coordinator_kills=0
while [ "$(elapsed)" -lt "$soak_seconds" ]; do
  now=$(elapsed)
  if [ "$next_run" -lt "$runs" ] && [ "$now" -ge $((next_run * soak_seconds / runs)) ]; then
    p=${pipelines[$((next_run % ${#pipelines[@]}))]}
    if out=$("$stipple" submit "$root/datasets/pipelines/$p.stp" --coordinator "$address" \
      "${photos[@]}" --budget "$budget" --seed "$((next_run + 1))" 2>&1); then
      id=$(sed -n 's/^run \([0-9]*\) submitted.*/\1/p' <<<"$out")
      submitted+=("$id")
      log "run $id submitted ($p)"
      next_run=$((next_run + 1))
    else
      log "submit failed, trying again: $out"
    fi
  fi
  if [ "$now" -ge "$next_worker_kill" ]; then
    i=$((RANDOM % 3))
    kill -KILL -- "-${workers[$i]}" 2>/dev/null || true
    wait "${workers[$i]}" 2>/dev/null || true
    start_worker "$i"
    worker_kills=$((worker_kills + 1))
    next_worker_kill=$((now + 15 + RANDOM % 31))
  fi
  if [ "$now" -ge "$next_coordinator_kill" ]; then
    sample_rss
    links >"$tmp/links-before"
    kill -KILL -- "-$coordinator" 2>/dev/null || true
    wait "$coordinator" 2>/dev/null || true
    coordinator_kills=$((coordinator_kills + 1))
    start_coordinator
    links >"$tmp/links-after"
    comm -23 "$tmp/links-before" "$tmp/links-after" >>"$tmp/lost-links"
    log "coordinator killed and started again ($(wc -l <"$tmp/links-before") links before," \
      "$(comm -23 "$tmp/links-before" "$tmp/links-after" | wc -l) missing after)"
    next_coordinator_kill=$((now + ckill * 2 / 3 + RANDOM % (ckill * 2 / 3 + 1)))
  fi
  if [ "$now" -ge "$next_sample" ]; then
    sample_rss
    next_sample=$((now + 30))
  fi
  sleep 1
done
log "faults stop: $worker_kills worker kills, $coordinator_kills coordinator kills;" \
  "draining for up to $drain_seconds s"

drain_end=$(($(elapsed) + drain_seconds))
while [ "$(elapsed)" -lt "$drain_end" ]; do
  running=$(sqlite3 "$db" "SELECT COUNT(*) FROM runs WHERE state = 'running'")
  [ "$running" = 0 ] && [ "${#submitted[@]}" -ge "$runs" ] && break
  [ "$(elapsed)" -ge "$((next_sample))" ] && sample_rss && next_sample=$(($(elapsed) + 30))
  sleep 5
done
sample_rss
log "drained"

finished=$(sqlite3 "$db" "SELECT COUNT(*) FROM runs WHERE state = 'done'")
unfinished=$(sqlite3 "$db" "SELECT group_concat(id || ' ' || state, ', ') FROM runs
  WHERE state != 'done'")
lost=$(sqlite3 "$db" "SELECT COALESCE(SUM(r.budget_evaluations - (SELECT COUNT(*)
  FROM run_evaluations l JOIN evaluations e ON e.id = l.evaluation_id
  WHERE l.run_id = r.id AND e.split = 'train')), 0) FROM runs r WHERE r.state = 'done'")
lost_links=$(wc -l <"$tmp/lost-links")
distinct=$(sqlite3 "$db" "SELECT COUNT(*) FROM evaluations")
# A measurement's line: "job ID: ok, T ms, ..." or "job ID: STATUS (REASON) (T s)".
measured=$(cat "$tmp"/worker-*.log |
  grep -Ec '^info: job [^ ]+: (ok, |(compile_error|crash|timeout|out_of_memory|nan|error) \()' || true)
integrity=$(sqlite3 "$db" "PRAGMA integrity_check")
echo "runs finished: $finished of ${#submitted[@]} submitted${unfinished:+ (not done: $unfinished)}"
echo "evaluations lost: $lost (budgets of finished runs minus their training evaluations);" \
  "committed links lost across $coordinator_kills coordinator kills: $lost_links"
awk -v m="$measured" -v d="$distinct" 'BEGIN {
  printf "measurements: %d reported by workers for %d distinct evaluations: %d duplicate (%.1f%%)\n",
    m, d, m - d, d ? 100 * (m - d) / d : 0 }'
awk 'NR == 1 { first = $3; firstinc = $2 } { last = $3; lastinc = $2; if ($3 > peak) peak = $3 }
  END { printf "coordinator RSS: %.1f MiB at the start (incarnation %d), %.1f MiB at the end " \
    "(incarnation %d), peak %.1f MiB\n", first / 1024, firstinc, last / 1024, lastinc, peak / 1024 }' \
  "$samples"
awk -v inc="$incarnation" '$2 == inc { if (!n++) f = $3; l = $3 } END {
  printf "last coordinator (%d samples): %.1f MiB -> %.1f MiB\n", n, f / 1024, l / 1024 }' "$samples"
echo "integrity_check: $integrity; $worker_kills worker kills, $coordinator_kills coordinator kills"
