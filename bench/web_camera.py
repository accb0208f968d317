"""The camera on the web page: what a frame costs when a page looks, and what the page weighs.

Run on demand (not a test): ``.venv/bin/python bench/web_camera.py [--seconds 15]``.

1. Per frame a page asks for (``companion/web/camera.py``, on the web server's threads, never the
   referee's loop): the Carrousel reader's overlay drawn and the JPEG encoded, the bytes sent,
   and the set-up page's marker check; each against the reference op timed in the same run.
2. ``companion run --game carrousel --camera sim`` (a subprocess, real time) with no page, one
   camera page, one set-up page open for ``--seconds``: the service's CPU (user + system of the
   process), so that the cost of a page looking is seen against the game's own.
3. Page weight of ``/camera`` and ``/setup`` with a camera (HTML, CSS, JS, ``/api/session``,
   ``/api/status``, ``/api/calibration``; the frame streams counted apart, per frame).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench._common import machine, percentile, reference_op_s

CHROMIUM = "/usr/lib/chromium/chromium"


def per_frame(ref: float, n: int = 200) -> list[str]:
    """Overlay + JPEG and the marker check on simulated 640 x 480 frames."""
    from companion.vision.carrousel import CarrouselReader
    from companion.vision.sim import SimulatedCamera
    from companion.web.camera import CameraView, marker_check

    reader = CarrouselReader()
    cam = SimulatedCamera(seed=1)
    frames = [cam.read().image for _ in range(8)]
    readings = [reader.read(f) for f in frames]

    class Source:
        latest = None

    src = Source()
    src.reader = reader  # type: ignore[attr-defined]
    view = CameraView(src)
    enc, sizes, check = [], [], []
    g = reader.geometry
    for i in range(n):
        src.latest = (float(i), frames[i % 8], readings[i % 8])  # a new frame each time: no cache hit
        t0 = time.perf_counter()
        jpeg, _ = view()
        enc.append(time.perf_counter() - t0)
        sizes.append(len(jpeg))
        t0 = time.perf_counter()
        marker_check(frames[i % 8], g.markers, g.dictionary)
        check.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    for _ in range(n):
        view()  # the same frame for a second page: the cached JPEG
    cached = (time.perf_counter() - t0) / n
    out = []
    for name, xs in (("overlay + JPEG per new frame", enc), ("marker check per new frame", check)):
        med = statistics.median(xs)
        out.append(f"{name}: median {med * 1e3:.2f} ms ({med / ref:.1f} x reference), p99 {percentile(xs, 99) * 1e3:.2f} ms")
    out.append(f"the same frame for another page: {cached * 1e6:.1f} us (cached)")
    out.append(f"JPEG per frame (quality 80): median {statistics.median(sizes) / 1024:.1f} KB "
               f"-> about {3.3 * statistics.median(sizes) / 1024:.0f} KB/s at one frame every 0.3 s")
    return out


def _service(tmp: Path) -> tuple[subprocess.Popen, str]:
    config = tmp / "config.toml"
    config.write_text(f'[service]\npin_factory = "mock"\nannouncers = ["console", "web"]\njournal = "{tmp / "j.db"}"\n'
                      f'[web]\nlisten = "127.0.0.1:0"\n[calibration]\ndir = "{tmp / "cal"}"\n'
                      '[sim]\nmove_time_s = 1.0\n[carrousel]\ndead_end_s = 20.0\n')
    proc = subprocess.Popen([sys.executable, "-m", "companion", "--config", str(config), "run", "--new", "--game",
                             "carrousel", "--camera", "sim", "--speed", "1", "--quiet-moves", "--seed", "5"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    for line in proc.stderr:
        m = re.search(r"the table's page: (http://\S+)", line)
        if m:
            return proc, m.group(1)
    raise SystemExit("the service did not print its page's address")


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def service_cpu(seconds: float, pw) -> list[str]:
    """The service's CPU over ``seconds`` with no page, a camera page, a set-up page."""
    out = []
    for path in (None, "camera", "setup"):
        with tempfile.TemporaryDirectory() as d:
            proc, url = _service(Path(d))
            chromium = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"] if os.geteuid() == 0 else [])
            try:
                if path:
                    page = chromium.new_page()
                    page.goto(url + path)
                    page.wait_for_selector("#conn:text('live')")
                c0, t0 = _cpu_s(proc.pid), time.monotonic()
                while time.monotonic() - t0 < seconds:
                    if proc.poll() is not None:
                        raise SystemExit("the game ended before the measure did: use fewer --seconds")
                    time.sleep(0.2)
                cpu, wall = _cpu_s(proc.pid) - c0, time.monotonic() - t0
                out.append(f"service CPU with {('a /' + path + ' page') if path else 'no page'}: {cpu:.2f} s over "
                           f"{wall:.1f} s ({100 * cpu / wall:.1f} % of one core)")
            finally:
                chromium.close()
                proc.terminate()
                proc.wait(10)
    return out


def page_weight(pw) -> list[str]:
    """Bytes /camera and /setup load with a camera, the frame streams apart."""
    out = []
    with tempfile.TemporaryDirectory() as d:
        proc, url = _service(Path(d))
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"] if os.geteuid() == 0 else [])
        try:
            for path in ("camera", "setup"):
                page = chromium.new_page()
                sizes: dict[str, int] = {}
                external: list[str] = []

                def on_response(response, sizes=sizes, external=external):
                    if not response.url.startswith(url):
                        external.append(response.url)
                    elif "/api/events" not in response.url and "/api/camera" not in response.url:
                        try:
                            sizes[response.url] = len(response.body())
                        except Exception:
                            pass

                page.on("response", on_response)
                page.goto(url + path)
                page.wait_for_timeout(2000)
                out.append(f"page /{path} with a camera: {sum(sizes.values()) / 1024:.1f} KB in {len(sizes)} files"
                           + (f"; FROM OUTSIDE: {external}" if external else "; nothing from the internet")
                           + "; frames apart (above)")
                page.close()
        finally:
            chromium.close()
            proc.terminate()
            proc.wait(10)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15.0, help="real seconds of each service-CPU run")
    args = parser.parse_args()
    ref = reference_op_s()
    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.2f}")
    print(f"reference op (cvtColor BGR->Lab 640x480): {ref * 1e6:.0f} us")
    for line in per_frame(ref):
        print(line, flush=True)
    if not os.path.exists(CHROMIUM):
        raise SystemExit(f"{CHROMIUM} is missing: apt-get install -y --no-install-recommends chromium fonts-liberation libatomic1")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        for line in service_cpu(args.seconds, pw) + page_weight(pw):
            print(line, flush=True)
    print(f"reference op again: {reference_op_s() * 1e6:.0f} us; load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
