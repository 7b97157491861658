#!/usr/bin/env bash
# Issue #5's search benchmark: each strategy of `stipple tune` at equal budget on the
# paper pipelines, on the image benchmark's training photos at 820x614 (fronts re-measured
# on its first test photos), all in one SQLite file; then one Markdown table
# (bench/search_table.py): the hand schedule, the reuse model's schedule and its
# optimisation time, the best exact schedule each search found, the hypervolume of each
# strategy's front and its best speedup at mean dE <= 2 against the best exact schedule.
#
#   bench/search_bench.sh [BUILD_DIR]     # default build; BUDGET=100 PIPELINES="..." to change
#
# Environment: BUDGET (evaluations per strategy, default 100), PIPELINES, STRATEGIES,
# TRAIN_PHOTOS and TEST_PHOTOS (how many of the manifest's 820x614 photos of each split,
# default 5 and 6), THREADS (tune --threads; default one per core), RUNS (tune --runs, timed runs per photo;
# default 5), OUT (results folder).
#
# Needs the image benchmark (datasets/benchmark/build-benchmark.sh). Run it on an idle
# machine: every candidate is timed.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
budget=${BUDGET:-100}
pipelines=${PIPELINES:-"two_pass_blur unsharp_mask bilateral_grid harris camera_pipe interpolate local_laplacian"}
strategies=${STRATEGIES:-"reuse genetic hill portfolio"}
trains=${TRAIN_PHOTOS:-5}
tests=${TEST_PHOTOS:-6}
threads=${THREADS:-}
runs=${RUNS:-5}
out=${OUT:-$build/search-results}
images=$root/datasets/benchmark/images
mkdir -p "$out"
db=$out/search.db
rm -f "$db" "$db-wal" "$db-shm"

# The manifest's 820x614 photos by split.
mapfile -t train < <(awk -F'\t' '!/^#/ && $6 == "train" && $7 == "820x614" {print "'"$images"'/" $8}' \
  "$root/datasets/benchmark/manifest.tsv" | head -n "$trains")
mapfile -t test < <(awk -F'\t' '!/^#/ && $6 == "test" && $7 == "820x614" {print "'"$images"'/" $8}' \
  "$root/datasets/benchmark/manifest.tsv" | head -n "$tests")
if [ ! -f "${train[0]}" ]; then
  echo "search_bench: no benchmark photos in $images; run datasets/benchmark/build-benchmark.sh" >&2
  exit 2
fi
image_args=()
for f in "${train[@]}"; do image_args+=(--images "$f"); done
for f in "${test[@]}"; do image_args+=(--test-images "$f"); done
if [ -n "$threads" ]; then image_args+=(--threads "$threads"); fi
image_args+=(--runs "$runs")

echo "search_bench: budget $budget, ${#train[@]} training and ${#test[@]} test photos," \
  "threads ${threads:-one per core}, $runs timed runs per photo, $(nproc) cores" >&2
for p in $pipelines; do
  for s in $strategies; do
    echo "== $p $s" >&2
    "$build/stipple" tune "$root/datasets/pipelines/$p.stp" --strategy "$s" --budget "$budget" \
      --seed 1 --db "$db" "${image_args[@]}" > "$out/$p.$s.log" 2>&1 ||
      echo "search_bench: $p $s failed (see $out/$p.$s.log)" >&2
    tail -n 1 "$out/$p.$s.log" >&2
  done
done
python3 "$root/bench/search_table.py" "$db" "$out"
