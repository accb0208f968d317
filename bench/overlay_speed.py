"""CPU time of drawing each overlay (`companion read ... --overlay`, the web camera page) on a
640 x 480 photograph of each table, against the reference op timed the same way in the same run.

    .venv/bin/python bench/overlay_speed.py [--calls 60] [--root TREE]

``--root`` times another checkout's code (a tree exported with ``git archive``) in this process
instead of the working tree's, for a before/after comparison run in turns. Each figure is the
median CPU time of the thread (``time.thread_time``) over ``--calls`` calls after 5 warm-up
calls, one thread (``cv2.setNumThreads(1)``). The figures are in docs/BENCHMARKS.md ("Overlays").
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "shared" / "data"


def main(argv: list[str] | None = None) -> int:
    """Time the four overlays and the reference op; print one line each (ms and x reference)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--root", help="another tree's code to time (default: this checkout)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(args.root).resolve() if args.root else HERE.parent))
    sys.path.insert(1, str(HERE))
    import cv2
    import numpy as np
    from _common import machine

    cv2.setNumThreads(1)
    from companion.readers.dice import DieReading, draw_readings
    from companion.vision import carrossel, carrousel, monsieur
    from companion.vision.monsieur_geometry import MonsieurGeometry

    def photo(table: str, name: str) -> np.ndarray:
        path = DATA / table / "images" / name
        frame = cv2.imread(str(path))
        if frame is None:
            raise SystemExit(f"overlay_speed: cannot read {path}")
        return frame

    cf = photo("carrousel-table", "carrousel_000.jpg")
    cg = carrousel.CarrouselGeometry.load()
    cr = carrousel.CarrouselReader(cg).read(cf)
    sf = photo("carrossel-table", "carrossel_000.jpg")
    sg = carrossel.CarrosselGeometry.load()
    sr = carrossel.CarrosselReader(sg).read(sf)
    mf = photo("monsieur-table", "monsieur_000.jpg")
    mg = MonsieurGeometry.load()
    mr = monsieur.MonsieurReader(mg).read(mf)
    df = photo("dice-tray", "dice_000.jpg")
    dice = [DieReading(value="unknown", box=(266.0, 200.0, 291.0, 227.0),
                       reason="too small to read here (its face 14 px across, 18 needed)"),
            DieReading(value=5, box=(293.0, 260.0, 314.0, 279.0))]
    lab = np.zeros_like(cf)
    jobs = {
        "reference op (cvtColor BGR->Lab 640x480)": lambda: cv2.cvtColor(cf, cv2.COLOR_BGR2Lab, dst=lab),
        "Carrousel draw_overlay, carrousel_000": lambda: carrousel.draw_overlay(cf, cr, cg),
        "Carrossel draw_overlay, carrossel_000": lambda: carrossel.draw_overlay(sf, sr, sg),
        "Monsieur draw_overlay, monsieur_000": lambda: monsieur.draw_overlay(mf, mr, mg),
        "dice draw_readings, dice_000 (2 dice)": lambda: draw_readings(df, dice, (200, 110, 450, 370)),
    }
    print(machine())
    ref = None
    for name, fn in jobs.items():
        for _ in range(5):
            fn()
        times = []
        for _ in range(args.calls):
            t0 = time.thread_time()
            fn()
            times.append(time.thread_time() - t0)
        ms = statistics.median(times) * 1000
        ref = ref or ms
        print(f"{name:45s} {ms:7.3f} ms CPU  {ms / ref:5.2f} x reference")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
