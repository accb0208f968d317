"""Monsieur Carrousel reader on the path-traced photographs: wrong and right readings, time.

Reads every photograph of shared/data/monsieur-table (or --data) with
:class:`companion.vision.monsieur.MonsieurReader` and counts, against truth.json:

* pointed seat: wrong (a seat other than the truth's), right among the images where the roof
  marker is visible and the finger is outside the configured margin, ambiguous, unknown;
* seats: wrong (kid/empty other than the truth), right among the seats not covered by a hand;
* die: wrong, right among the images where its top is visible;
* time per frame at 640 x 480, one thread (numpy's BLAS too), in ``--repeat`` rounds: each
  round times the reference op (one cv2.cvtColor BGR->Lab of a 640 x 480 frame, bench._common)
  first, then reads every photograph once with full detection (registration every frame) and
  once as the next frame of a still table (``stream=True``: each photograph's own reader, made
  to read it once before the rounds: the fixed markers' cells checked, the roof marker found
  near its last place, the seats' plan and the die's reading kept). The photographs follow
  each other, so nothing of one read is left for the next read of the same photograph. The
  figures are the reading thread's own CPU time (``time.thread_time``: others' work on the
  shared cores excluded) and the wall time, medians over all reads, each as a ratio to the
  reference op timed the same way, with each round's ratio and the machine's load average.
* with ``--rendered-stream N``, also the time per frame of a still table's stream whose frames
  differ as a camera's do: N rendered tables (``companion.vision.sim_monsieur``, the kinds in
  turn), each read as one stream of ``--stream-frames`` frames of the same table that differ
  only by the sensor's noise and JPEG (a photograph read again is the same frame to the bit,
  which no camera gives): the frames after each stream's first are timed, and the share of them
  whose roof reading (and so the seats' plan) was kept from the frame before is counted (the
  reader keeps it only for roof corners the same to the bit).

The reader's bounds come from the table's geometry and print colours; two photographs
(monsieur_030 and monsieur_045) were looked at to set the print chroma the camera keeps
(``print_share``) and the glyph's lightness (``dark_lightness``); see docs/vision.md.

Run: ``.venv/bin/python bench/monsieur_photos.py [--repeat 5] [--rendered-stream 30]``.
Figures: docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

# one thread: numpy's BLAS too (the service sets this in companion/__init__.py; here numpy is
# imported first): a BLAS worker thread's time would not be counted by time.thread_time
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import cv2  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._common import machine, percentile, reference_op_s  # noqa: E402
from companion.vision.monsieur import KID, MonsieurReader  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "monsieur-table"


def _reference_cpu_s(repeat: int = 100) -> float:
    """The reference op in CPU seconds of this thread (median; bench._common.reference_op_s by
    ``time.thread_time``), to compare with the reads' CPU time when the cores are shared."""
    return reference_op_s(repeat, clock=time.thread_time)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its figures; returns 0."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--repeat", type=int, default=5,
                    help="timing rounds, each with the reference op timed first, then every photograph read once each way")
    ap.add_argument("--rendered-stream", type=int, default=0, metavar="N",
                    help="also time N rendered still tables, each read as a stream of frames that differ by sensor noise")
    ap.add_argument("--stream-frames", type=int, default=6,
                    help="frames in each rendered table's stream (the first not timed)")
    ap.add_argument("--parts", action="store_true",
                    help="also the CPU time of each part of a full read (marker detection, seats' angle and plan, die, ...)")
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    if args.parts:
        _parts(args.data)
    truth = json.loads((args.data / "truth.json").read_text())["images"]
    reader = MonsieurReader()
    p = {"wrong": 0, "right": 0, "eligible": 0, "ambiguous": 0, "unknown": 0}
    s = {"wrong": 0, "right": 0, "eligible": 0, "kid_right": 0, "kids": 0, "seen": 0, "seen_right": 0}
    die = {"wrong": 0, "right": 0, "eligible": 0}
    frames = [cv2.imread(str(args.data / "images" / t["image"])) for t in truth]
    load = [os.getloadavg()[0]]
    timing = _timing(frames, args.repeat)
    noisy = _rendered_stream(args.rendered_stream, args.stream_frames) if args.rendered_stream else None
    load.append(os.getloadavg()[0])
    for t, frame in zip(truth, frames):
        r = reader.read(frame)
        ps = r.pointed_seat
        if isinstance(ps, int) and ps != t["pointed_seat"]:
            p["wrong"] += 1
        p["ambiguous"] += ps == "ambiguous"
        p["unknown"] += ps == "unknown"
        if 9 in t["markers"]["visible"] and t["pointed_seat_boundary_distance_deg"] > reader.seat_margin_deg:
            p["eligible"] += 1
            p["right"] += ps == t["pointed_seat"]
        for k, state in enumerate(r.seats):
            occ = t["seats"][k]["occupied"]
            if state != "unknown" and (state == KID) != occ:
                s["wrong"] += 1
            if k not in t["hands_over_seats"]:
                s["eligible"] += 1
                s["right"] += state != "unknown" and (state == KID) == occ
                s["kids"] += occ
                s["kid_right"] += occ and state == KID
                # the seat itself at least half visible (truth: not hidden by the roof, pole,
                # figure, other tokens or the die from this camera; its own token aside)
                if t["seats"][k]["visibility"]["visible_fraction"] >= 0.5:
                    s["seen"] += 1
                    s["seen_right"] += state != "unknown" and (state == KID) == occ
        if r.die != "unknown" and r.die != t["die"]["top_colour"]:
            die["wrong"] += 1
        if t["die"]["top_face_visibility"]["visible_fraction"] > 0.9:
            die["eligible"] += 1
            die["right"] += r.die == t["die"]["top_colour"]
    print(f"machine: {machine()}")
    print(f"images: {len(truth)} ({args.data})")
    print(f"pointed seat: wrong {p['wrong']}, right {p['right']}/{p['eligible']} "
          f"({100 * p['right'] / max(p['eligible'], 1):.0f}%) of roof visible and outside the "
          f"{reader.seat_margin_deg:g} deg margin; ambiguous {p['ambiguous']}, unknown {p['unknown']}")
    print(f"seats: wrong {s['wrong']}, right {s['right']}/{s['eligible']} "
          f"({100 * s['right'] / max(s['eligible'], 1):.0f}%) not under a hand; kids read {s['kid_right']}/{s['kids']}; "
          f"of those at least half visible (not behind the roof, figure or tokens): {s['seen_right']}/{s['seen']} "
          f"({100 * s['seen_right'] / max(s['seen'], 1):.0f}%)")
    print(f"die: wrong {die['wrong']}, right {die['right']}/{die['eligible']} (top visible)")
    print(f"load average (1 min) at start and end of the timing: {load[0]:.1f}, {load[1]:.1f} on {os.cpu_count()} cores")
    for i, (ref_c, full_c, stream_c) in enumerate(timing["rounds"]):
        print(f"  round {i + 1}: reference op {ref_c * 1e3:.2f} ms CPU; full {full_c * 1e3:.1f} ms ({full_c / ref_c:.1f}x), "
              f"stream {stream_c * 1e3:.2f} ms ({stream_c / ref_c:.1f}x) CPU, medians over the photographs")
    ref_c, ref_w = timing["ref_cpu"], timing["ref_wall"]
    for name, key in (("full detection (registration every frame)", "full"), ("registration kept (stream)", "stream")):
        c, w = timing[key + "_cpu"], timing[key + "_wall"]
        print(f"time per frame, {name}, one thread: CPU median {statistics.median(c) * 1e3:.2f} ms "
              f"(p95 {percentile(c, 95) * 1e3:.1f}), {statistics.median(c) / ref_c:.2f}x the reference op's "
              f"{ref_c * 1e3:.2f} ms CPU; wall median {statistics.median(w) * 1e3:.1f} ms, {statistics.median(w) / ref_w:.1f}x its "
              f"{ref_w * 1e3:.2f} ms wall")
    if noisy is not None:
        c = noisy["cpu"]
        print(f"time per frame, rendered still tables read as streams (sensor noise and JPEG differ frame to frame), "
              f"{noisy['tables']} tables x {noisy['frames'] - 1} timed frames, one thread: CPU median "
              f"{statistics.median(c) * 1e3:.2f} ms (p95 {percentile(c, 95) * 1e3:.1f}), "
              f"{statistics.median(c) / noisy['ref_cpu']:.2f}x the reference op's {noisy['ref_cpu'] * 1e3:.2f} ms CPU "
              f"(timed before and after); roof reading kept from the frame before on {noisy['kept']} of {len(c)} frames; "
              f"readings 'ok' with an angle on {noisy['angle']} of {len(c)}")
    return 0


