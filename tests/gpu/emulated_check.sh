#!/usr/bin/env bash
# emulated_check.sh BUILD_DIR RANDOM_SCHEDULES [PIPELINE...]: the CUDA back end's files
# run on this CPU (no GPU needed; a CTest test): the bundle of prepare_bundle.sh (each
# pipeline's GPU schedule and RANDOM_SCHEDULES random ones, and the C++ back end's
# reference output under the CPU hand schedule), then each CUDA file compiled as C++
# against the stand-in runtime of cuda_emulation/ (the kernels' own code, every block and
# thread run in turn) and its output compared with the reference byte for byte (within
# the harness's tolerance for a schedule with atomic updates, whose sums run in another
# order).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$1
randoms=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
STIPPLE_GPU_CHECK_WIDTH=131 STIPPLE_GPU_CHECK_HEIGHT=87 STIPPLE_GPU_PEER=0 \
  "$here/prepare_bundle.sh" "$build" "$work" "$randoms" 7 "$@" > "$work/prepare.log"

run_one() {
  local cu=$1 name pipeline
  name=$(basename "$cu" .cu)
  pipeline=${name%%.*}
  if ! c++ -std=c++17 -O1 -Wall -Wextra -Werror -I "$here/cuda_emulation" -x c++ \
      -DCASE_SOURCE="\"$cu\"" -o "$work/$name.emulated" "$work/harness.cpp" > "$work/$name.log" 2>&1; then
    echo "FAIL $name: does not compile: $(head -c 2000 "$work/$name.log")"
    return
  fi
  if grep -q 'atomic()' "$work/$name.sched"; then
    # Atomic updates sum in the order of the blocks and threads: within tolerance.
    if "$work/$name.emulated" "$work/$pipeline.case" 131 87 check "$work/$pipeline.raw" > "$work/$name.log" 2>&1; then
      echo "PASS $name (atomic: $(cat "$work/$name.log"))"
    else
      echo "FAIL $name: $(cat "$work/$name.log")"
    fi
  elif ! "$work/$name.emulated" "$work/$pipeline.case" 131 87 write "$work/$name.out" > "$work/$name.log" 2>&1; then
    echo "FAIL $name: $(cat "$work/$name.log")"
  elif cmp -s "$work/$name.out" "$work/$pipeline.raw"; then
    echo "PASS $name"
  else
    echo "FAIL $name: output differs from the reference ($(cmp "$work/$name.out" "$work/$pipeline.raw" | head -1))"
  fi
}
export -f run_one
export work here
ls "$work"/*.cu | xargs -P "$(nproc)" -I{} bash -c 'run_one {}' | sort > "$work/results"
cat "$work/results"
passed=$(grep -c '^PASS' "$work/results" || true)
failed=$(grep -c '^FAIL' "$work/results" || true)
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
