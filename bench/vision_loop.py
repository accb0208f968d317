"""CPU and peak memory of the Carrousel camera loop alone, on a 30 fps video file as the camera.

Usage: python bench/vision_loop.py [--rounds 3] [--window-s 8] [--video FILE]
       [--python PY ...] [--no-bytecode] [--env KEY=VALUE ...]

Writes (or reuses, ``--video``) the Carrousel table video of bench/service_cpu.py (a rendered
table, four cards, a legal move every 1.3 s, fresh sensor noise in every frame, Motion JPEG
640 x 480 at 30 fps), then runs, in a fresh Python process per round, what ``companion run``
runs for the camera: ``CarrouselCameraSource`` with the shipped calibration, on
``OpenCVSource`` (the file), ``frame_period_s`` 1/30 s (every frame at the camera's rate),
capture and reader on their threads. Over ``--window-s`` after 2 s of warm-up it measures:

* the process's CPU time (every thread; ``resource.getrusage``) per wall second, and per
  thread (``/proc/self/task``): the capture thread (decoding), the reading thread (the reader
  and the loop), the others (the main thread, OpenCV's and FFmpeg's workers);
* the frames captured and read (a frame the reader had no time for is dropped, so "read every
  frame" is checked, not assumed) and the frame arrays the capture had decoded into;
* the peak resident memory of the process (``VmHWM``) at the end of the window, before
  anything else runs in the process (imports, calibration, the loop; not ``ru_maxrss``, which
  a child started by this process inherits from it; the bench's own ``statistics`` module,
  0.3-0.5 MB, is imported after it). ``bench/loop_memory.py`` says where it goes, step by step.

Then, in the same process, the reference operation (one ``cv2.cvtColor`` BGR to Lab of a
640 x 480 frame, CPU time of the thread) and the decoding of one frame alone. Rounds are
interleaved between the interpreters given (``--python``: e.g. ``.venv/bin/python`` and
``.ci/.venv-pi-stack/bin/python``, the Pi's stack) and a first, unreported round of each warms
the files and the bytecode. Medians over the rounds are printed with the load average.

Bytecode: an installed service loads its modules' cached bytecode (``pip`` and ``compileall``
write it; so does the first run of a command), so the children run with a bytecode cache of
their own (``PYTHONPYCACHEPREFIX`` in a temporary folder, filled by the warm-up round; the
working tree is left alone). ``--no-bytecode`` runs them with ``PYTHONDONTWRITEBYTECODE=1``
and no cache instead: the companion's modules compiled at every start (2.5 MB more here).

Targets (issue 15): under 15 % of one core, peak memory under 80 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHILD = r"""
import companion  # first, as the companion command imports it (one BLAS thread, the malloc arenas, no huge pages)
import json, os, resource, sys, time  # the bench's statistics module after the peak is read (not the loop's)
import cv2, numpy as np
from companion.clock import MonotonicClock
from companion.sources.carrousel_camera import CarrouselCameraSource
from companion.vision.frames import OpenCVSource

def threads_cpu():
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[int(tid)] = (int(fields[11]) + int(fields[12])) / tick
    return out

def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key + ":")) / 1024

video, window_s = sys.argv[1], float(sys.argv[2])
frames = OpenCVSource(video)
src = CarrouselCameraSource(frames, players=("Ana", "Ben", "Cleo", "Dev"), settle_s=0.5,
                            frame_period_s=1 / 30)
emitted = []
src.start(emitted.append, MonotonicClock())
time.sleep(2.0)
r0, w0, c0, k0, t0 = (resource.getrusage(resource.RUSAGE_SELF), time.monotonic(), src.frames_captured,
                      src.frames_read, threads_cpu())
time.sleep(window_s)
r1, w1, c1, k1, t1 = (resource.getrusage(resource.RUSAGE_SELF), time.monotonic(), src.frames_captured,
                      src.frames_read, threads_cpu())
peak_mb, rss_mb, n_threads = status("VmHWM"), status("VmRSS"), len(t1)
capture_id, reader_id = src._capture_thread.native_id, src._thread.native_id
arrays = src.frame_arrays
src.stop()
import statistics
per = {tid: cpu - t0.get(tid, 0.0) for tid, cpu in t1.items()}
frame = np.random.default_rng(0).integers(0, 256, (480, 640, 3), dtype=np.uint8)
ts = []
for _ in range(200):  # CPU time of the thread, as the loop's CPU is counted
    a = time.thread_time(); cv2.cvtColor(frame, cv2.COLOR_BGR2Lab); ts.append(time.thread_time() - a)
dec = OpenCVSource(video)
buf = dec.read().image
d0 = time.thread_time()
for _ in range(60):
    dec.read_into(buf)
