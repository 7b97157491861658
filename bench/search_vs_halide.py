#!/usr/bin/env python3
"""Issue #5's comparison with Halide's autoschedulers, in two steps (bench/search_vs_halide.sh).

  search_vs_halide.py schedules SEARCH_DB DIR
      writes DIR/NAME.VARIANT.sched for every pipeline of bench/search_bench.sh's SQLite
      file: hand (the runs' baseline), reuse (the reuse model's schedule) and the best
      exact schedule (mean dE 0 on the training photos) of the genetic search, hill
      climbing and the portfolio.
  search_vs_halide.py table JSON...
      reads Google Benchmark JSON of stipple_pipelines_bench (STIPPLE_BENCH_SCHEDULES=DIR)
      and halide_bench and prints one Markdown table per thread count: median ms at
      1920x1080 and the reuse schedule's ratio to each Halide autoscheduler.
"""
import json
import os
import sqlite3
import sys


def write_schedules(db, out):
    os.makedirs(out, exist_ok=True)
    con = sqlite3.connect(db)
    runs = con.execute(
        "SELECT r.id, p.name, r.strategy, r.baseline_evaluation_id FROM runs r "
        "JOIN pipelines p ON p.id = r.pipeline_id ORDER BY r.id").fetchall()
    for run_id, pipeline, strategy, baseline in runs:
        def put(variant, schedule, why):
            path = os.path.join(out, f"{pipeline}.{variant}.sched")
            with open(path, "w") as f:
                f.write(f"# {pipeline} {variant}: run {run_id}, {why}\n{schedule}\n")
        if baseline is not None:
            (text,) = con.execute("SELECT schedule FROM evaluations WHERE id = ?",
                                  (baseline,)).fetchone()
            put("hand", text, "the baseline")
        if strategy == "reuse":
            row = con.execute(
                "SELECT e.schedule FROM run_evaluations l JOIN evaluations e "
                "ON e.id = l.evaluation_id WHERE l.run_id = ? AND l.strategy = 'reuse' "
                "AND e.split = 'train'", (run_id,)).fetchone()
            if row:
                put("reuse", row[0], "the reuse model's schedule")
        else:
            row = con.execute(
                "SELECT e.schedule, e.time_ms FROM run_evaluations l JOIN evaluations e "
                "ON e.id = l.evaluation_id WHERE l.run_id = ? AND e.split = 'train' "
                "AND e.status = 'ok' AND e.error = 0 ORDER BY e.time_ms LIMIT 1",
                (run_id,)).fetchone()
            if row:
                put(strategy, row[0], f"best exact, {row[1]:.3f} ms on the training photos")


def table(paths):
    ms = {}  # (pipeline, threads, variant) -> median ms
    for path in paths:
        for b in json.load(open(path))["benchmarks"]:
            parts = b["name"].split("/")
            if len(parts) < 4 or not parts[2].startswith("t"):
                continue
            pipeline, size, threads, variant = parts[0], parts[1], parts[2], parts[3]
            if size != "1920x1080":
                continue
            key = (pipeline, threads, variant)
            ms[key] = min(ms.get(key, float("inf")), b.get("median_ms", b["real_time"]))
    columns = ["stipple_hand", "stipple_reuse", "stipple_genetic", "stipple_hill",
               "stipple_portfolio", "halide_mullapudi2016", "halide_adams2019",
               "halide_manual"]
    pipelines = ["two_pass_blur", "unsharp_mask", "bilateral_grid", "harris", "camera_pipe",
                 "interpolate", "local_laplacian"]
    for threads in sorted({k[1] for k in ms}):
        print(f"\n{threads[1:]} thread(s), 1920x1080, median ms\n")
        print("| pipeline | " + " | ".join(c.replace("stipple_", "").replace("halide_", "Halide ")
                                            for c in columns) +
              " | reuse / Mullapudi2016 | reuse / Adams2019 |")
        print("|---" * (len(columns) + 3) + "|")
        for p in pipelines:
            row = [ms.get((p, threads, c)) for c in columns]
            if all(v is None for v in row):
                continue
            cells = [f"{v:.2f}" if v is not None else "-" for v in row]
            reuse = ms.get((p, threads, "stipple_reuse"))
            ratios = []
            for h in ("halide_mullapudi2016", "halide_adams2019"):
                v = ms.get((p, threads, h))
                ratios.append(f"{reuse / v:.2f}" if reuse and v else "-")
            print(f"| {p} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "schedules":
        write_schedules(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 3 and sys.argv[1] == "table":
        table(sys.argv[2:])
    else:
        sys.exit(__doc__)
