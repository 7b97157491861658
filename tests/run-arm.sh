#!/usr/bin/env bash
# The arm64 worker test (issue #33; label `arm`, not in tests/run.sh): cross-builds
# `stipple` and `stipple-evaluator` for arm64 (deploy/cross-build-arm64.sh: an arm64 Debian
# sysroot the first time, about 30 minutes on 2 cores from nothing), then runs a
# coordinator of this host's build and the arm64 worker under qemu-user on loopback, and
# tunes a run of its emulated aarch64 target (tests/client/arm_worker_test.cpp).
#
#   tests/run-arm.sh        # STIPPLE_ARM64_SYSROOT=DIR to keep the sysroot elsewhere
set -euo pipefail
cd "$(dirname "$0")/.."
sysroot=${STIPPLE_ARM64_SYSROOT:-/opt/stipple-arm64/sysroot}
jobs=$(nproc)

STIPPLE_ARM64_SYSROOT="$sysroot" deploy/cross-build-arm64.sh

echo "== build (RelWithDebInfo) of the coordinator and the test"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSTIPPLE_ARM64_BUILD_DIR="$PWD/build-arm64" -DSTIPPLE_ARM64_SYSROOT="$sysroot" >/dev/null
cmake --build build -j"$jobs" --target stipple stipple-evaluator arm_worker_test

echo "== the arm64 worker under qemu-user (label arm)"
ctest --test-dir build -L '^arm$' --output-on-failure
