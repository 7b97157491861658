#!/usr/bin/env bash
# Installs the Debian 12 packages that only the issue-#3 comparison benchmarks need
# (bench/opencv_bench, bench/halide_bench): OpenCV 4.6 and Halide 14. The main build and
# the tests never need them; bench/CMakeLists.txt builds those two binaries only when
# they are found. Idempotent, like install-deps.sh: apt is only asked when something is
# missing. Run as root (or with sudo available).
set -euo pipefail

packages=(
  # OpenCV 4.6: imgproc (box, Gaussian, bilateral, median, demosaic) and core
  libopencv-dev
  # Halide 14: libHalide, its headers and the autoscheduler plugins (Mullapudi2016,
  # Adams2019 with its baseline weights, Li2018)
  libhalide14-0-dev
)

exec "$(dirname "$0")/apt-install-missing.sh" install-bench-deps "${packages[@]}"