decode_s = (time.thread_time() - d0) / 60
dec.close()
cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
print(json.dumps({"cpu": cpu / (w1 - w0), "cpu_s": cpu, "captured": c1 - c0, "read": k1 - k0, "wall": w1 - w0,
                  "capture_s": per.get(capture_id, 0.0), "reader_s": per.get(reader_id, 0.0),
                  "threads": n_threads, "arrays": arrays, "peak_mb": peak_mb, "rss_mb": rss_mb,
                  "ref_s": statistics.median(ts), "decode_s": decode_s, "observations": len(emitted),
                  "status": src.status, "arenas_limited": companion.malloc_arenas_limited,
                  "huge_pages_off": companion.huge_pages_disabled,
                  "opencv": cv2.__version__, "numpy": np.__version__}))
"""


def run_child(python: str, video: Path, window_s: float, env: dict[str, str]) -> dict:
    """One round: the loop in a fresh process of ``python``; its measures (see the module doc)."""
    out = subprocess.run([python, "-c", CHILD, str(video), str(window_s)], cwd=ROOT, env=env,
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"the camera loop failed ({python}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def row(r: dict) -> str:
    """One result as a table row (figures a frame read are CPU time; ``ref``: the reference op)."""
    ref = r["ref_s"]
    read = max(r["read"], 1)
    per_frame = r["cpu_s"] / read
    every = r["cpu"] * r["captured"] / read  # had every captured frame been read
    other = r["cpu_s"] - r["capture_s"] - r["reader_s"]
    return (f"| CPU {r['cpu'] * 100:.1f} % (every frame {every * 100:.1f} %) | {r['read']} / {r['captured']} read "
            f"| {per_frame * 1e3:.2f} ms a frame ({per_frame / ref:.2f} ref): capture {r['capture_s'] / read * 1e3:.2f}, "
            f"reader {r['reader_s'] / read * 1e3:.2f}, other threads {other / read * 1e3:.2f} "
            f"| decoding alone {r['decode_s'] * 1e3:.2f} ms ({r['decode_s'] / ref:.2f} ref) "
            f"| peak {r['peak_mb']:.1f} MB | {r['arrays']} frame arrays, {r['threads']} threads |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=14.0, help="of video to write")
    ap.add_argument("--window-s", type=float, default=8.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--video", help="an existing video to use instead of writing one")
    ap.add_argument("--python", nargs="+", default=[sys.executable], help="interpreters, one child each a round")
    ap.add_argument("--no-bytecode", action="store_true", help="compile the modules at every start")
    ap.add_argument("--env", nargs="*", default=[], metavar="KEY=VALUE", help="more environment for the children")
    args = ap.parse_args()

    from bench._common import child_env, machine
    from bench.service_cpu import given_or_written_video

    with tempfile.TemporaryDirectory() as tmp:
        video = given_or_written_video(args.video, tmp, args.seconds)
        env = child_env(None if args.no_bytecode else Path(tmp) / "bytecode")
        env.update(kv.split("=", 1) for kv in args.env)
        load0 = os.getloadavg()
        for python in args.python:  # warm-up: files, bytecode
            run_child(python, video, 1.0, env)
        results: dict[str, list[dict]] = {p: [] for p in args.python}
        for rnd in range(args.rounds):
            for python in args.python:
                r = run_child(python, video, args.window_s, env)
                results[python].append(r)
                print(f"round {rnd + 1}, OpenCV {r['opencv']}, numpy {r['numpy']} {row(r)}", flush=True)
        load1 = os.getloadavg()
    print(f"machine: {machine()}; load average {load0[0]:.1f} before, {load1[0]:.1f} after; "
          f"{'no bytecode cache' if args.no_bytecode else 'bytecode cached'}"
          f"{'; ' + ' '.join(args.env) if args.env else ''}")
    for python, rs in results.items():
        med = {k: statistics.median(r[k] for r in rs) for k in ("cpu", "cpu_s", "capture_s", "reader_s", "decode_s",
                                                                   "ref_s", "peak_mb", "read", "captured")}
        med.update(wall=rs[0]["wall"], threads=rs[0]["threads"], arrays=max(r["arrays"] for r in rs))
        every = statistics.median(r["cpu"] * r["captured"] / max(r["read"], 1) for r in rs)
        peak_max = max(r["peak_mb"] for r in rs)
        print(f"median of {len(rs)}, OpenCV {rs[0]['opencv']}, numpy {rs[0]['numpy']} ({python}), malloc arenas "
              f"{'limited' if rs[0]['arenas_limited'] else 'not limited'}, huge pages "
              f"{'off' if rs[0]['huge_pages_off'] else 'as the system has them'}: {row(med)}")
        print(f"  CPU every frame {every * 100:.1f} % ({'met' if every < 0.15 else 'NOT met'}: < 15 %); peak memory "
              f"{med['peak_mb']:.1f} MB, at most {peak_max:.1f} ({'met' if peak_max < 80 else 'NOT met'}: < 80 MB); "
              f"observations {rs[-1]['observations']}, status {rs[-1]['status']!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
