#!/usr/bin/env python3
"""Keeps compiler_core/schedule/SCHEDULES.md true: every ```sched block in it is checked
with `stipple check` against the pipeline its first line names ("# for blur3x3.stp",
optionally "--target cuda-sm_90"); a block marked ": an error" must fail with exactly the
message in the ```text block after it; every row of the tables under "## Error messages"
(pipeline | `schedule` | `message`) must fail, exit 2, with that first line.

usage: check_schedules_doc.py STIPPLE_BINARY SOURCE_DIR
"""
import os
import re
import subprocess
import sys
import tempfile


def main():
    stipple, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    doc = os.path.join(source, "compiler_core/schedule/SCHEDULES.md")
    pipelines = os.path.join(source, "datasets/pipelines")
    lines = open(doc).read().split("\n")
    work = tempfile.mkdtemp(prefix="stipple-schedules-doc-")

    blocks = []  # (language, body lines, line number)
    i = 0
    while i < len(lines):
        m = re.match(r"^```(\w*)$", lines[i])
        if m:
            j = i + 1
            while lines[j] != "```":
                j += 1
            blocks.append((m.group(1), lines[i + 1:j], i + 1))
            i = j + 1
        else:
            i += 1
    # A pipeline given inline in the document (```stp), for examples no shipped one has.
    inline = {}
    for language, body, _ in blocks:
        if language == "stp":
            name = re.match(r"^pipeline (\w+)", body[0]).group(1)
            path = os.path.join(work, name + ".stp")
            open(path, "w").write("\n".join(body) + "\n")
            inline[name] = path

    def check(name, text, target):
        folder = tempfile.mkdtemp(dir=work)
        open(os.path.join(folder, "bad.sched"), "w").write(text)
        pipeline = inline.get(name, os.path.join(pipelines, name + ".stp"))
        command = [stipple, "check", pipeline, "--schedule", "bad.sched"]
        if target:
            command += ["--target", target]
        r = subprocess.run(command, cwd=folder, capture_output=True, text=True)
        return r.returncode, r.stderr

    failures, examples = [], 0
    for k, (language, body, line) in enumerate(blocks):
        if language != "sched":
            continue
        m = re.match(r"^# for (\w+)\.stp( \(above\))?( --target (\S+))?(: an error)?", body[0])
        if not m:
            failures.append(f"line {line}: a sched block must start '# for PIPELINE.stp'")
            continue
        name, target, error = m.group(1), m.group(4), bool(m.group(5))
        examples += 1
        rc, stderr = check(name, "\n".join(body) + "\n", target)
        if error:
            expected = "\n".join(blocks[k + 1][1])
            if rc != 2 or stderr.rstrip("\n") != expected:
                failures.append(f"line {line}: expected exit 2 with\n{expected}\ngot {rc}:\n{stderr}")
        elif rc != 0:
            failures.append(f"line {line}: {name} does not accept it (exit {rc}):\n{stderr}")

    in_errors = False
    for line, text in enumerate(lines, 1):
        if text.startswith("## "):
            in_errors = text.startswith("## Error messages")
        if not in_errors or not text.startswith("| ") or text.startswith("| Pipeline"):
            continue
        cells = [c.strip() for c in text.strip().strip("|").split(" | ")]
        if len(cells) != 3:
            continue
        m = re.match(r"^(\w+)( \((\S+)\))?$", cells[0])
        if not m:
            continue
        examples += 1
        rc, stderr = check(m.group(1), cells[1].strip("`") + "\n", m.group(3))
        want = cells[2].strip("`")
        if rc != 2 or stderr.split("\n")[0] != want:
            failures.append(f"line {line}: expected exit 2 with '{want}', got {rc}: '{stderr}'")

    for f in failures:
        print(f)
    print(f"SCHEDULES.md: {examples} examples, {len(failures)} wrong")
    return 1 if failures or examples == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
