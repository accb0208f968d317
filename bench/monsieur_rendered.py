"""The Monsieur Carrousel reader on rendered frames (issue 12's benchmark): wrong and right
readings of the pointed seat, the seats and the die on N frames of the simulated camera
(:mod:`companion.vision.sim_monsieur`) across light, tilt, blur, noise, hands and glare.

Run on demand (not a test)::

    .venv/bin/python bench/monsieur_rendered.py --frames 2000 [--seed 1] [--markdown]

``--without-roof`` reads every frame as if a hand hid the roof marker (the seats placed by
their own print and the zero mark, the camera from the board plane alone). ``--kinds`` names
the kinds of conditions in turn (default the 11 of ``CONDITION_KINDS``; ``all`` adds
``EXTRA_KINDS``: ``exposure``, a gain on the codes after an sRGB tone curve, dim, noisy and
quantised, or overexposed).

Split across processes (two cores): run each with its own ``--seed`` and ``> FILE``, then
``bench/monsieur_rendered.py --combine FILE1 FILE2 --markdown`` adds their counts up.

Each frame is a new random table (any angle, kids on a random subset of seats, the die flat
or, one time in twenty, cocked) under conditions of one kind, the kinds in turn, through a
lens of one of the ``--hfov`` fields of view in turn (without the roof marker the reader finds
the focal length from the board itself). The totals line also counts the frames whose roof
marker was not read (``no_roof``), those whose seats were placed by their own print, and
those seats' wrong / right / eligible. The reader
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
        EXTRA_KINDS,
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
    ap.add_argument("--hfov", default="52,58,66",
                    help="the cameras' horizontal fields of view (degrees, comma-separated), in turn frame by frame: "
                         "the reader without the roof marker finds the focal length from the board (default 52,58,66)")
    ap.add_argument("--without-roof", action="store_true",
                    help="read every frame as if its roof marker were under a hand (the roof's reading "
                         "replaced by 'not seen'): the seats placed by their own print on every frame")
    ap.add_argument("--kinds", default="",
                    help="kinds of conditions in turn, comma-separated, or 'all' (default: CONDITION_KINDS)")
    ap.add_argument("--combine", nargs="+", type=Path, metavar="FILE",
                    help="add up the outputs of earlier runs (their JSON lines) instead of running")
    args = ap.parse_args(argv)
    if args.combine:
        return _combine(args.combine, args.markdown)
    cv2.setNumThreads(1)
    if args.without_roof:
        import companion.vision.monsieur as monsieur_module
        from companion.vision.monsieur_geometry import read_roof

        def roof_not_seen(geometry, registration, corners_px, **kw):  # type: ignore[no-untyped-def]
            return read_roof(geometry, registration, None, **kw)

        monsieur_module.read_roof = roof_not_seen  # the reader's module looks it up at each read
    ref = reference_op_s()
    renderers = [MonsieurRenderer(hfov_deg=float(v)) for v in args.hfov.split(",")]
    reader = MonsieurReader()
    rng = np.random.default_rng(args.seed)
    if args.kinds == "all":
        kinds = list(CONDITION_KINDS + EXTRA_KINDS)
    elif args.kinds:
        kinds = args.kinds.split(",")
        bad = [k for k in kinds if k not in CONDITION_KINDS + EXTRA_KINDS]
        if bad:
            ap.error(f"--kinds: unknown kind {', '.join(bad)} (known: {', '.join(CONDITION_KINDS + EXTRA_KINDS)}, or all)")
    else:
        kinds = list(CONDITION_KINDS)
    per: dict[str, dict[str, list[int]]] = {k: {r: [0, 0, 0] for r in ("pointed", "seats", "die")} for k in kinds}
    # frames whose roof marker was not read: how many, how many had their seats placed by their
    # print (companion.vision.monsieur_seat_angle), and those seats' wrong / right / eligible
    no_roof = {"frames": 0, "seats_placed": 0, "seats": [0, 0, 0]}
    errs: dict[str, list[float]] = {k: [] for k in kinds}
    times: list[float] = []
    cpu: list[float] = []
    for i in range(args.frames):
        kind = kinds[i % len(kinds)]
        renderer = renderers[i % len(renderers)]
        scene = random_scene(rng, renderer.geometry)
        cond = random_monsieur_conditions(rng, kind)
        image, truth = renderer.render(scene, cond, rng)
        t0, c0 = time.perf_counter(), time.thread_time()
        reading = reader.read(image)
        times.append(time.perf_counter() - t0)
        cpu.append(time.thread_time() - c0)
        scores = compare(reading, truth, reader.seat_margin_deg)
        for name, (w, r, e) in scores.items():
            acc = per[kind][name]
            acc[0] += w
            acc[1] += r
            acc[2] += e
        if reading.status == "ok" and reading.carousel_angle_deg is None:
            no_roof["frames"] += 1
            if "seats placed by their print" in reading.roof_status:
                no_roof["seats_placed"] += 1
                no_roof["seats"] = [a + b for a, b in zip(no_roof["seats"], scores["seats"])]
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
               "no_roof": no_roof, "hfov_deg": args.hfov,
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
    no_roof = {"frames": 0, "seats_placed": 0, "seats": [0, 0, 0]}
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
                got = d.get("no_roof")
                if got:
                    no_roof["frames"] += got["frames"]
                    no_roof["seats_placed"] += got["seats_placed"]
                    no_roof["seats"] = [a + b for a, b in zip(no_roof["seats"], got["seats"])]
    kinds = list(per)
    total = {r: [sum(per[k][r][j] for k in kinds) for j in range(3)] for r in ("pointed", "seats", "die")}
    print(json.dumps({"frames": frames, "files": [str(f) for f in files], "no_roof": no_roof,
                      **{r: dict(zip(("wrong", "right", "eligible"), v)) for r, v in total.items()}}))
    if markdown:
        _table(kinds, per, total)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
