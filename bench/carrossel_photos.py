"""Carrossel reader on the 20 path-traced photographs (shared/data/carrossel-table): right and
wrong readings of the board angle, the facing sectors and the 48 slots, and the time per frame,
with the registration (full detection) and with it kept (stream), as a ratio to one
cv2.cvtColor BGR -> Lab of a 640 x 480 frame timed in the same run. One thread.

    .venv/bin/python bench/carrossel_photos.py [--data DIR] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._common import reference_op_s  # noqa: E402
from companion.vision.carrossel import CarrosselReader  # noqa: E402


def main(argv=None) -> int:
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
    angle_err, t_full, t_kept = [], [], []
    for im in truth["images"]:
        frame = cv2.imread(str(data / "images" / im["image"]))
        n["images"] += 1
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            rd = reader.read(frame)
            t_full.append(time.perf_counter() - t0)
        if rd.registration is not None:
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                reader.read(frame, registration=rd.registration)
                t_kept.append(time.perf_counter() - t0)
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
            n["slots_wrong"] += got not in (want, "unknown")
            kind = "empty" if t is None else "tiles"
            n[kind] += 1
            n[kind + "_right"] += got == want
    ref = reference_op_s()
    full, kept = statistics.median(t_full), statistics.median(t_kept)
    print(json.dumps({
        **n, "facing_right_rate": round(n["facing_right"] / n["facing"], 3),
        "slots_right_rate": round(n["slots_right"] / n["slots"], 3),
        "tiles_right_rate": round(n["tiles_right"] / n["tiles"], 3),
        "empty_right_rate": round(n["empty_right"] / n["empty"], 3),
        "angle_err_deg_median": round(float(np.median(angle_err)), 2), "angle_err_deg_max": round(max(angle_err), 2),
        "ms_per_frame_with_registration": round(full * 1e3, 2), "ms_per_frame_registration_kept": round(kept * 1e3, 2),
        "reference_op_ms": round(ref * 1e3, 3), "ratio_with_registration": round(full / ref, 1),
        "ratio_registration_kept": round(kept / ref, 1)}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
