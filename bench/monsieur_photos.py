"""Monsieur Carrousel reader on the path-traced photographs: wrong and right readings, time.

Reads every photograph of shared/data/monsieur-table (or --data) with
:class:`companion.vision.monsieur.MonsieurReader` and counts, against truth.json:

* pointed seat: wrong (a seat other than the truth's), right among the images where the roof
  marker is visible and the finger is outside the configured margin, ambiguous, unknown;
* seats: wrong (kid/empty other than the truth), right among the seats not covered by a hand;
* die: wrong, right among the images where its top is visible;
* time per frame (median, p95, one thread) with full detection (registration every frame), and
  with the registration kept (``stream=True``: each photograph read once, then ``--repeat``
  times as the next frames of a still table: the fixed markers' cells checked, the roof marker
  found near its last place, the seats' plan and the die's reading kept), each as a ratio to
  one cv2.cvtColor BGR->Lab of a 640 x 480 frame timed in the same run, and the machine's load
  average (other work on the cores slows every figure; the ratio less so), and the median over
  the images of each image's fastest read (the least disturbed by that other work), and the
  reading thread's own CPU time per read (``time.thread_time``) against the reference op's.

The reader's bounds come from the table's geometry and print colours; two photographs
(monsieur_030 and monsieur_045) were looked at to set the print chroma the camera keeps
(``print_share``) and the glyph's lightness (``dark_lightness``); see docs/vision.md.

Run: ``.venv/bin/python bench/monsieur_photos.py [--repeat 5]``. Figures: docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._common import machine, percentile, reference_op_s
from companion.vision.monsieur import KID, MonsieurReader

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "monsieur-table"


def _reference_cpu_s(repeat: int = 100) -> float:
    """The reference op in CPU seconds of this thread (median; bench._common.reference_op_s by
    ``time.thread_time``), to compare with the reads' CPU time when the cores are shared."""
    return reference_op_s(repeat, clock=time.thread_time)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its figures; returns 0."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--repeat", type=int, default=5, help="reads of each image for the timing")
    ap.add_argument("--parts", action="store_true",
                    help="also the CPU time of each part of a full read (marker detection, seats' plan, die)")
    args = ap.parse_args(argv)
    if args.parts:
        _parts(args.data)
    cv2.setNumThreads(1)
    truth = json.loads((args.data / "truth.json").read_text())["images"]
    reader = MonsieurReader()
    ref = reference_op_s()
    p = {"wrong": 0, "right": 0, "eligible": 0, "ambiguous": 0, "unknown": 0}
    s = {"wrong": 0, "right": 0, "eligible": 0, "kid_right": 0, "kids": 0, "seen": 0, "seen_right": 0}
    die = {"wrong": 0, "right": 0, "eligible": 0}
    times: list[float] = []
    stream_times: list[float] = []
    best: list[float] = []  # per image, the least disturbed of its reads (the cores are shared)
    stream_best: list[float] = []
    cpu: list[float] = []  # the reading thread's own CPU time per read (others' work excluded)
    stream_cpu: list[float] = []
    load = [os.getloadavg()[0]]
    for t in truth:
        frame = cv2.imread(str(args.data / "images" / t["image"]))
        mine = []
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), time.thread_time()
            r = reader.read(frame)
            mine.append(time.perf_counter() - t0)
            cpu.append(time.thread_time() - c0)
        times += mine
        best.append(min(mine))
        streamer = MonsieurReader()
        streamer.read(frame, stream=True)
        mine = []
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), time.thread_time()
            streamer.read(frame, stream=True)
            mine.append(time.perf_counter() - t0)
            stream_cpu.append(time.thread_time() - c0)
        stream_times += mine
        stream_best.append(min(mine))
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
    load.append(os.getloadavg()[0])
    med = statistics.median(times)
    smed = statistics.median(stream_times)
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
    print(f"load average (1 min) at start and end: {load[0]:.1f}, {load[1]:.1f} on {os.cpu_count()} cores")
    print(f"time per frame (full detection, one thread): median {med * 1e3:.1f} ms, "
          f"p95 {percentile(times, 95) * 1e3:.1f} ms; reference op {ref * 1e3:.2f} ms; ratio {med / ref:.1f}x")
    print(f"time per frame (registration kept, stream): median {smed * 1e3:.1f} ms, "
          f"p95 {percentile(stream_times, 95) * 1e3:.1f} ms; ratio {smed / ref:.1f}x")
    b, sb = statistics.median(best), statistics.median(stream_best)
    print(f"least disturbed read of each image, median over images: full {b * 1e3:.1f} ms ({b / ref:.1f}x), "
          f"stream {sb * 1e3:.1f} ms ({sb / ref:.1f}x)")
    ref_cpu = _reference_cpu_s()
    c, sc = statistics.median(cpu), statistics.median(stream_cpu)
    print(f"CPU time of the reading thread (time.thread_time), median: full {c * 1e3:.1f} ms, stream "
          f"{sc * 1e3:.1f} ms; reference op {ref_cpu * 1e3:.2f} ms CPU; ratios {c / ref_cpu:.1f}x, {sc / ref_cpu:.1f}x")
    return 0


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

    saved = [(m, "detect_markers"), (m, "_SeatPlan"), (m.MonsieurReader, "_seats"), (md.DieReader, "read")]
    originals = [getattr(o, n) for o, n in saved]
    for (o, n), key in zip(saved, ("marker detection", "seats' plan", "seats' reading", "die")):
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