def _rendered_stream(tables: int, frames: int, seed: int = 7) -> dict:
    """Time a still table's stream as a camera gives it (see the module notes): ``tables``
    rendered tables (seed ``seed``, the condition kinds in turn), each read by a new reader as
    one stream of ``frames`` frames of the same table and camera that differ only by the
    sensor's noise and JPEG; the frames after the first are timed (thread CPU). Returns
    ``cpu`` (seconds per timed frame), ``kept`` (timed frames whose camera model is the frame
    before's: the roof reading kept), ``angle`` (timed frames read with an angle), ``tables``,
    ``frames`` and ``ref_cpu`` (the reference op's CPU seconds, the mean of its medians before
    and after)."""
    import numpy as np

    from companion.vision.sim_monsieur import (
        CONDITION_KINDS,
        MonsieurRenderer,
        random_monsieur_conditions,
        random_scene,
    )

    rng = np.random.default_rng(seed)
    renderer = MonsieurRenderer()
    kinds = list(CONDITION_KINDS)
    ref = [reference_op_s(100, clock=time.thread_time)]
    cpu: list[float] = []
    kept = angle = 0
    for i in range(max(tables, 0)):
        scene = random_scene(rng, renderer.geometry)
        cond = random_monsieur_conditions(rng, kinds[i % len(kinds)])
        seq = [renderer.render(scene, cond, rng)[0] for _ in range(max(frames, 2))]
        reader = MonsieurReader()
        before = reader.read(seq[0], stream=True)
        for f in seq[1:]:
            c0 = time.thread_time()
            got = reader.read(f, stream=True)
            cpu.append(time.thread_time() - c0)
            kept += got.camera is not None and got.camera is before.camera
            angle += got.status == "ok" and got.carousel_angle_deg is not None
            before = got
    ref.append(reference_op_s(100, clock=time.thread_time))
    return {"cpu": cpu, "kept": kept, "angle": angle, "tables": tables, "frames": max(frames, 2),
            "ref_cpu": sum(ref) / len(ref)}


