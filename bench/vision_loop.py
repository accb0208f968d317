"""CPU and peak memory of the Carrousel camera loop alone, on a 30 fps video file as the camera.

Usage: python bench/vision_loop.py [--seconds 12] [--window-s 8] [--video FILE]

Writes (or reuses, ``--video``) the Carrousel table video of bench/service_cpu.py (a rendered
table, four cards, a legal move every 1.3 s, fresh sensor noise in every frame, Motion JPEG
640 x 480 at 30 fps), then runs, in a fresh Python process, what ``companion run`` runs for the
camera: ``CarrouselCameraSource`` with the shipped calibration, on ``OpenCVSource`` (the file),
``frame_period_s`` 1/30 s (every frame at the camera's rate), capture and reader on their
threads. Over ``--window-s`` after 2 s of warm-up it measures the process's CPU time (every
thread; ``resource.getrusage``) per wall second, the frames captured and read (a frame the
reader had no time for is dropped, so "read every frame" is checked, not assumed) and the
peak resident memory of the process (``VmHWM``: imports, calibration, the loop; not
``ru_maxrss``, which a child started by this process inherits from it). The
reference operation (one ``cv2.cvtColor`` BGR to Lab of a 640 x 480 frame) is timed in the same
process. Targets (issue 15): under 15 % of one core, peak memory under 80 MB.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHILD = r"""
import companion  # first, as the companion command imports it: it sets one BLAS thread
import json, resource, statistics, sys, time
import cv2, numpy as np
from companion.clock import MonotonicClock
from companion.sources.carrousel_camera import CarrouselCameraSource
from companion.vision.frames import OpenCVSource

video, window_s = sys.argv[1], float(sys.argv[2])
frames = OpenCVSource(video)
src = CarrouselCameraSource(frames, players=("Ana", "Ben", "Cleo", "Dev"), settle_s=0.5,
                            frame_period_s=1 / 30)
emitted = []
src.start(emitted.append, MonotonicClock())
time.sleep(2.0)
r0, w0, c0, k0 = resource.getrusage(resource.RUSAGE_SELF), time.monotonic(), frames._index, src.frames_read
time.sleep(window_s)
r1, w1, c1, k1 = resource.getrusage(resource.RUSAGE_SELF), time.monotonic(), frames._index, src.frames_read
src.stop()
frame = np.random.default_rng(0).integers(0, 256, (480, 640, 3), dtype=np.uint8)
ts = []
for _ in range(200):  # CPU time of the thread, as the loop's CPU is counted
    t0 = time.thread_time(); cv2.cvtColor(frame, cv2.COLOR_BGR2Lab); ts.append(time.thread_time() - t0)
dec = OpenCVSource(video)
buf = dec.read().image
d0 = time.thread_time()
for _ in range(60):
    dec.read_into(buf)
decode_s = (time.thread_time() - d0) / 60
dec.close()
cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(json.dumps({"cpu": cpu / (w1 - w0), "captured": c1 - c0, "read": k1 - k0, "wall": w1 - w0,
                  "peak_mb": hwm / 1024, "ref_s": statistics.median(ts), "decode_s": decode_s,
                  "observations": len(emitted), "status": src.status}))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=12.0, help="of video to write")
    ap.add_argument("--window-s", type=float, default=8.0)
    ap.add_argument("--video", help="an existing video to use instead of writing one")
    args = ap.parse_args()
    import cv2
    import numpy as np

    from bench._common import machine
    from bench.service_cpu import carrousel_video

    with tempfile.TemporaryDirectory() as tmp:
        video = Path(args.video) if args.video else Path(tmp) / "carrousel.avi"
        if not args.video:
            t0 = time.monotonic()
            n = carrousel_video(video, args.seconds)
            print(f"{n} frames of video written in {time.monotonic() - t0:.0f} s", flush=True)
        out = subprocess.run([sys.executable, "-c", CHILD, str(video), str(args.window_s)], cwd=ROOT,
                             capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"the camera loop failed:\n{out.stderr[-3000:]}")
    r = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"machine: {machine()}; OpenCV {cv2.__version__}, numpy {np.__version__}")
    print(f"reference op (cvtColor BGR->Lab 640x480, in the loop's process, CPU time): {r['ref_s'] * 1e3:.2f} ms")
    per_frame = r["cpu"] * r["wall"] / max(r["read"], 1)
    every = r["cpu"] * r["captured"] / max(r["read"], 1)  # had every captured frame been read
    print(f"| camera loop, 30 fps file | CPU {r['cpu'] * 100:.1f} % of one core | {r['read']} of "
          f"{r['captured']} frames read in {r['wall']:.1f} s | {per_frame * 1e3:.2f} ms CPU a frame read "
          f"({per_frame / r['ref_s']:.2f} ref), of which decoding {r['decode_s'] * 1e3:.2f} ms "
          f"({r['decode_s'] / r['ref_s']:.2f} ref) | every frame: {every * 100:.1f} % "
          f"({'met' if every < 0.15 else 'NOT met'}: < 15 %) | peak memory {r['peak_mb']:.0f} MB "
          f"({'met' if r['peak_mb'] < 80 else 'NOT met'}: < 80 MB) |")
    print(f"observations emitted: {r['observations']}; status: {r['status']!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
