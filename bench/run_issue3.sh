#!/usr/bin/env bash
# Issue #3's benchmark run, in one command: builds the benchmark binaries, runs them back
# to back (Stipple compile and run times, the straightforward C++ loops, the bandwidth
# bound, then OpenCV and Halide when they were built, see deploy/install-bench-deps.sh)
# and prints one Markdown table with the ratios the issue asks for.
#
#   bench/run_issue3.sh [BUILD_DIR]        # default build-bench; about 40 minutes a round
#                                          # (Zen 5 VM; most of it Halide's autoschedulers
#                                          # and the apps at two sizes)
#
# The machine this runs on is a shared VM whose speed changes by 20-50% from minute to
# minute, so the binaries run in STIPPLE_BENCH_ROUNDS rounds (default 3), one after
# another in each round, and the table takes every entry's lowest median over the rounds:
# each comparator is measured in every period, and a slow period only adds time.
#
# The raw Google Benchmark JSON and each binary's checks (stderr) land in
# BUILD_DIR/issue3-results/. Extra arguments for every binary can be given in
# STIPPLE_BENCH_ARGS (not a --benchmark_filter: the Halide runs filter by thread count);
# STIPPLE_BENCH_APPS, a regex of pipeline names, runs only those (e.g. issue #26's nine
# apps: STIPPLE_BENCH_APPS='bilateral_grid|bilateral_grid_halide|camera_pipe|harris|
# interpolate|local_laplacian|max_filter|nl_means|unsharp', about a third of the time).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-bench}
out=$build/issue3-results
# Halide 14 misdetects Zen 4/5 CPUs (Halide issue 7834): name the AVX-512 target.
export HL_JIT_TARGET=${HL_JIT_TARGET:-x86-64-linux-avx-avx2-f16c-fma-sse41-avx512-avx512_skylake-avx512_cannonlake}

cmake -S "$root" -B "$build" -G Ninja >/dev/null
binaries=(stipple_pipelines_bench cpp_reference_loops bandwidth_bench)
for optional in opencv_bench halide_bench; do
  if cmake --build "$build" --target help | grep -q "^$optional:"; then
    binaries+=("$optional")
  else
    echo "run_issue3: $optional is not built (run deploy/install-bench-deps.sh); skipping it" >&2
  fi
done
cmake --build "$build" --target "${binaries[@]}"

rounds=${STIPPLE_BENCH_ROUNDS:-3}
apps=${STIPPLE_BENCH_APPS:-.*}
rm -rf "$out"
mkdir -p "$out"
start=$(date +%s)
run() {  # DIR NAME BINARY [ARGS...]: one binary's JSON, console output and checks
  local dir=$1 name=$2 b=$3
  shift 3
  echo "run_issue3: $dir $name" >&2
  # shellcheck disable=SC2086
  "$build/bench/$b" --benchmark_out="$dir/$name.json" --benchmark_out_format=json "$@" \
    ${STIPPLE_BENCH_ARGS:-} 2>"$dir/$name.log" >"$dir/$name.txt"
  grep -h '^check\|^note' "$dir/$name.log" >&2 || true
}
for round in $(seq 1 "$rounds"); do
  dir=$out/round$round
  mkdir -p "$dir"
  for b in "${binaries[@]}"; do
    if [ "$b" = halide_bench ]; then
      # halide_set_num_threads, called in-process through a one-value pipeline, did not
      # take effect in a measured run (1-thread runs used both cores), so each thread
      # count gets its own process with HL_NUM_THREADS, read when Halide's pool starts.
      HL_NUM_THREADS=1 run "$dir" halide_bench_t1 "$b" --benchmark_filter="^($apps)/.*/t1/"
      HL_NUM_THREADS=2 run "$dir" halide_bench_t2 "$b" --benchmark_filter="^($apps)/.*/t2/"
    else
      run "$dir" "$b" "$b" --benchmark_filter="^(compile/)?($apps)/"
    fi
  done
done
echo "run_issue3: benchmarks took $(( $(date +%s) - start )) s" >&2
python3 "$root/bench/issue3_table.py" "$out"
