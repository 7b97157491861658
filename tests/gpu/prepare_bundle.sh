#!/usr/bin/env bash
# prepare_bundle.sh BUILD_DIR BUNDLE_DIR [RANDOM_SCHEDULES] [SEED] [PIPELINE...]: everything the GPU
# device check needs, made on a CPU host (README.md beside this): each benchmark pipeline's
# CUDA files (its GPU schedule and random ones), the harness, and the reference outputs,
# computed here by the C++ source back end under the CPU hand schedules.
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
echo "bundle: $(ls "$bundle"/*.cu | wc -l) CUDA files, $(ls "$bundle"/*.raw | wc -l) references, $(du -sh "$bundle" | cut -f1)"
if [ -s "$bundle/skipped.txt" ]; then
  echo "not generated:"
  sed 's/^/  /' "$bundle/skipped.txt"
fi
