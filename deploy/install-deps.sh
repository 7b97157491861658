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
  # dataset builder (downloads opencv-doc's .deb and extracts it)
  dpkg-dev ca-certificates
)

exec "$(dirname "$0")/apt-install-missing.sh" install-deps "${packages[@]}"
