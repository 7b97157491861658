#!/usr/bin/env python3
"""Issue #3's table: reads the Google Benchmark JSON files that bench/run_issue3.sh wrote
and prints Markdown tables of compile times, run times (median milliseconds per variant)
and the ratios the issue's targets are about; then issue #26's table: the multi-stage
apps under Stipple's hand schedules against Halide 14's manual schedules and
autoschedulers.

    python3 bench/issue3_table.py BUILD_DIR/issue3-results
    python3 bench/issue3_table.py --apps-only FOLDER     # issue #26's table alone
"""
import glob
import json
import os
import statistics
import sys

VARIANTS = ["stipple_default", "stipple_hand", "cpp", "opencv", "halide_breadth_first",
            "halide_mullapudi2016", "halide_adams2019", "halide_manual"]
SHORT = {"stipple_default": "default", "stipple_hand": "hand", "cpp": "C++ -O3",
         "opencv": "OpenCV", "halide_breadth_first": "H breadth-first",
         "halide_mullapudi2016": "H Mullapudi", "halide_adams2019": "H Adams",
         "halide_manual": "H manual"}
# Variants without parallel loops, timed with one thread only.
SERIAL = {"stipple_default", "cpp", "halide_breadth_first"}


def issue3_pipelines(r):
    """Issue #3's pipelines: the ones timed under the default schedule too
    (issue3_pipelines() in bench_common.h)."""
    return {k[0] for k in r if len(k) == 4 and k[3] == "stipple_default"}


def app_pipelines(r):
    """Issue #26's apps: the others that Stipple and Halide's manual schedule both ran
    (halide_app_pipelines() in bench_common.h)."""
    hand = {k[0] for k in r if len(k) == 4 and k[3] == "stipple_hand"}
    manual = {k[0] for k in r if len(k) == 4 and k[3] == "halide_manual"}
    return sorted((hand & manual) - issue3_pipelines(r))


def load(folder):
    """Every benchmark of every round (folder/roundN/*.json, or folder/*.json for a single
    run), keeping for each the round with the lowest median: the machine is shared, and a
    busy period only adds time."""
    results = {}
    paths = glob.glob(os.path.join(folder, "*.json")) + glob.glob(
        os.path.join(folder, "round*", "*.json"))
    for path in sorted(paths):
        with open(path) as f:
            data = json.load(f)
        for b in data.get("benchmarks", []):
            if b.get("run_type") == "aggregate":
                continue
            parts = b["name"].split("/")
            key = tuple(p for p in parts if not p.startswith(("min_time", "real_time")))
            if key not in results or b.get("median_ms", 0) < results[key].get("median_ms", 0):
                results[key] = b
    return results


def rounds(folder):
    return max(1, len(glob.glob(os.path.join(folder, "round*"))))


def fmt(ms):
    if ms is None:
        return "-"
    return f"{ms:.0f}" if ms >= 100 else f"{ms:.3g}"


def median(r, p, size, t, v):
    b = r.get((p, size, f"t{t}", v))
    return b["median_ms"] if b else None


def thread_counts(r):
    return sorted({int(k[2][1:]) for k in r if k[0] not in ("compile",)})


