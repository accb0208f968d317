"""The Carrousel reader against its own code of an earlier commit, in one process, read by read
in turns (issue 15's figures before and after a change, on the same frames, under the same load).

Usage: python bench/vision_speed_ab.py --before COMMIT [--frames N] [--rounds R]

``companion/vision/carrousel.py`` and ``companion/vision/carrousel_checks.py`` as of ``COMMIT``
(``git show``) are loaded as a second pair of modules (the rest of the package, ``colour.py``,
``registration.py``, is the working tree's, shared by both); each figure is timed for the reader
of the working tree ("now") and the earlier one ("before") call by call in turns, the one going
first changing every call, so that a change of load falls on both alike. On a path-traced
table photo and a rendered frame (those of bench/vision_speed.py), per round:

* the reference operation: one ``cv2.cvtColor`` BGR to Lab of the whole 640 x 480 frame;
* the naive reader's full read (bench/naive_carrousel.py);
* the steady read with the registration kept (the same frame again: a still camera's cost);
* the steady read of a frame with fresh sensor noise each read (a Gaussian of 2 levels, made
  just before the read, outside the timing; 300 such frames read first by each reader);
* re-detection near the last places (``Registrar.register_near``) and a read with it;
* the full read (marker detection in the whole frame, the homography, the read).

Each figure is the median over the rounds of the per-round median of the thread's CPU time
(``time.thread_time``), in ms and as a ratio to the reference op of the same round; the
paired figure is the median of each round's median of now / before. Every reading of both
readers is compared too (the same frames must read the same). Prints Markdown rows.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from naive_carrousel import NaiveCarrouselReader  # noqa: E402

from companion.vision.carrousel import CarrouselReader  # noqa: E402
from companion.vision.sim import Conditions, TableRenderer  # noqa: E402

cv2.setNumThreads(1)


def load_before(commit: str) -> types.ModuleType:
    """The Carrousel reader module as of ``commit`` (its checks module with it), loaded under
    other names beside the working tree's."""
    def source(path: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:{path}"], check=True,
                              capture_output=True, text=True).stdout

    mods = {}
    for name, path in (("carrousel_checks", "companion/vision/carrousel_checks.py"),
                       ("carrousel", "companion/vision/carrousel.py")):
        text = source(path).replace("from companion.vision.carrousel_checks import",
                                    "from companion_before_carrousel_checks import")
        spec = importlib.util.spec_from_loader(f"companion_before_{name}", loader=None)
        mod = importlib.util.module_from_spec(spec)
        mod.__file__ = f"<{commit}:{path}>"
        sys.modules[spec.name] = mod
        exec(compile(text, mod.__file__, "exec"), mod.__dict__)
        mods[name] = mod
    return mods["carrousel"]


NAMES = ("reference op", "naive full read", "steady read", "steady read, fresh noise",
         "re-detect near the last places", "re-detect near + read", "full read")


def same(a, b) -> bool:
    """Whether two readings are equal in every field the readers give (the cards field by field:
    each module has its own ``CardReading`` class)."""
    def cards(r):
        return {s: (c.seat, c.discs, c.triple, c.reason) for s, c in r.cards.items()}
    return (a.status, a.spaces, cards(a), a.white_level) == (b.status, b.spaces, cards(b), b.white_level)


def time_pairs(fns, n: int, prepare=None) -> list[list[float]]:
    """Per function of ``fns``: ``n`` thread-CPU times (s), the functions called in turns
    (the first of each turn rotating); ``prepare()`` (outside the timing) before each call
    gives its argument."""
    ts: list[list[float]] = [[] for _ in fns]
    for i in range(n):
        for j in range(len(fns)):
            k = (i + j) % len(fns)
            arg = prepare() if prepare is not None else None
            t0 = time.thread_time()
            fns[k]() if prepare is None else fns[k](arg)
            ts[k].append(time.thread_time() - t0)
    return ts


