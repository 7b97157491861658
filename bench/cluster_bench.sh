#!/usr/bin/env bash
# Issue #6's cluster benchmark, part 2 (part 1, dispatch and added latency, is
# cluster_bench.cpp): evaluations per second of one real tuning run, the same pipeline,
# photos, seed and budget each time, as
#   1. `stipple tune` in process,
#   2. `stipple coordinator` + 1 `stipple worker`, driven by `stipple submit --wait`:
#      with one slot (--compile-jobs 1: compile and time one job at a time), then with
#      the default of one slot per core (a batch compiles at once, each job timed alone),
#   3. the same with 2 workers (on this 2-core machine they share the cores),
#   4. 1 worker again, with the coordinator and the worker (and the client) in two network
#      namespaces joined by a veth pair, so every call crosses a real network stack (TCP
#      over the veth link, not loopback). Needs root and `ip netns`; skipped, with the
#      reason, when they are missing.
# Each rate is measured evaluations (the rows of the run's fresh database, training and
# test) over the wall time of the tune or submit command; workers are registered and idle
# before the clock starts.
#
#   bench/cluster_bench.sh [BUILD_DIR]    # default build/; BUDGET=60 ROUNDS=3 to change
#
# Environment: BUDGET (training evaluations, default 60), SEED (default 1), ROUNDS (each
# round runs all four, one after another, so that a busy spell hits them alike; default
# 1), NETNS (0 skips step 4). Run it on an idle machine: every candidate is timed.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=cluster_common.sh
source "$root/bench/cluster_common.sh"
build=$(cd "${1:-$root/build}" && pwd)
stipple=$build/stipple
budget=${BUDGET:-60}
seed=${SEED:-1}
rounds=${ROUNDS:-1}
pipeline=$root/datasets/pipelines/two_pass_blur.stp
photos=(--images "$root/datasets/fixtures/people-256x192.png"
  --test-images "$root/datasets/fixtures/natural-high-64x48.png")
tmp=$(mktemp -d)
pids=()        # process groups we started (each in its own session, setsid)
namespaces=()  # network namespaces we created

cleanup() {
  local p
  for p in "${pids[@]}"; do kill -KILL -- "-$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  for p in "${namespaces[@]}"; do ip netns del "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now() { date +%s.%N; }
# Measured evaluations in a database (every run here starts from an empty one).
evaluations() { sqlite3 "$1" 'SELECT COUNT(*) FROM evaluations'; }
# Compiling dominates an evaluation of this small photo, and which schedules a search
# proposes depends on the timings it observes, so runs differ in what they compile: the
# mean compile time per evaluation shows how alike their work was.
report() {  # NAME SECONDS DB
  local e c
  e=$(evaluations "$3")
  c=$(sqlite3 "$3" 'SELECT AVG(compile_ms) FROM evaluations')
  awk -v n="$1" -v s="$2" -v e="$e" -v c="$c" 'BEGIN {
    printf "%-34s %4d evaluations in %6.2f s: %6.2f evaluations/s (mean compile %.0f ms)\n",
      n, e, s, e / s, c }'
}

# Splits "[PREFIX...] -- REST..." into the arrays prefix and rest. PREFIX: e.g.
# "ip netns exec NS", a command that runs the rest.
split_prefix() {
  prefix=()
  while [ "$1" != -- ]; do
    prefix+=("$1")
    shift
  done
  shift
  rest=("$@")
}

# Starts a command in a session of its own (so that its whole group can be killed);
# its output in $tmp/NAME.log.
spawn() {  # NAME [PREFIX...] -- COMMAND...
  local name=$1 prefix rest
  shift
  split_prefix "$@"
  setsid "${prefix[@]}" "${rest[@]}" >"$tmp/$name.log" 2>&1 &
  pids+=($!)
}

# Waits until N workers are registered (`stipple workers`).
wait_workers() {  # N [PREFIX...] -- WORKERS-ARGS...
  local n=$1 i prefix rest
  shift
  split_prefix "$@"
  for i in $(seq 300); do
    if [ "$("${prefix[@]}" "$stipple" workers "${rest[@]}" 2>/dev/null | grep -c '^w[0-9]')" -ge "$n" ]; then
      return
    fi
    sleep 0.1
  done
  echo "cluster_bench: $n worker(s) did not register" >&2
  exit 1
}

ratio() {  # SECONDS EVALUATIONS: the rate over the round's tune rate
  awk -v s="$1" -v e="$2" -v ts="$tune_s" -v te="$tune_n" \
    'BEGIN { printf "%-34s %.2f x tune\n", "", (e / s) / (te / ts) }'
}

# ---- 1. stipple tune in process ----
tune_rate() {  # ROUND
  local db=$tmp/tune$1.db
  t0=$(now)
  "$stipple" tune "$pipeline" "${photos[@]}" --budget "$budget" --seed "$seed" \
    --db "$db" >"$tmp/tune$1.log" 2>&1
  t1=$(now)
  tune_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
  tune_n=$(evaluations "$db")
  report "tune (in process)" "$tune_s" "$db"
}