def main():
    args = sys.argv[1:]
    apps_only = "--apps-only" in args
    args = [a for a in args if a != "--apps-only"]
    folder = args[0] if args else "build-bench/issue3-results"
    r = load(folder)
    if apps_only:
        apps_table(r, thread_counts(r), lambda p, size, t, v: median(r, p, size, t, v))
        return
    ok = True

    n = rounds(folder)
    if n > 1:
        print(f"Each entry: the lowest of {n} rounds' medians (bench/run_issue3.sh).\n")
    print("### Compile time (lower + JIT, median; hand schedules unless marked)\n")
    print("| pipeline | stages | schedule | median ms | of which JIT ms |")
    print("|---|---|---|---|---|")
    worst_small = 0.0
    for key, b in sorted(r.items()):
        if key[0] != "compile":
            continue
        stages = int(b["stages"])
        print(f"| {key[1]} | {stages} | {key[2]} | {b['median_ms']:.1f} | {b['jit_ms']:.1f} |")
        if stages <= 10:
            worst_small = max(worst_small, b["median_ms"])
    if worst_small:
        passed = worst_small < 100
        ok &= passed
        print(f"\nSlowest median compile of a pipeline of up to 10 stages: {worst_small:.1f} ms "
              f"(target < 100 ms: {'met' if passed else 'NOT met'})\n")

    configs = sorted({(k[0], k[1]) for k in r if k[0] in issue3_pipelines(r)},
                     key=lambda pc: (pc[0], [int(v) for v in pc[1].split("x")]))
    threads = thread_counts(r)

    def ms(p, size, t, v):
        return median(r, p, size, t, v)

    print("### Run time (median ms)\n")
    print("Serial variants (default schedule, C++, Halide breadth-first) run with one thread; "
          "their t1 time is used in the t2 ratios. best = the faster of OpenCV and Halide's best "
          "schedule at the same thread count.\n")
    print("| pipeline | size | threads | " + " | ".join(SHORT[v] for v in VARIANTS) +
          " | hand/C++ | hand/best |")
    print("|---|---|---|" + "---|" * (len(VARIANTS) + 2))
    for p, size in configs:
        for t in threads:
            row = []
            for v in VARIANTS:
                row.append(fmt(ms(p, size, t, v) if t == 1 or v not in SERIAL else None))
            hand = ms(p, size, t, "stipple_hand")
            cpp = ms(p, size, 1, "cpp")
            comparators = [ms(p, size, t, v) for v in VARIANTS if v.startswith(("opencv", "halide"))]
            comparators += [ms(p, size, 1, "halide_breadth_first")]
            comparators = [c for c in comparators if c is not None]
            best = min(comparators) if comparators else None
            vs_cpp = f"{hand / cpp:.2f}" if hand and cpp else "-"
            vs_best = f"{hand / best:.2f}" if hand and best else "-"
            if hand and cpp and hand / cpp > 1 / 3:
                vs_cpp += " (target <= 0.33 NOT met)"
                ok = False
            if hand and best and hand / best > 1.25:
                vs_best += " (target <= 1.25 NOT met)"
                ok = False
            print(f"| {p} | {size} | {t} | " + " | ".join(row) + f" | {vs_cpp} | {vs_best} |")

    bw = {k: b for k, b in r.items() if k[0] == "bandwidth"}
    if bw:
        print("\n### blur3x3 against the memory-bandwidth bound\n")
        print("| size | threads | copy loop ms | memcpy ms | bound ms (GB/s) | blur3x3 hand ms | "
              "hand/bound |")
        print("|---|---|---|---|---|---|---|")
        for size in sorted({k[1] for k in bw}):
            gbytes = 2 * 4 * 3 * int(size.split("x")[0]) * int(size.split("x")[1]) / 1e9
            for t in threads:
                loop = ms("bandwidth", size, t, "copy_loop")
                mc = ms("bandwidth", size, t, "memcpy")
                if loop is None or mc is None:
                    continue
                bound = min(loop, mc)
                hand = ms("blur3x3", size, t, "stipple_hand")
                ratio = f"{hand / bound:.2f}" if hand else "-"
                if hand and hand / bound > 1.5:
                    ratio += " (target <= 1.5 NOT met)"
                    ok = False
                print(f"| {size} | {t} | {fmt(loop)} | {fmt(mc)} | {fmt(bound)} "
                      f"({gbytes / (bound / 1e3):.1f}) | {fmt(hand)} | {ratio} |")

    print(f"\nAll issue-#3 targets met: {'yes' if ok else 'no'}")
    apps_table(r, threads, ms)


def apps_table(r, threads, ms):
    """Issue #26: every app within 1.1x of Halide's manual schedule, geometric mean <= 1.0."""
    apps = [(p, size) for p in app_pipelines(r) for size in sorted({k[1] for k in r if k[0] == p})]
    if not apps:
        return
    print("\n### Issue #26: Halide's apps, Stipple's hand schedules against Halide 14\n")
    print("| pipeline | size | threads | hand | H manual | H Mullapudi | H Adams | "
          "hand/manual | hand/best auto |")
    print("|---|---|---|---|---|---|---|---|---|")
    ok = True
    for t in threads:
        ratios = []
        for p, size in apps:
            hand = ms(p, size, t, "stipple_hand")
            manual = ms(p, size, t, "halide_manual")
            autos = [ms(p, size, t, v) for v in ("halide_mullapudi2016", "halide_adams2019")]
            autos = [a for a in autos if a is not None]
            vs_manual = f"{hand / manual:.2f}" if hand and manual else "-"
            if hand and manual:
                ratios.append(hand / manual)
                if hand / manual > 1.1:
                    vs_manual += " (target <= 1.1 NOT met)"
                    ok = False
            vs_auto = f"{hand / min(autos):.2f}" if hand and autos else "-"
            cells = [fmt(hand), fmt(manual), fmt(ms(p, size, t, "halide_mullapudi2016")),
                     fmt(ms(p, size, t, "halide_adams2019"))]
            print(f"| {p} | {size} | {t} | " + " | ".join(cells) + f" | {vs_manual} | {vs_auto} |")
        if ratios:
            geo = statistics.geometric_mean(ratios)
            met = geo <= 1.0
            ok &= met
            print(f"| geometric mean, {t} thread(s), {len(ratios)} apps | | | | | | | "
                  f"{geo:.2f}{'' if met else ' (target <= 1.0 NOT met)'} | |")
    print(f"\nAll issue-#26 run-time targets met: {'yes' if ok else 'no'}")


if __name__ == "__main__":
    main()
