#!/usr/bin/env python3
"""The table of bench/search_bench.sh, from its SQLite file and logs.

For each pipeline: the hand schedule's time (the runs' baseline), the reuse model's
schedule time and optimisation time, the best exact schedule found by the genetic search
and by hill climbing, then per strategy the hypervolume of its training front (the area
it dominates below the baseline's time and mean dE 5, in ms x dE) and its best speedup at
mean dE <= 2 against the best exact schedule any strategy found. Times are the training
photos' mean of per-photo medians.
"""
import math
import os
import re
import sqlite3
import sys

ERROR_REF = 5.0


def hypervolume(points, ref_t, ref_e):
    front = []
    best = math.inf
    for t, e in sorted(points):
        if t < ref_t and e < ref_e and e < best:
            front.append((t, e))
            best = e
    area = 0.0
    for i, (t, e) in enumerate(front):
        nxt = front[i + 1][0] if i + 1 < len(front) else ref_t
        area += (nxt - t) * (ref_e - e)
    return area


def main():
    db, out = sys.argv[1], sys.argv[2]
    con = sqlite3.connect(db)
    runs = con.execute(
        "SELECT r.id, p.name, r.strategy, r.baseline_evaluation_id FROM runs r "
        "JOIN pipelines p ON p.id = r.pipeline_id ORDER BY r.id").fetchall()
    by_pipeline = {}
    for run_id, pipeline, strategy, baseline in runs:
        rows = con.execute(
            "SELECT e.time_ms, e.error, l.strategy FROM run_evaluations l "
            "JOIN evaluations e ON e.id = l.evaluation_id "
            "WHERE l.run_id = ? AND e.split = 'train' AND e.status = 'ok'", (run_id,)).fetchall()
        base = con.execute("SELECT time_ms FROM evaluations WHERE id = ?", (baseline,)).fetchone()
        by_pipeline.setdefault(pipeline, {})[strategy] = {
            "rows": rows, "baseline": base[0] if base else math.nan}
    strategies = ["reuse", "genetic", "hill", "portfolio"]
    print("| pipeline | hand ms | reuse ms | reuse opt ms | best exact genetic ms | "
          "best exact hill ms | " +
          " | ".join(f"HV {s}" for s in strategies[1:]) + " | " +
          " | ".join(f"speedup dE<=2 {s}" for s in strategies[1:]) + " |")
    print("|---" * (6 + 2 * (len(strategies) - 1)) + "|")
    for pipeline, runs in by_pipeline.items():
        base = next(iter(runs.values()))["baseline"]
        reuse = [t for t, e, s in runs.get("reuse", {"rows": []})["rows"] if s == "reuse"]
        opt_ms = math.nan
        log = os.path.join(out, f"{pipeline}.reuse.log")
        if os.path.exists(log):
            m = re.search(r"reuse model scheduled \S+ in ([0-9.]+) ms", open(log).read())
            if m:
                opt_ms = float(m.group(1))

        def best_exact(s):
            rows = runs.get(s, {"rows": []})["rows"]
            return min((t for t, e, _ in rows if e == 0), default=math.nan)

        all_exact = [t for r in runs.values() for t, e, _ in r["rows"] if e == 0]
        best = min(all_exact) if all_exact else math.nan
        hv, sp = [], []
        for s in strategies[1:]:
            rows = runs.get(s, {"rows": []})["rows"]
            hv.append(hypervolume([(t, e) for t, e, _ in rows], base, ERROR_REF))
            fast = min((t for t, e, _ in rows if e <= 2), default=math.nan)
            sp.append(best / fast if fast == fast else math.nan)
        print(f"| {pipeline} | {base:.2f} | {min(reuse) if reuse else math.nan:.2f} | "
              f"{opt_ms:.1f} | {best_exact('genetic'):.2f} | {best_exact('hill'):.2f} | " +
              " | ".join(f"{h:.2f}" for h in hv) + " | " +
              " | ".join(f"{x:.2f}x" for x in sp) + " |")


if __name__ == "__main__":
    main()
