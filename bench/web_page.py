"""The table's web page: a call to the page's DOM, 20 browsers at once, and the page weight.

Run on demand (not a test): ``.venv/bin/python bench/web_page.py [--seconds 20] [--browsers 20]``.

1. ``companion run`` (a subprocess) plays a fast simulated Carrousel game (real time, seed 5, a game of about 97 s;
   a move every 1 s of game time, so a call every second or so) for ``--seconds`` once
   the browsers are connected with
   the page on 127.0.0.1:0. Headless Chromium (Debian's, driven by Playwright) opens the table
   page; each call's time from the server's publish (``sent_ms``, wall clock) to the page's DOM
   updated (``Date.now()`` after the handler) is collected in the page (``window.__latencies``).
   Browser and server share one clock (same machine).
2. The same with 20 browser pages at once (one Chromium, 20 contexts): the service's CPU
   (user + system time of the finished process, ``getrusage(RUSAGE_CHILDREN)``) and peak memory (``VmHWM``), against
   the same game with no browser; the call-to-DOM figures again.
3. The web announcer's own cost per call on the service loop (``WebAnnouncer.announce``: the
   sentence, the summary, one JSON encoding, the hand-off to each browser's queue) with 0 and 20
   streams connected, which is what could change the refereeing latency.
4. The page weight: every byte each page loads (HTML, CSS, JS, the session JSON), the live
   stream and camera frames left out.

Reference operation timed in the same run: one ``cv2.cvtColor`` BGR -> Lab of a 640 x 480 frame.
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

from bench._common import machine, percentile  # noqa: E402

CHROMIUM = "/usr/lib/chromium/chromium"


def reference_op_s(repeat: int = 300) -> float:
    """Median seconds of one cv2.cvtColor BGR -> Lab of a 640 x 480 frame."""
    import cv2
    import numpy as np

    frame = np.random.default_rng(1).integers(0, 255, (480, 640, 3), dtype=np.uint8)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        cv2.cvtColor(frame, cv2.COLOR_BGR2Lab)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _peak_rss_mb(pid: int) -> float:
    m = re.search(r"VmHWM:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
    return int(m.group(1)) / 1024 if m else float("nan")


def _service(tmp: Path, seconds: float) -> tuple[subprocess.Popen, str]:
    config = tmp / "config.toml"
    config.write_text(f'[service]\npin_factory = "mock"\nannouncers = ["console", "web"]\njournal = "{tmp / "j.db"}"\n'
                      '[web]\nlisten = "127.0.0.1:0"\n[sim]\nmove_time_s = 1.0\n[carrousel]\ndead_end_s = 20.0\n')
    proc = subprocess.Popen([sys.executable, "-m", "companion", "--config", str(config), "run", "--new",
                             "--speed", "1", "--quiet-moves", "--seed", "5"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = ""
    assert proc.stderr is not None
    for line in proc.stderr:
        m = re.search(r"the table's page: (http://\S+)", line)
        if m:
            url = m.group(1)
            break
    if not url:
        raise SystemExit("the service did not print its page's address")
    return proc, url


def run_game(seconds: float, browsers: int, pw) -> dict:
    """One fast game of ``seconds`` real seconds with ``browsers`` table pages open."""
    with tempfile.TemporaryDirectory() as d:
        proc, url = _service(Path(d), seconds)
        chromium = None
        pages = []
        try:
            if browsers:
                chromium = pw.chromium.launch(executable_path=CHROMIUM,
                                              args=["--no-sandbox"] if os.geteuid() == 0 else [])
                for _ in range(browsers):
                    page = chromium.new_context().new_page()
                    page.goto(url)
                    pages.append(page)
                for page in pages:
                    page.wait_for_selector("#conn:text('live')")
            t0 = time.monotonic()
            rss = float("nan")
            while time.monotonic() - t0 < seconds:  # the peak memory is read while it lives
                if proc.poll() is not None:
                    raise SystemExit("the game ended before the measure did: use fewer --seconds")
                rss = _peak_rss_mb(proc.pid)
                time.sleep(0.5)
            elapsed = time.monotonic() - t0
            latencies = []
            for page in pages:
                latencies += page.evaluate("window.__latencies")
        finally:
            if proc.poll() is None:
                proc.terminate()  # SIGTERM: the service stops cleanly (the game stays resumable)
                proc.wait(10)
            if chromium is not None:
                chromium.close()
    return {"latencies": latencies, "elapsed_s": elapsed, "rss": rss}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="real seconds of each game")
    parser.add_argument("--browsers", type=int, default=20)
    args = parser.parse_args()
    if not os.path.exists(CHROMIUM):
        raise SystemExit(f"{CHROMIUM} is missing: apt-get install -y --no-install-recommends chromium fonts-liberation libatomic1")
    from playwright.sync_api import sync_playwright

    ref = reference_op_s()
    print(f"machine: {machine()}")
    print(f"reference op (cvtColor BGR->Lab 640x480): {ref * 1e6:.0f} us")
    with sync_playwright() as pw:
        for n in (0, 1, args.browsers):
            cpu_before = resource_children()
            r = run_game(args.seconds, n, pw)
            cpu = resource_children() - cpu_before
            lat = r["latencies"]
            line = f"{n:2d} browser(s): service CPU {cpu:.2f} s over {r['elapsed_s']:.1f} s ({100 * cpu / r['elapsed_s']:.1f} %)"
            line += f", peak memory {r.get('rss', float('nan')):.0f} MB" if "rss" in r else ""
            if lat:
                line += (f"; call-to-DOM over {len(lat)} calls: median {statistics.median(lat):.1f} ms, "
                         f"p99 {percentile(lat, 99):.1f} ms, max {max(lat):.1f} ms")
            print(line, flush=True)
        print(announce_cost(ref))
        print(page_weight(pw))


def resource_children() -> float:
    """CPU seconds (user + system) of the finished child processes so far."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def announce_cost(ref: float, calls: int = 3000) -> str:
    """The web announcer's cost per call on the loop's thread, with 0 and 20 streams."""
    import asyncio
    import threading

    from companion.clock import ManualClock
    from companion.games import referee_for
    from companion.games.carrousel import Point
    from companion.service import Service
    from companion.web import Hub, WebAnnouncer

    out = []
    for streams in (0, 20):
        hub = Hub()
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, daemon=True)
        thread.start()
        subs = [hub.subscribe(loop) for _ in range(streams)]
        referee = referee_for("carrousel")
        service = Service(referee, ManualClock())
        web = WebAnnouncer(hub, "carrousel", ["Ana", "Ben", "Cleo", "Dev"])
        web.attach(service)
        summary = {"phase": "playing", "scores": {"Ana": 3, "Ben": 2, "Cleo": 1, "Dev": 0},
                   "cards": {p: ["red", "blue", "green"] for p in ("Ana", "Ben", "Cleo", "Dev")},
                   "position": "krgb..y", "target": 10, "winner": None}
        call = Point(t=1.0, player="Ana", card=("red", "blue", "green"), score=3, next_card=("black", "red", "blue"),
                     owner="Ana")
        times = []
        for _ in range(calls):
            t0 = time.perf_counter()
            web.announce(call, summary)
            times.append(time.perf_counter() - t0)
            for s in subs:  # keep the queues from overflowing: the browsers read
                loop.call_soon_threadsafe(lambda s=s: [s.queue.get_nowait() for _ in range(s.queue.qsize())])
        loop.call_soon_threadsafe(loop.stop)
        thread.join(2)
        med = statistics.median(times)
        out.append(f"web announcer per call with {streams:2d} streams: median {med * 1e6:.0f} us "
                   f"({med / ref:.2f} x reference), p99 {percentile(times, 99) * 1e6:.0f} us")
    return "\n".join(out)


