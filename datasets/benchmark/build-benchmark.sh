#!/usr/bin/env bash
# Builds Stipple's image benchmark from the photographs in Debian's opencv-doc package.
#
#   datasets/benchmark/build-benchmark.sh [OUT_DIR]      (default: datasets/benchmark/images)
#
# Steps: download opencv-doc's .deb with apt-get (no installation; root not needed when
# the apt lists exist), extract it with dpkg-deb, then run `stipple-dataset build` on its
# examples folder with the committed manifest: every source photo and every generated PNG
# is checked against the sha256 in datasets/benchmark/manifest.tsv.
#
# Idempotent: the .deb and its extraction are kept in datasets/benchmark/work/ (git-ignored)
# and reused; images already present with the right hash are not rewritten.
# Environment: STIPPLE_DATASET_TOOL (path of stipple-dataset; default: the first of
# build*/datasets/stipple-dataset, built with `cmake --build build --target stipple-dataset`),
# STIPPLE_DATASET_WORK (work folder).
set -euo pipefail

say() { echo "build-benchmark: $*"; }
die() { echo "build-benchmark: error: $*" >&2; exit 1; }

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="$(realpath -m "${1:-$here/images}")"  # absolute: the script changes folder
work="$(realpath -m "${STIPPLE_DATASET_WORK:-$here/work}")"
manifest="$here/manifest.tsv"
[ -f "$manifest" ] || die "manifest not found: $manifest"

tool="${STIPPLE_DATASET_TOOL:-}"
if [ -z "$tool" ]; then
  for candidate in "$repo"/build/datasets/stipple-dataset "$repo"/build*/datasets/stipple-dataset; do
    if [ -x "$candidate" ]; then tool="$candidate"; break; fi
  done
fi
[ -n "$tool" ] && [ -x "$tool" ] ||
  die "stipple-dataset not found; build it: cmake --build build --target stipple-dataset (or set STIPPLE_DATASET_TOOL)"

for cmd in apt-get dpkg-deb; do
  command -v "$cmd" >/dev/null || die "$cmd is missing (Debian: apt-get install dpkg-dev apt)"
done

start=$(date +%s)
mkdir -p "$work"
cd "$work"

# 1. Download the .deb unless one is already here.
deb="$(ls -1 opencv-doc_*_all.deb 2>/dev/null | tail -n 1 || true)"
if [ -n "$deb" ]; then
  say "reusing $work/$deb"
else
  say "downloading opencv-doc with apt-get download into $work"
  if ! apt-get download opencv-doc; then
    say "download failed; refreshing the package lists (apt-get update) and retrying"
    if [ "$(id -u)" -eq 0 ]; then apt-get update -qq || die "apt-get update failed"
    else sudo apt-get update -qq || die "apt-get update failed (needs root)"; fi
    apt-get download opencv-doc || die "apt-get download opencv-doc failed"
  fi
  deb="$(ls -1 opencv-doc_*_all.deb | tail -n 1)"
fi

# 2. Compare its version with the one the manifest was made from.
version="$(dpkg-deb -f "$deb" Version)" || die "$deb is not a readable .deb"
expected="$(sed -n 's/^# opencv-doc-version: //p' "$manifest")"
say "opencv-doc version $version (manifest: ${expected:-unrecorded})"
if [ "$version" != "$expected" ]; then
  echo "build-benchmark: warning: the manifest was made from opencv-doc $expected, this is" \
       "$version; source hashes may differ (see datasets/benchmark/README.md)" >&2
fi

# 3. Extract it once per version.
extracted="$work/opencv-doc-$version"
if [ -d "$extracted/usr/share/doc/opencv-doc/examples" ]; then
  say "reusing the extraction in $extracted"
else
  say "extracting $deb into $extracted"
  rm -rf "$extracted.tmp"
  dpkg-deb -x "$deb" "$extracted.tmp" || die "dpkg-deb -x $deb failed"
  mv "$extracted.tmp" "$extracted"
fi
source_dir="$extracted/usr/share/doc/opencv-doc/examples"
[ -d "$source_dir/data" ] || die "no examples/data folder in the package (layout changed?)"

# 4. Render and verify.
say "building the benchmark into $out with $tool"
mkdir -p "$out"
"$tool" build --source "$source_dir" --manifest "$manifest" --out "$out" ||
  die "stipple-dataset build failed (see the message above)"
say "done in $(( $(date +%s) - start )) s: $(find "$out" -name '*.png' | wc -l) images under $out"
