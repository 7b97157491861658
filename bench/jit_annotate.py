#!/usr/bin/env python3
"""Annotates a JIT-compiled function of a perf profile with its instructions.

perf cannot disassemble code the JIT made, but with STIPPLE_JIT_PERF=1 the JIT writes
/tmp/perf-PID.map (symbol, start, size) and each object it loads as /tmp/perf-PID.N.o.
This maps the profile's sample addresses in one symbol to offsets, finds the object that
defines the symbol, and prints `objdump -d` of it with the share of samples per
instruction, hottest lines first, then the whole function in order.

    STIPPLE_JIT_PERF=1 perf record -o /tmp/p.data build/stipple run ... --time 50
    bench/jit_annotate.py /tmp/p.data stipple_fn_0.out.s0.yo.par6 [--top 40]
"""
import argparse
import collections
import glob
import re
import subprocess
import sys


def samples(data, symbol):
    out = subprocess.run(["perf", "script", "-i", data, "-F", "pid,ip,sym"],
                         capture_output=True, text=True, check=True).stdout
    hits = collections.Counter()
    pid = None
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[2] == symbol:
            pid = parts[0]
            hits[int(parts[1], 16)] += 1
    return pid, hits


def symbol_start(pid, symbol):
    with open(f"/tmp/perf-{pid}.map") as f:
        for line in f:
            start, size, name = line.split(maxsplit=2)
            if name.strip() == symbol:
                return int(start, 16), int(size, 16)
    sys.exit(f"jit_annotate: {symbol} is not in /tmp/perf-{pid}.map")


def disassembly(pid, symbol):
    # The object names the symbol without the JIT's per-module prefix (stipple_fn_N.).
    local = re.sub(r"^stipple_fn_\d+\.", "", symbol)
    for obj in sorted(glob.glob(f"/tmp/perf-{pid}.*.o")):
        text = subprocess.run(["objdump", "-d", "--no-show-raw-insn", obj],
                              capture_output=True, text=True).stdout
        for name in (symbol, local):
            m = re.search(rf"^[0-9a-f]+ <{re.escape(name)}>:\n(.*?)(?:\n\n|\Z)", text,
                          re.M | re.S)
            if m:
                lines = m.group(1).splitlines()
                base = int(lines[0].split(":")[0], 16)
                return [(int(l.split(":")[0], 16) - base, l.split(":", 1)[1].strip())
                        for l in lines if ":" in l]
    sys.exit(f"jit_annotate: no object of process {pid} defines {symbol}")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", help="perf.data")
    ap.add_argument("symbol", help="the JIT symbol, as perf report names it")
    ap.add_argument("--top", type=int, default=40, help="hottest instructions to list")
    args = ap.parse_args()
    pid, hits = samples(args.data, args.symbol)
    if not hits:
        sys.exit(f"jit_annotate: no samples in {args.symbol}")
    start, _ = symbol_start(pid, args.symbol)
    total = sum(hits.values())
    by_offset = collections.Counter({ip - start: n for ip, n in hits.items()})
    code = disassembly(pid, args.symbol)
    print(f"{total} samples in {args.symbol}; hottest instructions:")
    for off, n in by_offset.most_common(args.top):
        text = next((t for o, t in code if o == off), "?")
        print(f"{100.0 * n / total:6.2f}%  {off:6x}  {text}")
    print("\nthe function in order:")
    for off, text in code:
        n = by_offset.get(off, 0)
        print(f"{100.0 * n / total:6.2f}%  {off:6x}  {text}" if n else f"         {off:6x}  {text}")


if __name__ == "__main__":
    main()
