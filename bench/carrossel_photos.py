"""Carrossel reader on the 20 path-traced photographs (shared/data/carrossel-table): right and
wrong readings of the board angle, the facing sectors and the 48 slots (tiles with and without a
standee counted apart), and the time per frame: with the registration (full detection), with it
kept (``registration=``) and as a stream (``stream=True``: the registration kept and its markers'
cells checked, the still table's cells kept; each frame the photo with fresh sensor noise), each as wall time and as the thread's CPU time (``time.thread_time``: what the
reader costs when other jobs share the cores), medians, and as a ratio to one cv2.cvtColor
BGR -> Lab of a 640 x 480 frame timed in the same run. One thread. The load average is printed.

    .venv/bin/python bench/carrossel_photos.py [--data DIR] [--repeat N] [--parts]

``--repeat`` rounds, each timing the reference op first and then every photograph once in each
way (the load may change between rounds: each round's ratio is printed too); ``--parts`` adds the
thread CPU time of each part of a full read (registration, centre marker, colour check, slots
and theirs), medians per frame.
"""

from __future__ import annotations

import argparse
import collections
import functools
import json
import os
import statistics
import sys
import time
from pathlib import Path

# one thread: numpy's BLAS too (the service sets this in companion/__init__.py; here numpy is
# imported first): a BLAS worker thread's time would not be counted by time.thread_time
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._common import machine, reference_op_s  # noqa: E402
from companion.vision import colour, registration
from companion.vision.carrossel import CarrosselReader  # noqa: E402

#: the parts of a read timed with ``--parts`` (thread CPU time of each call, summed per frame)
PARTS = (("registration", registration.Registrar, "register"),
         ("  marker detection", registration.MarkerFinder, "find"),
         ("    windows", registration.MarkerFinder, "_search"),
         ("  homography fit", registration.Registrar, "_register_found"),
         ("centre marker", CarrosselReader, "centre_marker_match"),
         ("colour check", CarrosselReader, "_colour_fault"),
         ("slots", CarrosselReader, "_read_slots"),
         ("  cells", CarrosselReader, "_read_cells"),
         ("    letters", CarrosselReader, "_letter_region_scores"),
         ("    standees", CarrosselReader, "_standees"),
         ("      edge width", CarrosselReader, "edge_width_mm"),
         ("    pixel classes", colour.RegionClassifier, "pixel_classes_near"))


def time_parts(acc: dict[str, float]) -> None:
    """Wrap each of :data:`PARTS` so that its calls add their thread CPU time (s) to ``acc``."""
    for label, owner, name in PARTS:
        f = getattr(owner, name)

        def timed(*a, _f=f, _label=label, **k):
            t0 = time.thread_time()
            try:
                return _f(*a, **k)
            finally:
                acc[_label] += time.thread_time() - t0

        setattr(owner, name, functools.wraps(f)(timed))


def reference_op_cpu_s(repeat: int = 300) -> float:
    """The reference operation's median CPU time of this thread (s) (bench._common.reference_op_s
    by ``time.thread_time``)."""
    return reference_op_s(repeat, clock=time.thread_time)


def slot_wrong(got, want) -> bool:
    """A slot's reading is wrong when it says something the truth does not: any answer but the
    truth's and ``"unknown"``; a tile read with its animal unknown (a standee over its letter) is
    wrong when its colour or its standee is not the truth's."""
    if isinstance(got, dict) and got.get("animal") == "unknown":
        return not (isinstance(want, dict) and got["colour"] == want["colour"] and got["standee"] == want["standee"])
    return got not in (want, "unknown")