def page_weight(pw) -> str:
    """Bytes each page loads (its HTML, CSS, JS, /api/session, /api/status...), streams left out."""
    with tempfile.TemporaryDirectory() as d:
        proc, url = _service(Path(d), 60)
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"] if os.geteuid() == 0 else [])
        lines = []
        try:
            for path in ("", "camera", "entries", "correct", "game", "kids", "setup", "screen"):
                page = chromium.new_page()
                sizes: dict[str, int] = {}
                external: list[str] = []

                def on_response(response, sizes=sizes, external=external):
                    if not response.url.startswith(url):
                        external.append(response.url)
                        return
                    if "/api/events" in response.url or "/api/camera" in response.url:
                        return
                    try:
                        sizes[response.url] = len(response.body())
                    except Exception:
                        pass

                page.on("response", on_response)
                page.goto(url + path)
                page.wait_for_load_state("networkidle") if path in ("screen",) else page.wait_for_timeout(1500)
                total = sum(sizes.values())
                lines.append(f"page /{path}: {total / 1024:.1f} KB in {len(sizes)} files"
                             + (f"; FROM OUTSIDE: {external}" if external else "; nothing from the internet"))
                page.close()
        finally:
            chromium.close()
            proc.terminate()
            proc.wait(10)
    return "\n".join(lines)


if __name__ == "__main__":
    main()
