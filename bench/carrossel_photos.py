"""Carrossel reader on the 20 path-traced photographs (shared/data/carrossel-table): right and
wrong readings of the board angle, the facing sectors and the 48 slots (tiles with and without a
standee counted apart), and the time per frame: with the registration (full detection), with it
kept (``registration=``) and as a stream (``stream=True``: the registration kept and its markers'
cells checked, the still table's cells kept; each frame the photo with fresh sensor noise), each as wall time and as the thread's CPU time (``time.thread_time``: what the
reader costs when other jobs share the cores), medians, and as a ratio to one cv2.cvtColor
BGR -> Lab of a 640 x 480 frame timed in the same run. One thread. The load average is printed.

    .venv/bin/python bench/carrossel_photos.py [--data DIR] [--repeat N]
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
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._common import machine, reference_op_s  # noqa: E402
from companion.vision.carrossel import CarrosselReader  # noqa: E402


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
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    data = Path(args.data)
    truth = json.loads((data / "truth.json").read_text())
    reader = CarrosselReader()
    n = {k: 0 for k in ("facing", "facing_right", "facing_wrong", "slots", "slots_right", "slots_wrong",
                        "tiles", "tiles_right", "empty", "empty_right", "angle_read", "images")}
    n.update({"standee_tiles": 0, "standee_tiles_right": 0, "plain_tiles": 0, "plain_tiles_right": 0, "partial": 0})
    angle_err, t_full, t_kept, t_stream = [], [], [], []
    c_full, c_kept, c_stream = [], [], []
    load0 = os.getloadavg()
    for im in truth["images"]:
        frame = cv2.imread(str(data / "images" / im["image"]))
        n["images"] += 1
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), time.thread_time()
            rd = reader.read(frame)
            t_full.append(time.perf_counter() - t0)
            c_full.append(time.thread_time() - c0)
        if rd.registration is not None:
            for _ in range(args.repeat):
                t0, c0 = time.perf_counter(), time.thread_time()
                reader.read(frame, registration=rd.registration)
                t_kept.append(time.perf_counter() - t0)
                c_kept.append(time.thread_time() - c0)
            # a still table seen by a camera: the photo with fresh sensor noise (sigma 3 levels)
            # in every frame, made before the timing; the stream's first frame registers
            rng = np.random.default_rng(n["images"])
            noisy = [np.clip(frame + rng.normal(0.0, 3.0, frame.shape), 0, 255).astype(np.uint8)
                     for _ in range(args.repeat + 1)]
            streamer = CarrosselReader(reader.geometry, reader.letters)
            streamer.read(noisy[0], stream=True)
            for k in range(args.repeat):
                t0, c0 = time.perf_counter(), time.thread_time()
                streamer.read(noisy[k + 1], stream=True)
                t_stream.append(time.perf_counter() - t0)
                c_stream.append(time.thread_time() - c0)
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
    ref = reference_op_s()
    c0 = time.thread_time()
    ref_cpu = reference_op_cpu_s()
    full, kept, stream = statistics.median(t_full), statistics.median(t_kept), statistics.median(t_stream)
    cfull, ckept, cstream = statistics.median(c_full), statistics.median(c_kept), statistics.median(c_stream)
    del c0
    print(json.dumps({
        **n, "facing_right_rate": round(n["facing_right"] / n["facing"], 3),
        "slots_right_rate": round(n["slots_right"] / n["slots"], 3),
        "tiles_right_rate": round(n["tiles_right"] / n["tiles"], 3),
        "empty_right_rate": round(n["empty_right"] / n["empty"], 3),
        "angle_err_deg_median": round(float(np.median(angle_err)), 2), "angle_err_deg_max": round(max(angle_err), 2),
        "plain_tiles_right_rate": round(n["plain_tiles_right"] / max(n["plain_tiles"], 1), 3),
        "standee_tiles_right_rate": round(n["standee_tiles_right"] / max(n["standee_tiles"], 1), 3),
        "wall_ms": {"with_registration": round(full * 1e3, 2), "registration_kept": round(kept * 1e3, 2),
                    "stream": round(stream * 1e3, 2), "reference_op": round(ref * 1e3, 3)},
        "wall_ratio": {"with_registration": round(full / ref, 1), "registration_kept": round(kept / ref, 1),
                       "stream": round(stream / ref, 1)},
        "cpu_ms": {"with_registration": round(cfull * 1e3, 2), "registration_kept": round(ckept * 1e3, 2),
                   "stream": round(cstream * 1e3, 2), "reference_op": round(ref_cpu * 1e3, 3)},
        "cpu_ratio": {"with_registration": round(cfull / ref_cpu, 1), "registration_kept": round(ckept / ref_cpu, 1),
                      "stream": round(cstream / ref_cpu, 1)},
        "load_average_before_after": [round(load0[0], 1), round(os.getloadavg()[0], 1)],
        "machine": machine()}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
