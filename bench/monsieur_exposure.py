"""The Monsieur Carrousel reader on the path-traced photographs darkened, brightened and made
noisy: wrong readings must stay 0 on every copy (issue 12: "never a wrong seat").

Each photograph of shared/data/monsieur-table (or ``--data``) is read as it is and as copies
whose 8-bit codes are scaled (``--gains``: a camera's gain or exposure applied after its tone
curve, the codes rounded and clipped at 255: x1.4 clips the paper and the light prints), with
Gaussian noise of ``--noise`` sigmas (8-bit levels, added after the gain: a sensor's read noise
does not dim with the light), and re-encoded as JPEG (``--jpeg`` quality: the quantisation of a
dim frame's few levels). Against truth.json it counts, per copy kind, wrong and right readings
of the pointed seat, the seats (kid / empty) and the die, and prints every wrong one.

Run on demand (not a test)::

    .venv/bin/python bench/monsieur_exposure.py [--gains 0.25,0.35,0.5,0.7,1,1.4] [--noise 0,3,6]

Figures: docs/BENCHMARKS.md (Monsieur Carrousel, accuracy).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import cv2  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._common import machine  # noqa: E402
from companion.vision.monsieur import KID, MonsieurReader  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "monsieur-table"


def exposed(frame: np.ndarray, gain: float, noise: float, jpeg: int, rng: np.random.Generator) -> np.ndarray:
    """A copy of ``frame`` (``H x W x 3 uint8``) with its codes times ``gain``, plus Gaussian
    noise of sigma ``noise`` (8-bit levels), rounded and clipped to 0-255, then JPEG-encoded at
    quality ``jpeg`` and decoded (0: not); ``H x W x 3 uint8``."""
    out = frame.astype(np.float32) * float(gain)
    if noise > 0:
        out += rng.normal(0.0, noise, out.shape).astype(np.float32)
    img = np.clip(np.rint(out), 0, 255).astype(np.uint8)
    if jpeg:
        _ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(jpeg)])
        img = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return img


def score(reading, t: dict, margin: float) -> dict[str, list]:
    """Wrong and right readings of one image against its truth: ``{"pointed" | "seats" | "die":
    [wrong, right, eligible, [what was wrong, ...]]}`` (eligible as bench/monsieur_photos.py)."""
    out = {k: [0, 0, 0, []] for k in ("pointed", "seats", "die")}
    ps = reading.pointed_seat
    if isinstance(ps, int) and ps != t["pointed_seat"]:
        out["pointed"][0] += 1
        out["pointed"][3].append(f"pointed {ps} (truth {t['pointed_seat']})")
    if 9 in t["markers"]["visible"] and t["pointed_seat_boundary_distance_deg"] > margin:
        out["pointed"][2] += 1
        out["pointed"][1] += ps == t["pointed_seat"]
    for k, state in enumerate(reading.seats):
        occ = t["seats"][k]["occupied"]
        if state != "unknown" and (state == KID) != occ:
            out["seats"][0] += 1
            out["seats"][3].append(f"seat {k} {state}")
        if k not in t["hands_over_seats"]:
            out["seats"][2] += 1
            out["seats"][1] += state != "unknown" and (state == KID) == occ
    top = t["die"]["top_colour"]
    if reading.die != "unknown" and reading.die != top:
        out["die"][0] += 1
        out["die"][3].append(f"die {reading.die} (truth {top})")
    if t["die"]["top_face_visibility"]["visible_fraction"] > 0.9:
        out["die"][2] += 1
        out["die"][1] += reading.die == top
    return out


def main(argv: list[str] | None = None) -> int:
    """Read every copy and print one JSON line per copy kind and the wrong readings; returns
    0 when none is wrong, 1 otherwise."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--gains", default="0.25,0.35,0.5,0.7,1,1.4")
    ap.add_argument("--noise", default="0,3,6", help="Gaussian noise sigmas (8-bit levels), comma-separated")
    ap.add_argument("--jpeg", default="0,85", help="JPEG qualities to re-encode at (0: not), comma-separated")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--images", default="", help="only these photographs (comma-separated names)")
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    truth = json.loads((args.data / "truth.json").read_text())["images"]
    if args.images:
        keep = set(args.images.split(","))
        truth = [t for t in truth if t["image"] in keep or t["image"].rsplit(".", 1)[0] in keep]
    reader = MonsieurReader()
    rng = np.random.default_rng(args.seed)
    gains = [float(v) for v in args.gains.split(",")]
    noises = [float(v) for v in args.noise.split(",")]
    jpegs = [int(v) for v in args.jpeg.split(",")]
    print(f"machine: {machine()}")
    wrong_any = 0
    for gain in gains:
        for noise in noises:
            for jpeg in jpegs:
                tot = {k: [0, 0, 0] for k in ("pointed", "seats", "die")}
                for t in truth:
                    frame = cv2.imread(str(args.data / "images" / t["image"]))
                    img = frame if (gain == 1 and noise == 0 and jpeg == 0) else exposed(frame, gain, noise, jpeg, rng)
                    s = score(reader.read(img), t, reader.seat_margin_deg)
                    for k, v in s.items():
                        tot[k] = [a + b for a, b in zip(tot[k], v[:3])]
                        for what in v[3]:
                            wrong_any += 1
                            print(f"WRONG gain {gain:g} noise {noise:g} jpeg {jpeg}: {t['image']} {what}", flush=True)
                print(json.dumps({"gain": gain, "noise": noise, "jpeg": jpeg,
                                  **{k: dict(zip(("wrong", "right", "eligible"), v)) for k, v in tot.items()}}), flush=True)
    return 1 if wrong_any else 0


if __name__ == "__main__":
    raise SystemExit(main())
