#!/usr/bin/env bash
# Installs the Debian packages Stipple needs (if missing) and builds it into build/.
# Usage: deploy/build.sh [extra cmake options]
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build build -j"$(nproc)"