def _timing(frames: list, rounds: int) -> dict:
    """Time the reads in ``rounds`` rounds (see the module notes): per round the reference op
    (thread CPU and wall, medians of 100), then every frame read once with full detection, then
    once more by its own stream reader. Returns the reads' CPU and wall seconds (``full_cpu``,
    ``full_wall``, ``stream_cpu``, ``stream_wall``: lists over all rounds), the reference op's
    medians over the rounds (``ref_cpu``, ``ref_wall``) and per round (reference op, full and
    stream CPU medians) as ``rounds``."""
    reader = MonsieurReader()
    streamers = []
    for f in frames:
        reader.read(f)  # (the first reads: imports, caches)
        st = MonsieurReader()
        st.read(f, stream=True)
        streamers.append(st)
    out: dict = {"full_cpu": [], "full_wall": [], "stream_cpu": [], "stream_wall": [], "rounds": []}
    ref_cpu, ref_wall = [], []
    for _ in range(max(rounds, 1)):
        ref_cpu.append(reference_op_s(100, clock=time.thread_time))
        ref_wall.append(reference_op_s(100))
        got: dict[str, list[float]] = {"full": [], "stream": []}
        for key, readers, stream in (("full", [reader] * len(frames), False), ("stream", streamers, True)):
            for r, f in zip(readers, frames):
                t0, c0 = time.perf_counter(), time.thread_time()
                r.read(f, stream=stream)
                c1, t1 = time.thread_time(), time.perf_counter()
                got[key].append(c1 - c0)
                out[key + "_cpu"].append(c1 - c0)
                out[key + "_wall"].append(t1 - t0)
        out["rounds"].append((ref_cpu[-1], statistics.median(got["full"]), statistics.median(got["stream"])))
    out["ref_cpu"], out["ref_wall"] = statistics.median(ref_cpu), statistics.median(ref_wall)
    return out


def _parts(data: Path, rounds: int = 3) -> None:
    """Print the thread CPU time per frame of each part of a full read (``time.thread_time``
    around the reader's own functions, medians of ``rounds`` interleaved rounds over the
    photographs)."""
    import companion.vision.monsieur as m
    import companion.vision.monsieur_die as md

    acc: dict[str, list[float]] = {}

    def timed(obj: object, name: str, key: str) -> None:
        f = getattr(obj, name)

        def g(*a: object, **k: object) -> object:
            t0 = time.thread_time()
            try:
                return f(*a, **k)
            finally:
                acc.setdefault(key, []).append(time.thread_time() - t0)
        setattr(obj, name, g)

    saved = [(m, "detect_markers"), (m.Registrar, "register"), (m, "read_roof"), (m.MonsieurReader, "_white"),
             (m.MonsieurReader, "_refine_angle"), (m, "_SeatPlan"), (m.MonsieurReader, "_seats"), (md.DieReader, "read")]
    originals = [getattr(o, n) for o, n in saved]
    for (o, n), key in zip(saved, ("marker detection", "homography fit", "roof marker", "paper white",
                                   "seats' angle fit", "seats' plan", "seats' reading", "die")):
        timed(o, n, key)
    try:
        truth = json.loads((data / "truth.json").read_text())["images"]
        frames = [cv2.imread(str(data / "images" / t["image"])) for t in truth]
        reader = m.MonsieurReader()
        whole: list[float] = []
        per_round: dict[str, list[float]] = {}
        for _ in range(rounds):
            acc.clear()
            for f in frames:
                c0 = time.thread_time()
                reader.read(f)
                whole.append(time.thread_time() - c0)
            for key, v in acc.items():
                per_round.setdefault(key, []).append(sum(v) / len(frames))
        ref = _reference_cpu_s()
        print(f"CPU per frame, whole read: median {statistics.median(whole) * 1e3:.1f} ms "
              f"({statistics.median(whole) / ref:.1f}x the reference op, {ref * 1e3:.2f} ms CPU)")
        for key, v in per_round.items():
            print(f"  {key}: {statistics.median(v) * 1e3:.2f} ms per frame (mean over the photographs)")
    finally:
        for (o, n), f in zip(saved, originals):
            setattr(o, n, f)


if __name__ == "__main__":
    raise SystemExit(main())
