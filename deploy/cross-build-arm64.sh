#!/usr/bin/env bash
# Builds `stipple` and `stipple-evaluator` for arm64 Linux on this x86-64 Debian 12 host
# (issue #33), into build-arm64/, and checks that they run under qemu-user:
#
#   deploy/cross-build-arm64.sh            # then: qemu-aarch64-static -L SYSROOT build-arm64/stipple ...
#
# The libraries come from an arm64 Debian 12 sysroot that the script unpacks once into
# $STIPPLE_ARM64_SYSROOT (default /opt/stipple-arm64/sysroot; about 1.5 GB): debootstrap's
# first stage downloads the packages, which are unpacked without running their scripts
# (nothing in a sysroot runs; it only has to hold headers, libraries and CMake packages).
# Compiling uses Debian's aarch64-linux-gnu GCC, and protoc and the gRPC plugin of this
# host (cmake/aarch64-linux-gnu.cmake). About 30 minutes on 2 cores from nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
sysroot=${STIPPLE_ARM64_SYSROOT:-/opt/stipple-arm64/sysroot}
jobs=$(nproc)

deploy/install-deps.sh
deploy/apt-install-missing.sh cross-build-arm64 debootstrap

# Every library the build links, as deploy/install-deps.sh lists them for the host.
packages=build-essential,llvm-14-dev,libz3-dev,libgrpc++-dev,libprotobuf-dev,libssl-dev
# (protobuf-compiler-grpc: the gRPC package names its plugin, which must exist, though the
# host's runs)
packages+=,protobuf-compiler-grpc
packages+=,libsqlite3-dev,libspdlog-dev,libfmt-dev,libcli11-dev,nlohmann-json3-dev
packages+=,libtomlplusplus-dev,libstb-dev,libpng-dev,libjpeg-dev,zlib1g-dev

if [ ! -f "$sysroot/.stipple-sysroot-complete" ]; then
  echo "== arm64 sysroot in $sysroot (downloads about 230 packages)"
  rm -rf "$sysroot"
  mkdir -p "$sysroot"
  debootstrap --foreign --arch=arm64 --variant=minbase --include="$packages" \
    bookworm "$sysroot" http://deb.debian.org/debian
  for deb in "$sysroot"/var/cache/apt/archives/*.deb; do dpkg-deb -x "$deb" "$sysroot"; done
  # Links to absolute paths (libz.so -> /lib/aarch64-linux-gnu/libz.so.1) would name this
  # host's files: make each relative to the sysroot.
  find "$sysroot" -type l -lname '/*' -print0 |
    while IFS= read -r -d '' link; do
      target=$(readlink "$link")
      ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$sysroot$target")" "$link"
    done
  touch "$sysroot/.stipple-sysroot-complete"
fi
# The worker's GPU probe compiles against cuda.h, the driver API's declarations (it loads
# libcuda at run time; nothing is linked): the header is the same on every architecture,
# and the host has it (nvidia-cuda-dev, from deploy/install-deps.sh).
if [ ! -f "$sysroot/usr/include/cuda.h" ]; then
  cp /usr/include/cuda.h "$sysroot/usr/include/cuda.h"
fi

echo "== build (arm64, RelWithDebInfo) in build-arm64"
cmake -S . -B build-arm64 -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/aarch64-linux-gnu.cmake" \
  -DSTIPPLE_ARM64_SYSROOT="$sysroot" -DSTIPPLE_BUILD_TESTS=OFF >/dev/null
cmake --build build-arm64 -j"$jobs" --target stipple stipple-evaluator

echo "== run under qemu-user"
qemu="qemu-aarch64-static -L $sysroot"
file build-arm64/stipple | grep -q 'ARM aarch64' || { echo "build-arm64/stipple is not an arm64 program" >&2; exit 1; }
$qemu build-arm64/stipple --version
out=$(mktemp -d)
$qemu build-arm64/stipple run datasets/pipelines/two_pass_blur.stp \
  --schedule datasets/pipelines/two_pass_blur.sched \
  --input in=datasets/fixtures/natural-high-64x48.png --output "$out/blur.png"
echo "cross-build-arm64: build-arm64/stipple and build-arm64/stipple-evaluator run under qemu ($out/blur.png)"
