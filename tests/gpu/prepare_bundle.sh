#!/usr/bin/env bash
# prepare_bundle.sh BUILD_DIR BUNDLE_DIR [RANDOM_SCHEDULES] [SEED] [PIPELINE...]: everything the GPU
# device check needs, made on a CPU host (README.md beside this): each benchmark pipeline's
# CUDA files (its GPU schedule and random ones), the harness, the reference outputs,
# computed here by the C++ source back end under the CPU hand schedules, and the Halide
# GPU peers where the build has bench/halide_gpu_peer.
set -euo pipefail
build=$(cd "$1" && pwd)
mkdir -p "$2"
bundle=$(cd "$2" && pwd)
randoms=${3:-2}
seed=${4:-1}
shift $(( $# < 4 ? $# : 4 ))  # what is left: the pipelines to take (all when none)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# The reference size: big enough for every pipeline's pyramid levels and tiles' tails.
width=${STIPPLE_GPU_CHECK_WIDTH:-333}
height=${STIPPLE_GPU_CHECK_HEIGHT:-250}

rm -f "$bundle"/*.cu "$bundle"/*.cpp "$bundle"/*.raw "$bundle"/*.case "$bundle"/*.sched
"$build/tests/gpu/make_gpu_cases" "$repo/datasets/pipelines" "$bundle" "$randoms" "$seed" "$@" > /dev/null
cp "$here/harness.cpp" "$here/device_check.sh" "$bundle/"
echo "$width $height" > "$bundle/size.txt"

make_ref() {
  local ref=$1 name
  name=$(basename "$ref" .ref.cpp)
  c++ -O2 -std=c++17 -pthread -DCASE_SOURCE="\"$ref\"" -o "$bundle/$name.ref" "$bundle/harness.cpp"
  "$bundle/$name.ref" "$bundle/$name.case" "$width" "$height" write "$bundle/$name.raw"
  rm -f "$bundle/$name.ref"
}
export -f make_ref
export bundle width height
ls "$bundle"/*.ref.cpp | xargs -P "$(nproc)" -I{} bash -c 'make_ref {}'

# The Halide 14 peer, where the build has it (bench/halide_gpu_peer needs Halide 14,
# deploy/install-bench-deps.sh): each pipeline's Halide version under Halide's GPU schedule,
# compiled here for CUDA; device_check.sh times it beside the pipeline's GPU schedule.
rm -f "$bundle"/*.halide.a "$bundle"/*.halide.h
if [ "${STIPPLE_GPU_PEER:-1}" = 0 ]; then
  echo "no Halide peer: STIPPLE_GPU_PEER=0" > "$bundle/halide_peer.log"
elif [ -x "$build/bench/halide_gpu_peer" ]; then
  mapfile -t cased < <(ls "$bundle"/*.case | xargs -n1 basename | sed 's/\.case$//')
  "$build/bench/halide_gpu_peer" "$bundle" "${cased[@]}" > /dev/null 2> "$bundle/halide_peer.log" ||
    { cat "$bundle/halide_peer.log"; exit 1; }
else
  echo "no Halide peer: $build/bench/halide_gpu_peer not built" > "$bundle/halide_peer.log"
fi
echo "bundle: $(ls "$bundle"/*.cu | wc -l) CUDA files, $(ls "$bundle"/*.raw | wc -l) references, $(ls "$bundle"/*.halide.a 2> /dev/null | wc -l) Halide peers, $(du -sh "$bundle" | cut -f1)"
if [ -s "$bundle/skipped.txt" ]; then
  echo "not generated:"
  sed 's/^/  /' "$bundle/skipped.txt"
fi
