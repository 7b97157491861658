"""The Python module `stipple` (client/python/) on numpy arrays, against the command line.

Run by ctest (tests/python/CMakeLists.txt) with PYTHONPATH naming the built module and
STIPPLE_BINARY the `stipple` binary: photos go through `stipple run` as PNG files and
through the module as arrays, and the outputs must be equal value for value (the module's
float output quantised as the command line quantises it for a 16-bit PNG).
"""
import json
import os
import signal
import struct
import subprocess
import threading
import time
import zlib
from pathlib import Path

import numpy as np
import pytest

import stipple

SOURCE = os.environ.get("STIPPLE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
BINARY = os.environ.get("STIPPLE_BINARY", os.path.join(SOURCE, "build", "stipple"))
PIPELINES = os.path.join(SOURCE, "datasets", "pipelines")


# PNG files, written and read here with zlib alone (no imaging library is a dependency).
def write_png(path, image):
    """An H x W x 3 uint8 array as an 8-bit RGB PNG."""
    h, w, _ = image.shape
    raw = b"".join(b"\x00" + image[y].tobytes() for y in range(h))

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(raw)))
        f.write(chunk(b"IEND", b""))


def read_png(path):
    """An 8- or 16-bit gray, RGB or RGBA PNG (not interlaced, not paletted) as H x W x C."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            w, h, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    assert interlace == 0 and color in (0, 2, 6), (color, interlace)
    channels = {0: 1, 2: 3, 6: 4}[color]
    bpp = channels * depth // 8
    stride = w * bpp
    raw = zlib.decompress(idat)
    rows, prev = [], bytearray(stride)
    for y in range(h):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    dtype = np.dtype(">u2") if depth == 16 else np.uint8
    return np.frombuffer(b"".join(rows), dtype=dtype).reshape(h, w, channels).astype(np.int64)


def cli(*args):
    result = subprocess.run([BINARY, *args], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result


def quantised(out):
    """A float output as `stipple run` writes it: round(clamp(v, 0, 1) * 65535), NaN 0."""
    v = np.nan_to_num(out.astype(np.float64), nan=0.0)
    return np.floor(np.clip(v, 0.0, 1.0) * 65535.0 + 0.5).astype(np.int64)


def photo(h=45, w=61, seed=3):
    rng = np.random.default_rng(seed)
    # Smooth content with noise, so that blurs and sharpening have something to do.
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([(x * 4) % 256, (y * 5) % 256, ((x + y) * 3) % 256], axis=-1)
    return np.clip(base + rng.integers(-40, 40, size=(h, w, 3)), 0, 255).astype(np.uint8)


def cli_output(tmp_path, name, image):
    png = str(tmp_path / "in.png")
    write_png(png, image)
    out = str(tmp_path / (name + "_cli.png"))
    cli("run", os.path.join(PIPELINES, name + ".stp"), "--schedule",
        os.path.join(PIPELINES, name + ".sched"), "--input", "in=" + png, "--output", out)
    return read_png(out)


@pytest.mark.parametrize("name", ["two_pass_blur", "unsharp"])
def test_interleaved_float32_and_uint8_images_give_the_cli_output(tmp_path, name):
    image = photo()
    expected = cli_output(tmp_path, name, image)
    f = stipple.Pipeline(os.path.join(PIPELINES, name + ".stp")).compile(
        schedule_file=os.path.join(PIPELINES, name + ".sched"))
    # float32 H x W x C, as the command line converts the photo: v / 255.
    as_float = (image.astype(np.float64) / 255.0).astype(np.float32)
    out = f(as_float)
    assert out.shape == image.shape and out.dtype == np.float32
    assert np.array_equal(quantised(out), expected)
    # uint8 H x W x C straight from a decoder: scaled to [0, 1] as the command line scales it.
    assert np.array_equal(quantised(f(image)), expected)


def test_a_uint8_program_reads_and_writes_the_array_in_place():
    p = stipple.Pipeline.from_source(
        "pipeline brighten\ninput in : u8[x, y, c]\nparam add : u8 = 10\n"
        "func out(x, y, c) = in(x, y, c) + add\noutput out\n", "brighten.stp")
    image = photo()
    f = p.compile(schedule="out.vectorize(x, 16)")
    out = np.zeros_like(image)
    assert f(image, out=out, add=3) is out
    assert np.array_equal(out, (image.astype(np.int64) + 3).astype(np.uint8))


def test_views_are_read_in_place_or_refused_clearly():
    f = stipple.Pipeline(os.path.join(PIPELINES, "two_pass_blur.stp")).compile(
        schedule_file=os.path.join(PIPELINES, "two_pass_blur.sched"))
    image = (photo(60, 80).astype(np.float64) / 255.0).astype(np.float32)
    for view in (image[7:50, 5:70], image[::-1], image[::2], image[:, ::2], image.transpose(1, 0, 2)):
        assert not view.flags.c_contiguous
        assert np.array_equal(f(view), f(np.ascontiguousarray(view)))
    # Channels first (C x H x W, planar).
    chw = np.ascontiguousarray(image.transpose(2, 0, 1))
    assert np.array_equal(f(chw, layout="chw"), f(image).transpose(2, 0, 1))
    with pytest.raises(stipple.BadInput, match="stride -3 in dimension 0"):
        f(image[:, ::-1])
    with pytest.raises(stipple.BadInput, match="element type f64 but the pipeline declares f32"):
        f(image.astype(np.float64))
    with pytest.raises(stipple.BadInput, match="has 3 axes|dimensions"):
        f(image[:, :, 0])
    with pytest.raises(stipple.BadInput, match="no param named 'sigmaa'"):
        f(image, sigmaa=2.0)
    with pytest.raises(ValueError):  # BadInput is a ValueError too
        f(image, out=np.zeros((3, 3, 3), np.float32))
    with pytest.raises(stipple.BadInput, match="big-endian"):
        f(image.astype(">f4"))


def test_a_bad_pipeline_or_schedule_raises_with_its_location(tmp_path):
    with pytest.raises(stipple.BadInput, match=r"bad\.stp:2:\d+: error"):
        stipple.Pipeline.from_source("pipeline bad\nfunc out(x, y) = in(x) + * 2\n", "bad.stp")
    sched = tmp_path / "mine.sched"
    sched.write_text("out.vectorize(q, 8)\n")
    p = stipple.Pipeline(os.path.join(PIPELINES, "two_pass_blur.stp"))
    with pytest.raises(stipple.BadInput, match=r"mine\.sched:1:\d+"):
        p.compile(schedule_file=str(sched))
    with pytest.raises(stipple.BadInput, match="nothere.stp"):
        stipple.Pipeline("/nonexistent/nothere.stp")
    with pytest.raises(stipple.BadInput, match="db= and run="):
        p.compile(db="x.db")


def test_a_tuned_variant_from_the_database(tmp_path):
    image = photo(48, 64)
    png = str(tmp_path / "in.png")
    write_png(png, image)
    db = str(tmp_path / "t.db")
    stp = os.path.join(PIPELINES, "two_pass_blur.stp")
    cli("tune", stp, "--exact", "--budget", "4", "--images", png, "--db", db)
    cli("export", "1", "--variant", "0", "--format", "schedule", "--db", db, "-o", str(tmp_path / "v.sched"))
    out = str(tmp_path / "cli.png")
    cli("run", stp, "--schedule", str(tmp_path / "v.sched"), "--input", "in=" + png, "--output", out)
    f = stipple.Pipeline(stp).compile(db=db, run=1, variant=0)
    assert np.array_equal(quantised(f(image)), read_png(out))
    with pytest.raises(stipple.BadInput, match="run 1 has variants 0.."):
        stipple.Pipeline(stp).compile(db=db, run=1, variant=99)


def small_tune(p, tmp_path, budget, **options):
    """A quick local run on two 64 x 48 fixtures (paths given as pathlib.Path)."""
    fixtures = os.path.join(SOURCE, "datasets", "fixtures")
    options.setdefault("db", str(tmp_path / "t.db"))
    return p.tune(images=Path(fixtures) / "natural-high-64x48.png",
                  test_images=[Path(fixtures) / "man-made-low-64x48.png"], budget=budget, runs=2,
                  benchmark_lock="none", **options)


def test_tune_runs_locally_and_its_variants_compile(tmp_path):
    stp = os.path.join(PIPELINES, "two_pass_blur.stp")
    p = stipple.Pipeline(stp)
    seen = []
    r = small_tune(p, tmp_path, 8, exact=True, progress=seen.append)
    assert (r.db, r.run, r.stopped) == (str(tmp_path / "t.db"), 1, False)
    assert [s.phase for s in seen][0] == "baseline" and seen[-1].phase == "done"
    assert seen[-1].evaluations == 8 and seen[-1].baseline_ms > 0
    # The front as `stipple front` shows it, and each variant compiles to its schedule.
    shown = json.loads(cli("front", "1", "--format", "json", "--db", r.db).stdout)
    assert [v["schedule"] for v in shown["variants"]] == [f.schedule for f in r.front]
    assert [v["train"]["time_ms"] for v in shown["variants"]] == [f.train_ms for f in r.front]
    assert sum(f.baseline for f in r.front) == 1
    for f in r.front:
        assert p.compile(db=r.db, run=r.run, variant=f.variant).schedule == f.schedule
    with pytest.raises(stipple.BadInput, match="strategy 'annealing' is not one of"):
        small_tune(p, tmp_path, 8, strategy="annealing")


def test_tune_options_are_checked_by_their_python_names(tmp_path):
    p = stipple.Pipeline(Path(PIPELINES) / "two_pass_blur.stp")  # paths as os.PathLike too
    for options, message in [
            ({"images": 3}, "images= takes paths"),
            ({"imgs": "x.png"}, "tune\\(\\) has no option 'imgs' \\(its options: db, images,"),
            ({"budget": 5.5}, "budget= takes an integer, not <class 'float'>"),
            ({"budget": True}, "budget= takes an integer"),
            ({"budget": 5, "time": 5}, "give budget= or time=, not both"),
            ({"thresholds": [1, -1]}, "thresholds= must be a number in"),
            ({"deadline": 0.5}, "deadline= must be a number in 1..8.64e\\+04"),
            ({"exact": 1}, "exact= takes True or False"),
            ({"progress": 5}, "progress= takes a function"),
            ({"db": 5}, "db= takes a path")]:
        with pytest.raises(stipple.BadInput, match=message):
            p.tune(**options)
    with pytest.raises(stipple.BadInput, match="takes its options by name"):
        p.tune("x.db")
    assert not (tmp_path / "t.db").exists()


def test_tune_resumes_a_stopped_run_and_a_bad_progress_answer_raises_at_once(tmp_path):
    p = stipple.Pipeline(os.path.join(PIPELINES, "two_pass_blur.stp"))
    r = small_tune(p, tmp_path, 12, thresholds=2.0, progress=lambda s: s.evaluations < 4)
    assert r.stopped
    done = p.tune(db=tmp_path / "t.db", resume=r.run, benchmark_lock="none")
    assert not done.stopped and done.run == r.run
    assert all(not np.isnan(f.test_ms) for f in done.front)
    runs = cli("runs", "--db", str(tmp_path / "t.db")).stdout
    assert "done" in runs and "12/12" in runs, runs
    # An answer whose truth Python cannot tell (an array) is the callback's error, raised
    # from tune() at that report.
    seen = []

    def ambiguous(s):
        seen.append(s.phase)
        return np.array([1, 2])

    with pytest.raises(ValueError, match="truth value of an array"):
        small_tune(p, tmp_path, 40, db=str(tmp_path / "x.db"), progress=ambiguous)
    assert seen == ["baseline"]


def test_tune_stops_when_progress_says_so_or_raises(tmp_path):
    p = stipple.Pipeline(os.path.join(PIPELINES, "two_pass_blur.stp"))
    r = small_tune(p, tmp_path, 400, progress=lambda s: s.phase != "search")
    assert r.stopped and r.front and all(np.isnan(f.test_ms) for f in r.front)

    def fails(s):
        if s.phase == "search":
            raise RuntimeError("enough")

    with pytest.raises(RuntimeError, match="enough"):
        small_tune(p, tmp_path, 400, progress=fails)


def test_ctrl_c_stops_a_tune_with_keyboard_interrupt(tmp_path):
    """SIGINT while the run measures (the GIL released, no callback): the run stops after
    its batch and tune() raises KeyboardInterrupt, as any Python call would."""
    p = stipple.Pipeline(os.path.join(PIPELINES, "two_pass_blur.stp"))
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    start = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        small_tune(p, tmp_path, None, time=40)
    timer.join()
    # Stopped after a batch, not raised when the 40 s of search had run out.
    assert time.perf_counter() - start < 20


def test_the_gil_is_released_while_a_pipeline_runs():
    """Two threads run two pipelines; their calls, timed from Python, are in flight at the
    same time. Were the GIL held during a call, the other thread could not even start its
    own until the first returned, so the calls could not overlap, however many cores the
    machine has free (on one core they overlap by time sharing)."""
    blur = stipple.Pipeline(os.path.join(PIPELINES, "two_pass_blur.stp")).compile(
        schedule="out.vectorize(x, 8)")
    sharpen = stipple.Pipeline(os.path.join(PIPELINES, "unsharp.stp")).compile(
        schedule="out.vectorize(x, 8)")
    image = (photo(480, 640).astype(np.float64) / 255.0).astype(np.float32)
    blur(image), sharpen(image)  # warm
    start = time.perf_counter()
    sharpen(image)
    repeat = max(1, round(0.1 / (time.perf_counter() - start)))  # about 0.1 s of work
    spans = {}

    def run(name, f, times):
        begin = time.perf_counter()
        for _ in range(times):
            f(image)
        spans[name] = (begin, time.perf_counter())

    threads = [threading.Thread(target=run, args=("blur", blur, 1)),
               threading.Thread(target=run, args=("sharpen", sharpen, repeat))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    (b0, b1), (s0, s1) = spans["blur"], spans["sharpen"]
    overlap = min(b1, s1) - max(b0, s0)
    shorter = min(b1 - b0, s1 - s0)
    assert overlap > 0.5 * shorter, spans
