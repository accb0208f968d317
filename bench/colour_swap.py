"""The camera's channel order (colour.PrintCheck): normal frames are never refused and their
channel-swapped copies are, on the 20 path-traced photographs of each table and on rendered
Carrossel frames of every condition kind; and what the check costs a Carrossel read.

Run: ``.venv/bin/python bench/colour_swap.py [--rendered N]`` (N frames of each kind, 24 by
default). Prints the counts, the check's thread CPU time per frame and its ratio to the
reference operation timed in the same run (bench/_common.py), and the machine's load.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import machine, reference_op_s
from companion.vision.carrossel import CarrosselReader
from companion.vision.carrousel import CarrouselReader
from companion.vision.colour import CHANNEL_ORDERS, COLOUR_LOST
from companion.vision.sim_carrossel import (
    CONDITION_KINDS,
    CarrosselRenderer,
    random_carrossel_conditions,
    random_tiles,
)

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def verdict(status: str) -> str:
    """``swap`` (refused as a channel order), ``lost`` (refused otherwise), ``ok``, or ``other``."""
    if status.startswith(COLOUR_LOST) and ("look swapped" in status or "look rotated" in status):
        return "swap"
    if status.startswith(COLOUR_LOST):
        return "lost"
    return "ok" if status == "ok" else "other"


def photos(reader, folder: str) -> collections.Counter:
    """Every photograph of ``shared/data/FOLDER/images`` read by ``reader`` as taken and with
    its channels in each swapped order of ``CHANNEL_ORDERS``: ``(order's tag, "ok" | "colour
    lost" | "other") -> count``."""
    counts: collections.Counter = collections.Counter()
    for f in sorted((SHARED / folder / "images").glob("*.jpg")):
        im = cv2.imread(str(f))
        for order, words in CHANNEL_ORDERS:
            tag = "normal" if not words else words.split("'s ")[1].split(" look")[0]
            counts[(tag, verdict(reader.read(np.ascontiguousarray(im[:, :, list(order)])).status))] += 1
    return counts


def rendered(reader, n: int) -> collections.Counter:
    """``n`` rendered Carrossel frames of each condition kind read as rendered and channel-
    swapped, counted as :func:`photos` counts them."""
    ren, g = CarrosselRenderer(), reader.geometry
    counts: collections.Counter = collections.Counter()
    for k, kind in enumerate(CONDITION_KINDS):
        for i in range(n):
            rng = np.random.default_rng(1000 + 100 * k + i)
            cond = random_carrossel_conditions(rng, kind, g.cell_names)
            img, _t = ren.render(float(rng.uniform(0, 360)), random_tiles(rng, g), cond, rng)
            counts[(kind, "normal", verdict(reader.read(img).status))] += 1
            counts[(kind, "red/blue", verdict(reader.read(np.ascontiguousarray(img[:, :, ::-1])).status))] += 1
    return counts


def cost(reader, rounds: int = 5) -> tuple[float, float]:
    """Thread CPU seconds per frame of the booth hue check (PrintCheck on the four roofs, the
    sampling included) and of the reference op, interleaved rounds (medians)."""
    im = cv2.imread(str(SHARED / "carrossel-table" / "images" / "carrossel_000.jpg"))
    reg = reader.registrar.register(im)
    found = reader.centre_marker_match(im, reg)
    _angle, view = reader.pose_from(reg, found[0], found[1])
    flat = im.reshape(-1, 3)
    from companion.vision.carrossel import _sample
    from companion.vision.colour import white_of
    paper = _sample(flat, im.shape, reg.to_image(reader._paper))
    white, code = white_of(paper), np.median(paper, axis=0)
    with_check, ref = [], []
    saved = reader.print_check
    for _ in range(rounds):
        for check, out in ((saved, with_check), (None, None)):
            reader.print_check = check
            t0 = time.thread_time()
            for _ in range(200):
                reader._colour_fault(flat, im.shape, view, white, code)
            dt = (time.thread_time() - t0) / 200
            if out is not None:
                out.append(dt)
            else:
                with_check[-1] -= dt
        ref.append(reference_op_s(clock=time.thread_time))
    reader.print_check = saved
    return float(np.median(with_check)), float(np.median(ref))


def main() -> None:
    """Run the benchmark (see the module text) and print its table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rendered", type=int, default=24, help="rendered Carrossel frames of each kind (default 24)")
    args = ap.parse_args()
    print(machine(), "load", " ".join(f"{v:.2f}" for v in os.getloadavg()))
    carrossel = CarrosselReader()
    print("Carrossel photographs (20, each copy in every channel order):", dict(sorted(photos(carrossel, "carrossel-table").items())))
    print("Carrousel photographs (no print check: its print is not fixed):",
          dict(sorted(photos(CarrouselReader(), "carrousel-table").items())))
    print(f"Carrossel rendered ({args.rendered} of each kind):", dict(sorted(rendered(carrossel, args.rendered).items())))
    c, r = cost(carrossel)
    print(f"booth hue check: {c * 1e6:.0f} us a frame (thread CPU), {c / r:.3f} x the reference op ({r * 1e3:.2f} ms)")
    print("load", " ".join(f"{v:.2f}" for v in os.getloadavg()))


if __name__ == "__main__":
    main()