# ---- 2, 3. coordinator + N workers on loopback ----
cluster_rate() {  # ROUND WORKERS [COMPILE_JOBS]
  local n=$2 i name=$1.$2${3:+.slots$3}
  local slots=()
  if [ -n "${3:-}" ]; then slots=(--compile-jobs "$3"); fi
  local db=$tmp/cluster$name.db
  spawn "coordinator$name" -- "$stipple" coordinator --listen 127.0.0.1:0 --db "$db"
  local coordinator_pid=${pids[-1]}
  local address
  address=$(coordinator_address "$tmp/coordinator$name.log" cluster_bench)
  local worker_pids=()
  for i in $(seq "$n"); do
    spawn "worker$name.$i" -- "$stipple" worker --coordinator "$address" --cache "$tmp/cache$name.$i" \
      "${slots[@]}"
    worker_pids+=("${pids[-1]}")
  done
  wait_workers "$n" -- --coordinator "$address"
  t0=$(now)
  "$stipple" submit "$pipeline" --coordinator "$address" "${photos[@]}" --budget "$budget" \
    --seed "$seed" --wait >"$tmp/submit$name.log" 2>&1
  t1=$(now)
  local s e
  s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
  e=$(evaluations "$db")
  report "coordinator + $n worker(s)${3:+, $3 slot(s)}, loopback" "$s" "$db"
  ratio "$s" "$e"
  for i in "${worker_pids[@]}" "$coordinator_pid"; do kill -TERM -- "-$i" 2>/dev/null || true; done
  for i in "${worker_pids[@]}" "$coordinator_pid"; do wait "$i" 2>/dev/null || true; done
}

# ---- 4. across network namespaces ----
cns=stipple-bench-c$$
wns=stipple-bench-w$$
netns_ok=0
setup_netns() {
  if [ "${NETNS:-1}" = 0 ]; then
    echo "network namespaces: skipped (NETNS=0)"
    return
  fi
  if ! ip netns add "$cns" 2>"$tmp/netns.err"; then
    echo "network namespaces: skipped, 'ip netns add' failed: $(cat "$tmp/netns.err")"
    return
  fi
  namespaces+=("$cns")
  ip netns add "$wns"
  namespaces+=("$wns")
  # Interface names are at most 15 characters.
  ip link add "sbc$$" type veth peer name "sbw$$"
  ip link set "sbc$$" netns "$cns"
  ip link set "sbw$$" netns "$wns"
  ip -n "$cns" addr add 10.200.0.1/24 dev "sbc$$"
  ip -n "$wns" addr add 10.200.0.2/24 dev "sbw$$"
  local ns
  for ns in "$cns" "$wns"; do ip -n "$ns" link set lo up; done
  ip -n "$cns" link set "sbc$$" up
  ip -n "$wns" link set "sbw$$" up
  # A non-loopback address needs a token (or --insecure): both sides read it from a file.
  head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$tmp/token"
  echo >>"$tmp/token"
  chmod 600 "$tmp/token"
  netns_ok=1
}

netns_rate() {  # ROUND
  local tok=(--token-file "$tmp/token")
  local db=$tmp/netns$1.db
  spawn "coordinator-netns$1" ip netns exec "$cns" -- \
    "$stipple" coordinator --listen 10.200.0.1:0 --db "$db" "${tok[@]}"
  local coordinator_pid=${pids[-1]}
  local address
  address=$(coordinator_address "$tmp/coordinator-netns$1.log" cluster_bench)
  spawn "worker-netns$1" ip netns exec "$wns" -- \
    "$stipple" worker --coordinator "$address" --cache "$tmp/cache-netns$1" "${tok[@]}"
  local worker_pid=${pids[-1]}
  # The client is on the worker's side: its calls (the photos, the progress stream) cross
  # the link too.
  wait_workers 1 ip netns exec "$wns" -- --coordinator "$address" "${tok[@]}"
  local stats=/sys/class/net/sbw$$/statistics
  local rx0 tx0 rx1 tx1 s e
  rx0=$(ip netns exec "$wns" cat "$stats/rx_bytes")
  tx0=$(ip netns exec "$wns" cat "$stats/tx_bytes")
  t0=$(now)
  ip netns exec "$wns" "$stipple" submit "$pipeline" --coordinator "$address" "${tok[@]}" \
    "${photos[@]}" --budget "$budget" --seed "$seed" --wait >"$tmp/submit-netns$1.log" 2>&1
  t1=$(now)
  rx1=$(ip netns exec "$wns" cat "$stats/rx_bytes")
  tx1=$(ip netns exec "$wns" cat "$stats/tx_bytes")
  s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
  e=$(evaluations "$db")
  report "coordinator + 1 worker, veth" "$s" "$db"
  ratio "$s" "$e"
  echo "  coordinator $address in netns $cns; worker and client at 10.200.0.2 in netns" \
    "$wns; the worker's veth: $((rx1 - rx0)) bytes received, $((tx1 - tx0)) sent"
  kill -TERM -- "-$worker_pid" "-$coordinator_pid" 2>/dev/null || true
  wait "$worker_pid" "$coordinator_pid" 2>/dev/null || true
}

echo "cluster_bench: two_pass_blur, budget $budget, seed $seed, $rounds round(s), $(nproc) cores"
setup_netns
for round in $(seq "$rounds"); do
  echo "== round $round, $(uptime | sed 's/.*load average/load average/')"
  tune_rate "$round"
  cluster_rate "$round" 1 1
  cluster_rate "$round" 1
  cluster_rate "$round" 2
  if [ "$netns_ok" = 1 ]; then netns_rate "$round"; fi
done
