#!/usr/bin/env bash
# Issue #5: the schedules bench/search_bench.sh found (the reuse model's, the searches'
# best exact ones) and the hand schedules against Halide 14's Mullapudi2016 and Adams2019
# autoschedulers and its manual schedules, on the same algorithms and the same 1920x1080
# input (bench_common.h), in one run, then one table per thread count.
#
#   bench/search_vs_halide.sh SEARCH_DB [BUILD_DIR]   # default build-bench
#
# Needs the benchmark build with Halide (deploy/install-bench-deps.sh, bench/run_issue3.sh).
# Run it on an idle machine. ROUNDS (default 2) runs both binaries that many times one
# after another; the table takes each entry's lowest median.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
db=${1:?usage: search_vs_halide.sh SEARCH_DB [BUILD_DIR]}
build=${2:-$root/build-bench}
out=$build/search-vs-halide
export HL_JIT_TARGET=${HL_JIT_TARGET:-x86-64-linux-avx-avx2-f16c-fma-sse41-avx512-avx512_skylake-avx512_cannonlake}
cmake --build "$build" --target stipple_pipelines_bench halide_bench
rm -rf "$out"
mkdir -p "$out/schedules"
python3 "$root/bench/search_vs_halide.py" schedules "$db" "$out/schedules"
ls "$out/schedules" >&2

pipelines="two_pass_blur|unsharp_mask|bilateral_grid|harris|camera_pipe|interpolate|local_laplacian"
for round in $(seq 1 "${ROUNDS:-2}"); do
  for t in 1 2; do
    echo "search_vs_halide: round $round, $t thread(s)" >&2
    STIPPLE_BENCH_SCHEDULES=$out/schedules "$build/bench/stipple_pipelines_bench" \
      --benchmark_filter="^($pipelines)/1920x1080/t$t/stipple_(reuse|genetic|hill|portfolio|hand)" \
      --benchmark_out="$out/stipple.$round.t$t.json" --benchmark_out_format=json \
      > "$out/stipple.$round.t$t.txt" 2> "$out/stipple.$round.t$t.log"
    # Halide's thread pool reads HL_NUM_THREADS when it starts (see run_issue3.sh).
    HL_NUM_THREADS=$t "$build/bench/halide_bench" \
      --benchmark_filter="^($pipelines)/1920x1080/t$t/halide_(mullapudi2016|adams2019|manual)" \
      --benchmark_out="$out/halide.$round.t$t.json" --benchmark_out_format=json \
      > "$out/halide.$round.t$t.txt" 2> "$out/halide.$round.t$t.log"
    grep -h '^check' "$out"/*."$round".t$t.log >&2 || true
  done
done
python3 "$root/bench/search_vs_halide.py" table "$out"/*.json
