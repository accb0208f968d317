"""Where the Carrousel camera loop's memory goes: resident memory after each step, one process.

Usage: python bench/loop_memory.py [--video FILE] [--python PY ...] [--frames 300] [--no-bytecode]

In a fresh process of each interpreter (``--python``: e.g. ``.venv/bin/python`` and
``.ci/.venv-pi-stack/bin/python``), the steps of ``bench/vision_loop.py``'s loop one at a time on
one thread: the interpreter, ``companion`` (its process settings), numpy, OpenCV, the loop's
modules one by one, the video file opened (FFmpeg), the reader built (its calibration files), the
first frame decoded, OpenCV's first Lab conversion (its tables, which any Lab conversion pays),
the first full registration (marker detection), the first read, then ``--frames`` more frames
decoded and read. After each step: ``VmRSS`` and its growth, the part of it that is file pages
(code of the libraries) and anonymous memory (``/proc/self/smaps_rollup``), and the mappings that
grew most (``/proc/self/smaps``, by library; anonymous memory as ``[anon]`` and ``[heap]``).
Last, the peak (``VmHWM``) and the Python objects alive (``tracemalloc`` is not used: it would
add its own memory; ``sys.getallocatedblocks``).

The threads of the real loop (capture and reader) and the frame arrays they keep are in
``bench/vision_loop.py``'s peak, not here. The video is bench/service_cpu.py's Carrousel table
(written when no ``--video`` is given). Bytecode cached as an installed service has it
(``--no-bytecode``: compiled at start). Issue 15: the loop's peak under 80 MB.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHILD = r"""
import re, sys, time

def mappings():
    out, name = {}, None
    with open("/proc/self/smaps") as f:
        for line in f:
            if re.match(r"[0-9a-f]+-[0-9a-f]+ ", line):
                parts = line.split()
                name = parts[5].rsplit("/", 1)[-1] if len(parts) > 5 else "[anon]"
            elif line.startswith("Rss:"):
                out[name] = out.get(name, 0) + int(line.split()[1])
    return out

def rollup():
    with open("/proc/self/smaps_rollup") as f:
        d = {line.split()[0]: int(line.split()[1]) for line in f if line.rstrip().endswith("kB")}
    return d.get("Rss:", 0) / 1024, d.get("Anonymous:", 0) / 1024

def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key + ":")) / 1024

last = [status("VmRSS"), mappings()]

def step(name):
    rss, (total, anon) = status("VmRSS"), rollup()
    maps = mappings()
    grew = sorted(((v - last[1].get(k, 0)) / 1024, k) for k, v in maps.items())[::-1][:3]
    top = ", ".join(f"{k} {d:+.1f}" for d, k in grew if d >= 0.2)
    print(f"| {name} | {rss:.1f} | {rss - last[0]:+.1f} | {total - anon:.1f} / {anon:.1f} | {top} |", flush=True)
    last[:] = [rss, maps]

video, frames_n = sys.argv[1], int(sys.argv[2])
print("| step | VmRSS MB | growth | file / anonymous MB | grew most (MB) |")
print("|---|---|---|---|---|")
step("the interpreter")
import companion
step("companion (one BLAS thread, malloc arenas, no huge pages)")
import numpy as np
step(f"numpy {np.__version__}")
import cv2
step(f"OpenCV {cv2.__version__}")
import companion.vision.colour
step("companion.vision.colour")
import companion.vision.registration
step("companion.vision.registration")
import companion.vision.carrousel
step("companion.vision.carrousel")
from companion.sources.carrousel_camera import CarrouselCameraSource
from companion.vision.frames import OpenCVSource
step("companion.sources.carrousel_camera, vision.frames")
source = OpenCVSource(video)
step("the video file opened (FFmpeg)")
camera = CarrouselCameraSource(source, players=("Ana", "Ben", "Cleo", "Dev"), settle_s=0.5)
step("the reader built (calibration files)")
frame = source.read().image
step("the first frame decoded")
cv2.cvtColor(np.zeros((1, 8, 3), np.float32), cv2.COLOR_LBGR2Lab)
step("OpenCV's first Lab conversion (its tables)")
camera.reader.registrar.register(frame)
step("the first full registration (marker detection)")
camera.process(0.0, frame)
step("the first read")
image = frame
for i in range(frames_n):
    got = source.read_into(image)
    if got is None:
        source.close()
        source = OpenCVSource(video)
        got = source.read_into(image)
    image = got.image
    camera.process((i + 1) / 30, image)
    if i + 1 in (30, frames_n):
        step(f"{i + 1} more frames read")
print(f"peak (VmHWM) {status('VmHWM'):.1f} MB; Python's allocated blocks {sys.getallocatedblocks()}; "
      f"huge pages {'off' if companion.huge_pages_disabled else 'as the system has them'}, malloc arenas "
      f"{'limited' if companion.malloc_arenas_limited else 'not limited'}; status {camera.status!r}")
"""


def main() -> int:
    """Run the steps (see the module text) in one child process per interpreter; print a table each."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--video", help="an existing video to use instead of writing one")
    ap.add_argument("--seconds", type=float, default=14.0, help="of video to write")
    ap.add_argument("--python", nargs="+", default=[sys.executable], help="interpreters, one process each")
    ap.add_argument("--frames", type=int, default=300, help="frames read after the first")
    ap.add_argument("--no-bytecode", action="store_true", help="compile the modules at start")
    args = ap.parse_args()

    from bench._common import child_env, machine
    from bench.service_cpu import given_or_written_video

    with tempfile.TemporaryDirectory() as tmp:
        video = given_or_written_video(args.video, tmp, args.seconds)
        env = child_env(None if args.no_bytecode else Path(tmp) / "bytecode")
        for python in args.python:
            # a first run fills the bytecode cache (as an installed service has it), unreported
            subprocess.run([python, "-c", CHILD, str(video), "1"], cwd=ROOT, env=env, capture_output=True,
                           check=False)
            print(f"\n{python}:")
            out = subprocess.run([python, "-c", CHILD, str(video), str(args.frames)], cwd=ROOT, env=env,
                                 capture_output=True, text=True, check=False)
            print(out.stdout, end="")
            if out.returncode != 0:
                raise SystemExit(f"the loop failed ({python}):\n{out.stderr[-3000:]}")
    print(f"machine: {machine()}; {'no bytecode cache' if args.no_bytecode else 'bytecode cached'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
