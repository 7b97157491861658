#!/usr/bin/env bash
# Issue #26 between full runs: Stipple's hand schedules against Halide 14's manual
# schedules on the nine apps, 1920x1080, 1 and 2 threads, ROUNDS interleaved rounds (2 by
# default), the lowest median of each; about 3 minutes. bench/run_issue3.sh is the full
# comparison (autoschedulers, compile times, issue #3's pipelines). Needs build/ with the
# bench binaries (deploy/install-bench-deps.sh, then deploy/build.sh or bench/run_issue3.sh).
# HL_TARGET overrides Halide's JIT target: the default has AVX-512, for Zen 4 and 5, which
# Halide 14 misdetects; use HL_TARGET=host on Zen 3.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
  sed -n '2,8p' "$0" | cut -c3-
  exit 0
fi
F='^(bilateral_grid|bilateral_grid_halide|camera_pipe|harris|interpolate|local_laplacian|max_filter|nl_means|unsharp)/1920x1080/t[12]'
T=${HL_TARGET:-x86-64-linux-avx-avx2-f16c-fma-sse41-avx512-avx512_skylake-avx512_cannonlake}
out=$(mktemp -d /tmp/issue26-quick.XXXXXX)
for r in $(seq 1 ${ROUNDS:-2}); do
  echo "round $r" >&2
  build/bench/stipple_pipelines_bench --benchmark_filter="$F" --benchmark_min_time=1 2>/dev/null | grep -E "^[a-z_]+/" >> "$out/stipple.txt"
  for t in 1 2; do
    HL_NUM_THREADS=$t HL_JIT_TARGET=$T build/bench/halide_bench --benchmark_filter="${F%t\[12\]}t$t/halide_manual" --benchmark_min_time=1 2>/dev/null | grep -E "^[a-z_]+/" >> "$out/halide.txt"
  done
done
python3 - "$out" <<'PY'
import re, math, collections, sys
def load(p):
    d = collections.defaultdict(lambda: 1e9)
    for line in open(p):
        name = line.split()[0]; m = re.search(r"min_ms=([0-9.]+)", line)
        app, size, th = name.split("/")[:3]
        d[(app, th)] = min(d[(app, th)], float(m.group(1)))
    return d
s = load(sys.argv[1] + "/stipple.txt"); h = load(sys.argv[1] + "/halide.txt")
apps = ["bilateral_grid","bilateral_grid_halide","camera_pipe","harris","interpolate","local_laplacian","max_filter","nl_means","unsharp"]
print("| pipeline | threads | Stipple hand | Halide manual | hand/manual |")
print("|---|---|---|---|---|")
for th in ["t1","t2"]:
    logs = []
    for a in apps:
        r = s[(a,th)]/h[(a,th)]; logs.append(math.log(r))
        print(f"| {a} | {th[1]} | {s[(a,th)]:.3g} | {h[(a,th)]:.3g} | {r:.2f} |")
    print(f"| geometric mean | {th[1]} | | | {math.exp(sum(logs)/len(logs)):.2f} |")
PY
