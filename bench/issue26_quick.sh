#!/usr/bin/env bash
# Issue #26 between full runs: Stipple's hand schedules against Halide 14's manual
# schedules on the nine apps, 1920x1080, 1 and 2 threads, STIPPLE_BENCH_ROUNDS
# interleaved rounds (default 2), each entry the lowest median; about 3 minutes. Prints
# issue #26's table of bench/issue3_table.py (its autoscheduler columns empty);
# bench/run_issue3.sh is the full comparison. Needs BUILD_DIR (default build) with the
# bench binaries (deploy/install-bench-deps.sh first). HL_JIT_TARGET as in run_issue3.sh.
# STIPPLE_BENCH_SIZES, a regex of sizes (default 1920x1080), e.g. '1920x1080|1536x2560|
# 2592x1968' for Halide's standard sizes too (about twice as long).
#
#   bench/issue26_quick.sh [BUILD_DIR]
set -euo pipefail
if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
  sed -n '2,11p' "$0" | cut -c3-
  exit 0
fi
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
# Halide 14 misdetects Zen 4/5 CPUs (Halide issue 7834): name the AVX-512 target; on
# Zen 3, HL_JIT_TARGET=host.
export HL_JIT_TARGET=${HL_JIT_TARGET:-x86-64-linux-avx-avx2-f16c-fma-sse41-avx512-avx512_skylake-avx512_cannonlake}
apps='bilateral_grid|bilateral_grid_halide|camera_pipe|harris|interpolate|local_laplacian|max_filter|nl_means|unsharp'
sizes=${STIPPLE_BENCH_SIZES:-1920x1080}
out=$(mktemp -d /tmp/issue26-quick.XXXXXX)
for round in $(seq 1 "${STIPPLE_BENCH_ROUNDS:-2}"); do
  dir=$out/round$round
  mkdir -p "$dir"
  echo "issue26_quick: round $round" >&2
  "$build/bench/stipple_pipelines_bench" --benchmark_filter="^($apps)/($sizes)/t[12]/" \
    --benchmark_min_time=1 --benchmark_out="$dir/stipple.json" --benchmark_out_format=json \
    >/dev/null 2>"$dir/stipple.log"
  for t in 1 2; do
    # Each thread count in its own process: HL_NUM_THREADS is read when Halide's pool starts.
    HL_NUM_THREADS=$t "$build/bench/halide_bench" \
      --benchmark_filter="^($apps)/($sizes)/t$t/halide_manual" --benchmark_min_time=1 \
      --benchmark_out="$dir/halide_t$t.json" --benchmark_out_format=json \
      >/dev/null 2>"$dir/halide_t$t.log"
  done
done
python3 "$root/bench/issue3_table.py" --apps-only "$out"
echo "issue26_quick: raw results in $out" >&2
