#!/usr/bin/env bash
# device_check.sh BUNDLE_DIR OUT_DIR: the GPU device check, run on a machine with an NVIDIA
# GPU and nvcc (README.md beside this). Builds each CUDA file of the bundle into the
# harness, checks its output against the CPU reference, and times the GPU schedules of
# blur3x3, two_pass_blur, local_laplacian, camera_pipe, unsharp_mask, harris and the two
# bilateral grids at 1920x1080 and 6400x4800 (STIPPLE_GPU_TIMED="NAME ...": those alone),
# each beside its Halide peer where the bundle has one. Writes OUT_DIR/results.txt; exit 1
# if any check of Stipple's kernels failed.
set -uo pipefail
bundle=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
results="$out/results.txt"
read -r width height < "$bundle/size.txt"
arch=${STIPPLE_CUDA_ARCH:-sm_90}
{
  echo "== device"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
  nvcc --version | tail -1
  date -u
} > "$results" 2>&1

mkdir -p "$out/bin"
# Each CUDA file into the harness; a pipeline's GPU schedule (NAME.gpu) with its Halide
# peer where the bundle has one (NAME.halide.a, made by prepare_bundle.sh).
build() {
  local cu=$1 name pipeline
  name=$(basename "$cu" .cu)
  pipeline=${name%%.*}
  local peer=() link=()
  if [ "$name" = "$pipeline.gpu" ] && [ -f "$bundle/$pipeline.halide.a" ]; then
    peer=(-DHALIDE_PEER_HEADER="\"$bundle/$pipeline.halide.h\"")
    link=("$bundle/$pipeline.halide.a" -ldl -lpthread)
  fi
  if ! { nvcc -std=c++17 -O3 -arch="$arch" -fmad=false --expt-relaxed-constexpr -x cu \
           -DCASE_SOURCE="\"$cu\"" "${peer[@]}" -c -o "$bindir/$name.o" "$bundle/harness.cpp" &&
         nvcc -arch="$arch" -o "$bindir/$name" "$bindir/$name.o" "${link[@]}"; } \
      > "$bindir/$name.log" 2>&1; then
    echo "BUILD-FAIL $name"
  fi
  rm -f "$bindir/$name.o"
}
export -f build
export bundle arch
export bindir="$out/bin"
start=$(date +%s)
ls "$bundle"/*.cu | xargs -P "$(nproc)" -I{} bash -c 'build {}' >> "$results"
echo "== built in $(( $(date +%s) - start )) s" >> "$results"

echo "== check at ${width}x${height} against the CPU reference" >> "$results"
failed=0
for cu in "$bundle"/*.cu; do
  name=$(basename "$cu" .cu)
  pipeline=${name%%.*}
  if [ ! -x "$out/bin/$name" ]; then
    echo "$name: not built: $(head -c 600 "$out/bin/$name.log")" >> "$results"
    failed=1
    continue
  fi
  line=$(timeout 60 "$out/bin/$name" "$bundle/$pipeline.case" "$width" "$height" check "$bundle/$pipeline.raw" 2>&1)
  rc=$?
  echo "$name: ${line//$'\n'/ | }" >> "$results"
  [ $rc -eq 0 ] || failed=1
done

echo "== time (median of 20 after 3 warm-ups; CUDA events around pipeline_device)" >> "$results"
# STIPPLE_GPU_TIMED="NAME ..." times those pipelines alone (a shorter run).
for pipeline in ${STIPPLE_GPU_TIMED:-blur3x3 two_pass_blur local_laplacian camera_pipe \
    unsharp_mask harris bilateral_grid bilateral_grid_halide}; do
  # The GPU schedule and any other schedule of the bundle not drawn at random.
  for bin in "$out/bin/$pipeline".*; do
    name=$(basename "$bin")
    case "$name" in *.log | *.random*) continue ;; esac
    for size in "1920 1080" "6400 4800"; do
      # shellcheck disable=SC2086
      echo "$name: $(timeout 120 "$bin" "$bundle/$pipeline.case" $size time 20 2>&1)" >> "$results"
    done
  done
done
cat "$results"
exit $failed