def time_frame(frame: np.ndarray, before_mod: types.ModuleType, n: int, rounds: int):
    """Per figure: per reader ("now", "before"): (median ms, median ratio to the reference op),
    and the median ratio now / before; and the count of readings compared."""
    readers = (CarrouselReader(), before_mod.CarrouselReader())
    naive = NaiveCarrouselReader()
    reg = readers[0].registrar.register(frame)
    assert reg is not None and naive.read(frame) is not None
    rng = np.random.default_rng(2)
    base = frame.astype(np.float32)

    def fresh() -> np.ndarray:
        return np.clip(np.rint(base + rng.normal(0.0, 2.0, frame.shape).astype(np.float32)), 0, 255).astype(np.uint8)

    compared = 0
    for _ in range(300):  # the grids and the kept region readings meet the noise's first cells
        f = fresh()
        a, b = (r.read(f, registration=reg) for r in readers)
        assert same(a, b), "the two readers differ on a noisy frame"
        compared += 1
    for r in readers:
        assert same(readers[0].read(frame), r.read(frame))
        compared += 1
    few = max(n // 4, 10)
    per_round = []
    for _ in range(rounds):
        row = {}
        row["reference op"] = time_pairs([lambda: cv2.cvtColor(frame, cv2.COLOR_BGR2Lab)], n)
        row["naive full read"] = time_pairs([lambda: naive.read(frame)], few)
        row["steady read"] = time_pairs([lambda r=r: r.read(frame, registration=reg) for r in readers], n)
        row["steady read, fresh noise"] = time_pairs([lambda f, r=r: r.read(f, registration=reg) for r in readers],
                                                     n, fresh)
        row["re-detect near the last places"] = time_pairs(
            [lambda r=r: r.registrar.register_near(frame, reg) for r in readers], few)
        row["re-detect near + read"] = time_pairs(
            [lambda r=r: r.read(frame, registration=r.registrar.register_near(frame, reg)) for r in readers], few)
        row["full read"] = time_pairs([lambda r=r: r.read(frame) for r in readers], few)
        per_round.append({k: [statistics.median(t) * 1000.0 for t in v] for k, v in row.items()})
    out = {}
    for name in NAMES:
        ms = [[r[name][i] for r in per_round] for i in range(len(per_round[0][name]))]
        ref = [r["reference op"][0] for r in per_round]
        cells = [(statistics.median(m), statistics.median(v / q for v, q in zip(m, ref))) for m in ms]
        paired = statistics.median(r[name][0] / r[name][1] for r in per_round) if len(ms) == 2 else None
        out[name] = (cells, paired)
    return out, compared


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="the commit whose reader is timed beside the working tree's")
    ap.add_argument("--frames", type=int, default=100, help="timed calls per figure per round")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    before = load_before(args.before)
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    photo = cv2.imread(str(ROOT / "tests/data/carrousel-table/images/carrousel_039.jpg"))
    rendered, _ = TableRenderer().render(("empty", "empty", "black", "yellow", "blue", "green", "red"),
                                         {"south": ("red", "blue", "green"), "north": ("black", "yellow", "red")},
                                         Conditions(tilt_deg=20, azimuth_deg=40, roll_deg=30), np.random.default_rng(1))
    t0 = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    load0 = os.getloadavg()
    results = {label: time_frame(frame, before, args.frames, args.rounds)
               for label, frame in (("path-traced photo", photo), ("rendered frame", rendered))}
    load1 = os.getloadavg()
    print(f"python {platform.python_version()}, numpy {np.__version__}, opencv {cv2.__version__}, "
          f"{platform.machine()}, cv2 threads 1, HEAD {head} (working tree) against {args.before}, "
          f"{args.rounds} rounds of {args.frames} calls, thread CPU time, {t0}-{time.strftime('%H:%M', time.gmtime())} UTC, "
          f"load average {load0[0]:.1f} -> {load1[0]:.1f}; readings compared: "
          f"{sum(c for _, c in results.values())}, all equal")
    print("\n| figure | " + " | ".join(f"{label}: now | before | now / before" for label in results) + " |")
    print("|---|" + "---|---|---|" * len(results))
    for name in NAMES:
        cells = []
        for (res, _) in results.values():
            (now, before_cell), paired = (res[name][0] + [None])[:2], res[name][1]
            cells.append(f"{now[0]:.3f} ms ({now[1]:.2f} ref)")
            cells.append(f"{before_cell[0]:.3f} ms ({before_cell[1]:.2f} ref)" if before_cell else "")
            cells.append(f"{paired:.2f}" if paired is not None else "")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("\n| target (issue 15), now | " + " | ".join(results) + " |")
    print("|---|" + "---|" * len(results))
    rows = (("steady read < 1 ms", "steady read", None, 1.0), ("steady read <= 1/10 of the naive full read",
            "steady read", "naive full read", 0.1), ("full read <= 1/2 of the naive full read", "full read",
            "naive full read", 0.5), ("re-detect near the last places < 4 ms", "re-detect near the last places", None, 4.0))
    for text, name, against, bound in rows:
        cells = []
        for (res, _) in results.values():
            v = res[name][0][0][0]
            if against is None:
                cells.append(f"{v:.2f} ms: {'met' if v < bound else 'NOT met'}")
            else:
                share = v / res[against][0][0][0]
                cells.append(f"{share:.3f} of it: {'met' if share <= bound else 'NOT met'}")
        print(f"| {text} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
