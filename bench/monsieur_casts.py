"""The Monsieur Carrousel reader on the path-traced photographs under colour casts and lens blur:
every reading that is not ``unknown`` must be right (a wrong seat is far worse than unknown).

Each photograph of shared/data/monsieur-table (or ``--data``) is transformed as a camera does:
its 8-bit codes times a gain per channel (B, G, R; a white balance gone wrong, 0.7-1.35 a
channel, clipped at 255), a Gaussian lens blur (``cv2.GaussianBlur``, sigma 0.8-2.0 px), their
combinations with an exposure (x0.5, x1.4 of every channel) and Gaussian sensor noise (sigma in
8-bit levels, after the gain), then written as JPEG quality 92 into ``--out`` and read with the
command a user runs, ``companion read monsieur-carrousel FILES...`` (about 100 files a call,
``nice``), its JSON Lines compared with truth.json: every seat read kid / empty, the pointed
seat, the die's colour and the carousel's angle (within 3 degrees).

Run on demand (not a test)::

    .venv/bin/python bench/monsieur_casts.py [--out /tmp/monsieur_casts] [--only bluecast,...]

Figures: docs/BENCHMARKS.md (Monsieur Carrousel, colour casts and blur).
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "monsieur-table"

#: name -> (BGR gains, blur sigma px, exposure, noise sigma 8-bit levels)
TRANSFORMS: dict[str, tuple[tuple[float, float, float], float, float, float]] = {
    "bluecast": ((1.35, 1.0, 0.75), 0.0, 1.0, 0.0),
    "warmcast": ((0.7, 0.95, 1.3), 0.0, 1.0, 0.0),
    "green": ((0.9, 1.15, 0.9), 0.0, 1.0, 0.0),
    "magenta": ((1.1, 0.8, 1.15), 0.0, 1.0, 0.0),
    "cyan": ((1.2, 1.1, 0.7), 0.0, 1.0, 0.0),
    "yellowcast": ((0.7, 1.1, 1.2), 0.0, 1.0, 0.0),
    "blur08": ((1.0, 1.0, 1.0), 0.8, 1.0, 0.0),
    "blur12": ((1.0, 1.0, 1.0), 1.2, 1.0, 0.0),
    "blur16": ((1.0, 1.0, 1.0), 1.6, 1.0, 0.0),
    "blur20": ((1.0, 1.0, 1.0), 2.0, 1.0, 0.0),
    "blue_blur12": ((1.35, 1.0, 0.75), 1.2, 1.0, 0.0),
    "warm_blur16": ((0.7, 0.95, 1.3), 1.6, 1.0, 0.0),
    "blue_dark_noise": ((1.35, 1.0, 0.75), 0.0, 0.5, 3.0),
    "warm_bright": ((0.7, 0.95, 1.3), 0.0, 1.4, 0.0),
    "blur16_dark_noise": ((1.0, 1.0, 1.0), 1.6, 0.5, 3.0),
    "blur12_bright": ((1.0, 1.0, 1.0), 1.2, 1.4, 0.0),
    "green_blur20_noise": ((0.9, 1.15, 0.9), 2.0, 1.0, 3.0),
}


def transformed(frame: np.ndarray, gains, sigma: float, exposure: float, noise: float,
                rng: np.random.Generator) -> np.ndarray:
    """``frame`` (``H x W x 3 uint8`` BGR) blurred on its codes (sigma px, 0: not), times
    ``gains`` (B, G, R) and ``exposure``, plus Gaussian noise (sigma, 8-bit levels), rounded and
    clipped; ``H x W x 3 uint8``."""
    out = frame.astype(np.float32)
    if sigma > 0:
        out = cv2.GaussianBlur(out, (0, 0), sigma)
    out = out * (np.asarray(gains, np.float32) * np.float32(exposure))
    if noise > 0:
        out += rng.normal(0.0, noise, out.shape).astype(np.float32)
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def compare(r: dict, t: dict) -> list[str]:
    """The wrong readings of one JSON line ``r`` against its truth ``t`` (strings)."""
    bad = []
    for k, state in enumerate(r.get("seats", [])):
        if state in ("kid", "empty") and (state == "kid") != t["seats"][k]["occupied"]:
            bad.append(f"seat {k} {state}")
    ps = r.get("pointed_seat")
    if isinstance(ps, int) and ps != t["pointed_seat"]:
        bad.append(f"pointed {ps} (truth {t['pointed_seat']})")
    die = r.get("die")
    if die not in (None, "unknown") and die != t["die"]["top_colour"]:
        bad.append(f"die {die} (truth {t['die']['top_colour']})")
    a = r.get("carousel_angle_deg")
    if a is not None and abs((a - t["carousel_angle_deg"] + 180.0) % 360.0 - 180.0) > 3.0:
        bad.append(f"angle {a} (truth {t['carousel_angle_deg']:.2f})")
    return bad


def main(argv: list[str] | None = None) -> int:
    """Write the copies, read them with the command, print per transform the wrong / read
    counts and every wrong reading; returns 1 when one is wrong."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--out", type=Path, default=Path("/tmp/monsieur_casts"))
    ap.add_argument("--only", default="", help="only these transforms (comma-separated names)")
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    truth = {t["image"].rsplit(".", 1)[0]: t for t in json.loads((args.data / "truth.json").read_text())["images"]}
    names = [n for n in TRANSFORMS if not args.only or n in args.only.split(",")]
    args.out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    files: list[Path] = []
    for stem in sorted(truth):
        frame = cv2.imread(str(args.data / "images" / f"{stem}.jpg"))
        for n in names:
            p = args.out / f"{stem}__{n}.jpg"
            cv2.imwrite(str(p), transformed(frame, *TRANSFORMS[n], rng), [cv2.IMWRITE_JPEG_QUALITY, 92])
            files.append(p)
    exe = ROOT / ".venv" / "bin" / "companion"
    lines: list[dict] = []
    for i in range(0, len(files), args.batch):
        got = subprocess.run(["nice", "-n", "5", str(exe), "read", "monsieur-carrousel",
                              *map(str, files[i:i + args.batch])], capture_output=True, text=True, check=False)
        lines += [json.loads(s) for s in got.stdout.splitlines() if s.startswith("{")]
    per = {n: [0, 0, 0] for n in names}  # wrong, seats read, seats right
    wrong = 0
    for r in lines:
        stem, kind = Path(r["image"]).stem.split("__")
        bad = compare(r, truth[stem])
        seats = [s for s in r.get("seats", []) if s in ("kid", "empty")]
        per[kind][0] += len(bad)
        per[kind][1] += len(seats)
        per[kind][2] += len(seats) - sum(b.startswith("seat") for b in bad)
        for b in bad:
            wrong += 1
            print(f"WRONG {stem} {kind}: {b}", flush=True)
    for n, (w, read, right) in per.items():
        print(json.dumps({"transform": n, "wrong": w, "seats_read": read, "seats_right": right}))
    print(json.dumps({"files": len(lines), "wrong": wrong}))
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
