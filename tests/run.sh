#!/usr/bin/env bash
# The whole test suite, exactly as CI runs it (.ci/run calls this script):
#   1. installs the Debian packages the build needs (deploy/install-deps.sh),
#   2. builds RelWithDebInfo into build/ and runs every test but the arm64 worker's (label
#      `arm`, which needs a cross-build: tests/run-arm.sh),
#   3. builds with AddressSanitizer + UndefinedBehaviorSanitizer into build-asan/ and runs
#      the tests labelled `asan` (the language, IR, evaluator, image and proto tests).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

deploy/install-deps.sh

echo "== build (RelWithDebInfo)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"

echo "== build (ASan + UBSan)"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSTIPPLE_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs"

echo "== tests under ASan + UBSan (label asan)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  LSAN_OPTIONS=suppressions="$PWD/tests/lsan.supp" \
  ctest --test-dir build-asan -L asan --output-on-failure -j"$jobs"

echo "== all tests (RelWithDebInfo) but the arm64 worker's (label arm: tests/run-arm.sh)"
ctest --test-dir build -LE '^arm$' --output-on-failure -j"$jobs"