def main(argv=None) -> int:
    """Run the benchmark; prints one JSON object; returns 0."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data" / "carrossel-table"))
    ap.add_argument("--repeat", type=int, default=5, help="timing rounds, each with the reference op timed first")
    ap.add_argument("--parts", action="store_true", help="also the thread CPU time of each part of a full read")
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    data = Path(args.data)
    truth = json.loads((data / "truth.json").read_text())
    reader = CarrosselReader()
    n = {k: 0 for k in ("facing", "facing_right", "facing_wrong", "slots", "slots_right", "slots_wrong",
                        "tiles", "tiles_right", "empty", "empty_right", "angle_read", "images")}
    n.update({"standee_tiles": 0, "standee_tiles_right": 0, "plain_tiles": 0, "plain_tiles_right": 0, "partial": 0})
    angle_err = []
    load0 = os.getloadavg()
    frames = []
    for im in truth["images"]:
        frame = cv2.imread(str(data / "images" / im["image"]))
        frames.append(frame)
        n["images"] += 1
        rd = reader.read(frame)
        if rd.board_angle_deg is not None:
            n["angle_read"] += 1
            angle_err.append(abs((rd.board_angle_deg - im["board_angle_deg"] + 180) % 360 - 180))
        for booth, info in im["booths"].items():
            n["facing"] += 1
            got = rd.facing[booth]
            n["facing_right"] += got == info["facing_sector_label"]
            n["facing_wrong"] += got not in (info["facing_sector_label"], "unknown", "ambiguous")
        hidden = {tuple(x) for x in im["hands_over_cells_sector_slot"]}
        for cell in im["cells"]:
            if (cell["sector"], cell["slot"]) in hidden or cell["visibility"]["hand_occluded_fraction"] > 0:
                continue
            t = cell["tile"]
            want = "empty" if t is None else {"animal": t["animal"], "colour": t["colour"], "standee": t["standee"] is not None}
            name = f"{cell['sector_label']}{cell['slot']}"
            got = rd.slots[name].to_json() if name in rd.slots else "unknown"
            n["slots"] += 1
            n["slots_right"] += got == want
            n["slots_wrong"] += slot_wrong(got, want)
            if isinstance(got, dict) and got["animal"] == "unknown":
                n["partial"] += 1  # the colour and the standee read, the animal not
            kind = "empty" if t is None else "tiles"
            n[kind] += 1
            n[kind + "_right"] += got == want
            if t is not None:
                sub = "standee_tiles" if t["standee"] is not None else "plain_tiles"
                n[sub] += 1
                n[sub + "_right"] += got == want
    # timing: rounds of (the reference op, then each photograph read in the three ways), so that
    # a change of the machine's load between rounds shows in both
    registered = [reader.read(f).registration for f in frames]
    streams = []
    for k, (frame, reg) in enumerate(zip(frames, registered)):
        if reg is None:
            continue
        # a still table seen by a camera: the photo with fresh sensor noise (sigma 3 levels)
        # in every frame, made before the timing; the stream's first frame registers
        rng = np.random.default_rng(k + 1)
        noisy = [np.clip(frame + rng.normal(0.0, 3.0, frame.shape), 0, 255).astype(np.uint8)
                 for _ in range(args.repeat + 1)]
        streamer = CarrosselReader(reader.geometry, reader.letters)
        streamer.read(noisy[0], stream=True)
        streams.append((streamer, noisy[1:]))
    parts: dict[str, float] = collections.defaultdict(float)
    per_part: dict[str, list[float]] = collections.defaultdict(list)
    if args.parts:
        time_parts(parts)
    wall = {"with_registration": [], "registration_kept": [], "stream": []}
    cpu = {k: [] for k in wall}
    ref_wall, ref_cpu, round_ratio = [], [], []
    for r in range(args.repeat):
        ref_wall.append(reference_op_s(100))
        ref_cpu.append(reference_op_cpu_s(100))
        this_round = []
        for frame, reg in zip(frames, registered):
            parts.clear()
            t0, c0 = time.perf_counter(), time.thread_time()
            reader.read(frame)
            wall["with_registration"].append(time.perf_counter() - t0)
            cpu["with_registration"].append(time.thread_time() - c0)
            this_round.append(cpu["with_registration"][-1])
            for label, _o, _n in PARTS:
                per_part[label].append(parts.get(label, 0.0))
            if reg is not None:
                t0, c0 = time.perf_counter(), time.thread_time()
                reader.read(frame, registration=reg)
                wall["registration_kept"].append(time.perf_counter() - t0)
                cpu["registration_kept"].append(time.thread_time() - c0)
        for streamer, noisy in streams:
            t0, c0 = time.perf_counter(), time.thread_time()
            streamer.read(noisy[r], stream=True)
            wall["stream"].append(time.perf_counter() - t0)
            cpu["stream"].append(time.thread_time() - c0)
        round_ratio.append(statistics.median(this_round) / ref_cpu[-1])
    ref, rcpu = statistics.median(ref_wall), statistics.median(ref_cpu)
    med_w = {k: statistics.median(v) for k, v in wall.items()}
    med_c = {k: statistics.median(v) for k, v in cpu.items()}
    out = {
        **n, "facing_right_rate": round(n["facing_right"] / n["facing"], 3),
        "slots_right_rate": round(n["slots_right"] / n["slots"], 3),
        "tiles_right_rate": round(n["tiles_right"] / n["tiles"], 3),
        "empty_right_rate": round(n["empty_right"] / n["empty"], 3),
        "angle_err_deg_median": round(float(np.median(angle_err)), 2), "angle_err_deg_max": round(max(angle_err), 2),
        "plain_tiles_right_rate": round(n["plain_tiles_right"] / max(n["plain_tiles"], 1), 3),
        "standee_tiles_right_rate": round(n["standee_tiles_right"] / max(n["standee_tiles"], 1), 3),
        "wall_ms": {**{k: round(v * 1e3, 2) for k, v in med_w.items()}, "reference_op": round(ref * 1e3, 3)},
        "wall_ratio": {k: round(v / ref, 1) for k, v in med_w.items()},
        "cpu_ms": {**{k: round(v * 1e3, 2) for k, v in med_c.items()}, "reference_op": round(rcpu * 1e3, 3)},
        "cpu_ratio": {k: round(v / rcpu, 1) for k, v in med_c.items()},
        "cpu_ratio_with_registration_per_round": [round(v, 1) for v in round_ratio],
        "reference_op_cpu_ms_per_round": [round(v * 1e3, 3) for v in ref_cpu],
        "load_average_before_after": [round(load0[0], 1), round(os.getloadavg()[0], 1)],
        "machine": machine()}
    if args.parts:
        out["parts_cpu_ms_median"] = {label.strip(): round(statistics.median(v) * 1e3, 2) for label, v in per_part.items()}
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
