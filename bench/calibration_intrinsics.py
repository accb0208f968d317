"""Camera intrinsics: our recipe (sub-pixel window from each view's corner spacing) against
OpenCV's own (``modules/python/test/test_calibration.py``) and the old fixed window, on the
chessboard views of ``../shared/data/chessboard/`` (or ``tests/data/chessboard/``).

Prints, per recipe, the RMS reprojection error (px), the sub-pixel half-windows and the time of
the whole calibration (corners, refinement, ``calibrateCamera``), also as a multiple of a
reference operation timed in the same run: one ``cv2.cvtColor`` BGR -> Lab of a 640 x 480 frame.
Target (issue 14): ours within 0.01 px of OpenCV's recipe.

    .venv/bin/python bench/calibration_intrinsics.py [VIEW ...]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import machine  # noqa: E402
from bench._common import reference_op_s  # noqa: E402
from companion.vision.calibration import calibrate_intrinsics  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PATTERN = (9, 6)


def views() -> list[Path]:
    """The command line's views, else left*.jpg of ../shared/data/chessboard, else the tests' copy."""
    if len(sys.argv) > 1:
        return [Path(p) for p in sys.argv[1:]]
    for folder in (ROOT.parent / "shared" / "data" / "chessboard", ROOT / "tests" / "data" / "chessboard"):
        found = sorted(folder.glob("left*.jpg"))
        if found:
            return found
    raise SystemExit("no chessboard views: give them on the command line")


def fixed_window(paths: list[Path], win: int, criteria: tuple, flags: int = 0) -> float:
    """RMS (px) of a recipe with one fixed ``cornerSubPix`` half-window for every view."""
    objp = np.zeros((np.prod(PATTERN), 3), np.float32)
    objp[:, :2] = np.indices(PATTERN).T.reshape(-1, 2)
    obj, img = [], []
    for p in paths:
        g = cv2.imread(str(p), cv2.IMREAD_GRAYSCALE)
        ok, c = cv2.findChessboardCorners(g, PATTERN)
        if not ok:
            continue
        c = np.ascontiguousarray(c, np.float32).reshape(-1, 1, 2)
        cv2.cornerSubPix(g, c, (win, win), (-1, -1), criteria)
        obj.append(objp)
        img.append(c.reshape(-1, 2))
    rms, *_ = cv2.calibrateCamera(obj, img, g.shape[::-1], None, None, flags=flags)
    return float(rms)


def timed(fn, repeat: int = 3):
    """(result, median seconds) of ``fn()`` over ``repeat`` runs."""
    out, times = None, []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return out, float(np.median(times))


def main() -> None:
    paths = views()
    ref = reference_op_s()
    opencv_criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_COUNT, 30, 0.1)
    old_criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 30, 0.001)
    opencv, t_opencv = timed(lambda: fixed_window(paths, 5, opencv_criteria))
    old, t_old = timed(lambda: fixed_window(paths, 11, old_criteria))
    ours, t_ours = timed(lambda: calibrate_intrinsics(paths, PATTERN, 25.0))
    print(machine())
    print(f"views: {', '.join(p.name for p in paths)} ({len(paths)})")
    print(f"reference op (cvtColor BGR->Lab 640x480): {ref * 1e6:.0f} us")
    rows = [
        ("OpenCV's test recipe (winSize 5, 0.1 px)", opencv, "5", t_opencv),
        ("ours (0.2 x corner spacing, 0.001 px)", ours.rms_px, ", ".join(map(str, ours.half_windows_px)), t_ours),
        ("old fixed window (winSize 11, 0.001 px)", old, "11", t_old),
    ]
    print("| recipe | half-window px | RMS px | calibration time | x reference op |")
    print("|---|---|---|---|---|")
    for name, rms, win, t in rows:
        print(f"| {name} | {win} | {rms:.4f} | {t * 1e3:.0f} ms | {t / ref:,.0f} |")
    diff = abs(ours.rms_px - opencv)
    print(f"ours - OpenCV's recipe: {diff:.4f} px ({'within' if diff < 0.01 else 'NOT within'} 0.01 px)")


if __name__ == "__main__":
    main()
