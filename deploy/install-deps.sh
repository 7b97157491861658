#!/usr/bin/env bash
# Installs every Debian 12 package Stipple needs to build, test and benchmark.
# Idempotent: packages already present are left alone, and apt is only asked when
# something is missing. Run as root (or with sudo available).
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build pkg-config clang-14 lld-14 libclang-rt-14-dev
  clang-format
  # compiler cache: the normal and sanitiser trees, and clean clones, share objects
  ccache
  # compiler back end and solver
  llvm-14-dev libz3-dev
  # service
  libgrpc++-dev protobuf-compiler-grpc protobuf-compiler libprotobuf-dev
  # SHA-256 of photos, setups and job ids (OpenSSL's libcrypto; search/content_hash.h)
  libssl-dev
  # storage, logging, command line, formats
  libsqlite3-dev libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  libtomlplusplus-dev
  # images
  libstb-dev libpng-dev libjpeg-dev zlib1g-dev
  # tests and benchmarks (python3: the include-graph check, tests/layering/)
  libgtest-dev libgmock-dev libbenchmark-dev python3
  # the TLS tests make throwaway certificates with the openssl command
  openssl
  # the nightly report's page is rendered by headless Chromium in its test; the deploy
  # tests check the systemd units (systemd-analyze) and the Kubernetes CronJob against the
  # API's models (the Kubernetes Python client; the manifest read with PyYAML)
  chromium systemd python3-kubernetes python3-yaml
  # the Python module (client/python/) and its tests: pybind11, numpy arrays, pytest
  pybind11-dev python3-dev python3-numpy python3-pytest
  # AArch64 code is checked under emulation (tests/client/aarch64_emulated_test.cpp):
  # Debian's cross toolchain links it and qemu-user runs it
  g++-aarch64-linux-gnu qemu-user-static
  # dataset builder (downloads opencv-doc's .deb and extracts it)
  dpkg-dev ca-certificates
)

# The CUDA back end's tests compile kernels with Debian's CUDA 11.8 toolkit (nvcc, ptxas),
# which is in the non-free component (its driver library's dependencies in contrib).
# --no-install-recommends keeps it to about 56 packages; on a host without a GPU the
# toolkit still compiles, and only running kernels needs one (tests/gpu/README.md).
packages+=(nvidia-cuda-toolkit nvidia-cuda-dev)
sources=/etc/apt/sources.list.d/stipple-cuda.sources
if ! dpkg-query -W -f='${Status}' nvidia-cuda-toolkit 2>/dev/null | grep -q 'install ok installed' &&
  ! grep -rqsE '(^|[[:space:]])non-free([[:space:]]|$)' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: contrib non-free\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' |
    $SUDO tee "$sources" > /dev/null
  echo "install-deps: enabled Debian's contrib and non-free components ($sources) for the CUDA toolkit"
fi

exec "$(dirname "$0")/apt-install-missing.sh" install-deps "${packages[@]}"
