"""The Monsieur Carrousel reader on rendered frames (issue 12's benchmark): wrong and right
readings of the pointed seat, the seats and the die on N frames of the simulated camera
(:mod:`companion.vision.sim_monsieur`) across light, tilt, blur, noise, hands and glare.

Run on demand (not a test)::

    .venv/bin/python bench/monsieur_rendered.py --frames 2000 [--seed 1] [--markdown]

Split across processes (two cores): run each with its own ``--seed`` and ``> FILE``, then
``bench/monsieur_rendered.py --combine FILE1 FILE2 --markdown`` adds their counts up.

Each frame is a new random table (any angle, kids on a random subset of seats, the die flat
or, one time in twenty, cocked) under conditions of one kind, the kinds in turn. The reader
reads every frame on its own (full registration, one thread). Prints one JSON line per kind
and the totals, and with ``--markdown`` the table of docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv: list[str] | None = None) -> int:
    """Render, read and score; returns 0."""
    import cv2
    import numpy as np

    from bench._common import machine, reference_op_s
    from companion.vision.monsieur import MonsieurReader
    from companion.vision.sim_monsieur import (
        CONDITION_KINDS,
        MonsieurRenderer,
        angle_error,
        compare,
        random_monsieur_conditions,
        random_scene,
    )

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--progress", action="store_true", help="totals so far every 100 frames, on stderr")
    ap.add_argument("--combine", nargs="+", type=Path, metavar="FILE",
                    help="add up the outputs of earlier runs (their JSON lines) instead of running")
    args = ap.parse_args(argv)
    if args.combine:
        return _combine(args.combine, args.markdown)
    cv2.setNumThreads(1)
    ref = reference_op_s()
    renderer = MonsieurRenderer()
    reader = MonsieurReader()
    rng = np.random.default_rng(args.seed)
    kinds = [k for k in CONDITION_KINDS]
    per: dict[str, dict[str, list[int]]] = {k: {r: [0, 0, 0] for r in ("pointed", "seats", "die")} for k in kinds}
    errs: dict[str, list[float]] = {k: [] for k in kinds}
    times: list[float] = []
    cpu: list[float] = []
    for i in range(args.frames):
        kind = kinds[i % len(kinds)]
        scene = random_scene(rng, renderer.geometry)
        cond = random_monsieur_conditions(rng, kind)
        image, truth = renderer.render(scene, cond, rng)
        t0, c0 = time.perf_counter(), time.thread_time()
        reading = reader.read(image)
        times.append(time.perf_counter() - t0)
        cpu.append(time.thread_time() - c0)
        for name, (w, r, e) in compare(reading, truth, reader.seat_margin_deg).items():
            acc = per[kind][name]
            acc[0] += w
            acc[1] += r
            acc[2] += e
        err = angle_error(reading, truth)
        if err is not None:
            errs[kind].append(err)
        if args.progress and (i + 1) % 100 == 0:
            done = {r: [sum(per[k][r][j] for k in kinds) for j in range(3)] for r in ("pointed", "seats", "die")}
            print(json.dumps({"frames_done": i + 1, **done}), file=sys.stderr, flush=True)
    total = {r: [sum(per[k][r][j] for k in kinds) for j in range(3)] for r in ("pointed", "seats", "die")}
    for kind in kinds:
        print(json.dumps({"kind": kind, **{r: dict(zip(("wrong", "right", "eligible"), v)) for r, v in per[kind].items()},
                          "angle_err_max_deg": round(max(errs[kind]), 2) if errs[kind] else None}))
    all_err = [e for v in errs.values() for e in v]
    summary = {"frames": args.frames, **{r: dict(zip(("wrong", "right", "eligible"), v)) for r, v in total.items()},
               "angle_err_p95_deg": round(float(np.percentile(all_err, 95)), 2) if all_err else None,
               "read_ms_median": round(statistics.median(times) * 1000, 1), "ref_op_ms": round(ref * 1000, 2),
               "read_cpu_ms_median": round(statistics.median(cpu) * 1000, 1),
               "ref_op_cpu_ms": round(reference_op_s(clock=time.thread_time) * 1000, 2),
               "load_average": round(os.getloadavg()[0], 1),
               "machine": machine()}
    print(json.dumps(summary))
    if args.markdown:
        _table(kinds, per, total)
    return 0


def _table(kinds: list[str], per: dict[str, dict[str, list[int]]], total: dict[str, list[int]]) -> None:
    def pct(v: list[int]) -> str:
        return f"{v[1]} / {v[2]} ({100 * v[1] / max(v[2], 1):.0f} %)"
    print("| kind | pointed seat wrong | right | seats wrong | right | die wrong | right |")
    print("|---|---|---|---|---|---|---|")
    for kind in kinds + ["all"]:
        v = total if kind == "all" else per[kind]
        print(f"| {kind} | {v['pointed'][0]} | {pct(v['pointed'])} | {v['seats'][0]} | {pct(v['seats'])} | "
              f"{v['die'][0]} | {pct(v['die'])} |")


def _combine(files: list[Path], markdown: bool) -> int:
    """Add up the per-kind JSON lines of earlier runs' outputs; print the totals (and the
    table with ``markdown``); returns 0."""
    per: dict[str, dict[str, list[int]]] = {}
    frames = 0
    for f in files:
        for line in f.read_text().splitlines():
            if not line.startswith("{"):
                continue
            d = json.loads(line)
            if "kind" in d:
                acc = per.setdefault(d["kind"], {r: [0, 0, 0] for r in ("pointed", "seats", "die")})
                for r in acc:
                    acc[r] = [a + d[r][k] for a, k in zip(acc[r], ("wrong", "right", "eligible"))]
            elif "frames" in d:
                frames += d["frames"]
    kinds = list(per)
    total = {r: [sum(per[k][r][j] for k in kinds) for j in range(3)] for r in ("pointed", "seats", "die")}
    print(json.dumps({"frames": frames, "files": [str(f) for f in files],
                      **{r: dict(zip(("wrong", "right", "eligible"), v)) for r, v in total.items()}}))
    if markdown:
        _table(kinds, per, total)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
