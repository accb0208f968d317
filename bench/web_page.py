"""The table's web page: a call to the page's DOM, 20 browsers at once, and the page weight.

Run on demand (not a test): ``.venv/bin/python bench/web_page.py [--seconds 20] [--browsers 20]``.

1. ``companion run`` (a subprocess) plays a fast simulated Carrousel game (real time, seed 5, a game of about 97 s,
   the next one started at once when it ends; a move every 1 s of game time, so a call every second or so) for
   ``--seconds`` once
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
5. The refereeing latency with 0 and with 20 browsers on the table page, same run
   (:func:`referee_latency`): the service loop of ``companion run`` in this process (the real
   monotonic clock, the SQLite journal on disk, gpiozero claim buttons, LEDs and buzzer on
   MockFactory pins, the ``web`` announcer and the page's server on 127.0.0.1:0), a Carrousel game
   driven as fast as bench/claim_latency.py drives it (a board, then a claim press, every few
   milliseconds: about 3 calls to the pages per press). Per press: the button's pin driven low to
   the LED lit (the lights announcer returned, as bench/claim_latency.py) and to every announcer
   told (the ``web`` one, after the lights, included); the process's CPU time, its peak memory,
   and the call-to-DOM figures of the 20 pages beside it.

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
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import machine, percentile, reference_op_s  # noqa: E402

CHROMIUM = "/usr/lib/chromium/chromium"
#: CPUs the browsers (and the plain event-stream readers) run on with ``--apart``; None: anywhere.
CLIENT_CPUS: set[int] | None = None


def _chromium() -> str:
    """The browser to launch: Chromium itself, or with ``--apart`` a wrapper that pins it (and every
    process it starts) to :data:`CLIENT_CPUS`, as the players' phones and tablets are not the Pi."""
    if CLIENT_CPUS is None:
        return CHROMIUM
    wrapper = Path(tempfile.gettempdir()) / f"chromium-on-{'-'.join(map(str, sorted(CLIENT_CPUS)))}.sh"
    wrapper.write_text(f"#!/bin/sh\nexec taskset -c {','.join(map(str, sorted(CLIENT_CPUS)))} {CHROMIUM} \"$@\"\n")
    wrapper.chmod(0o755)
    return str(wrapper)


def _peak_rss_mb(pid: int) -> float:
    m = re.search(r"VmHWM:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
    return int(m.group(1)) / 1024 if m else float("nan")


def _service(tmp: Path, seconds: float) -> tuple[subprocess.Popen, str]:
    config = tmp / "config.toml"
    config.write_text(f'[service]\npin_factory = "mock"\nannouncers = ["console", "web"]\njournal = "{tmp / "j.db"}"\n'
                      '[web]\nlisten = "127.0.0.1:0"\n[sim]\nmove_time_s = 1.0\n[carrousel]\ndead_end_s = 20.0\n')
    proc = subprocess.Popen([sys.executable, "-m", "companion", "--config", str(config), "run", "--new",
                             "--speed", "1", "--quiet-moves", "--seed", "5", "--next-game", "wait"],
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
    # Its log goes on on standard error: read it, so that a full pipe never stops the service.
    threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
    return proc, url


def _next_game(tmp: Path) -> None:
    """Start the next game when the service waits for one (refused, and ignored, while one is played)."""
    from companion.sources.entries import request, socket_path_for

    try:
        request(socket_path_for(tmp / "j.db"), {"control": "new_game"}, timeout_s=2.0)
    except (ConnectionError, TimeoutError, ValueError):
        pass


def run_game(seconds: float, browsers: int, pw) -> dict:
    """One fast game of ``seconds`` real seconds with ``browsers`` table pages open."""
    with tempfile.TemporaryDirectory() as d:
        proc, url = _service(Path(d), seconds)
        chromium = None
        pages = []
        try:
            if browsers:
                chromium = pw.chromium.launch(executable_path=_chromium(),
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
                    raise SystemExit("the service stopped before the measure ended")
                rss = _peak_rss_mb(proc.pid)
                _next_game(Path(d))  # a game ended (pages are slow to open on a loaded machine): the next one
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


class _Probe:
    """An announcer that records when the judgement of a claim (the first call that is not a
    board's: point, lucky_bird, penalty, claim_too_late...) reaches it."""

    BOARD = ("move", "illegal_move", "game_started", "dead_end", "dead_end_cleared", "countdown")

    def __init__(self):
        self.done = threading.Event()
        self.at = 0.0

    def announce(self, call, summary):
        if call.TYPE not in self.BOARD and not self.done.is_set():
            self.at = time.perf_counter()
            self.done.set()

    def close(self):
        pass


def _sse_readers(url: str, n: int) -> None:
    """``n`` plain server-sent-event readers of ``url`` (threads of this process, no page drawn):
    the server's side of ``n`` browsers without their rendering. Runs until killed."""
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)

    def read() -> None:
        conn = http.client.HTTPConnection(parts.hostname, parts.port)
        conn.request("GET", "/api/events", headers={"accept": "text/event-stream"})
        response = conn.getresponse()
        while response.read1(65536):
            pass

    threads = [threading.Thread(target=read, daemon=True) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def referee_latency(browsers: int, presses: int, pw, readers: int = 0, every_s: float = 0.1) -> dict:
    """Claim press to the call, on the service loop with ``browsers`` table pages streaming.

    ``readers``: plain event-stream readers in a subprocess instead of browsers (the server's
    work for that many streams without Chromium's rendering on the same cores). ``every_s``: one
    press (with its board) every so many seconds at most (0.1 s: about 25 calls a second to each
    page, some 25 times a simulated Carrousel game at ``--speed 1``).

    Returns ``{"led_ms", "told_ms", "dom_ms", "cpu_s", "elapsed_s", "rss_mb", "calls"}``: per press,
    milliseconds from the pin driven low to the LED lit (lights announcer returned) and to every
    announcer told (web included); the pages' call-to-DOM (ms); the process's CPU seconds
    (user + system) and wall seconds over the presses; the peak resident memory (MB).
    """
    import resource

    from gpiozero.pins.mock import MockFactory, MockPWMPin

    from companion.announcers.lights import LightsAndBuzzer
    from companion.clock import MonotonicClock
    from companion.games.carrousel import CARDS, Board, CarrouselReferee, GameStart, Position
    from companion.journal import Journal
    from companion.service import Service
    from companion.sources.buttons import ClaimButtons
    from companion.sources.entries import EntryServer
    from companion.web import Hub, WebAnnouncer, WebServer
    from companion.web.app import make_app
    from companion.web.server import bind

    players = ["Ana", "Ben"]
    factory = MockFactory(pin_class=MockPWMPin)
    led_ms: list[float] = []
    told_ms: list[float] = []
    dom: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        journal = Journal(Path(tmp) / "journal.db", sync="normal")
        session = journal.start_session("carrousel", {})
        referee = CarrouselReferee()
        buttons = ClaimButtons(players, [5, 6], bounce_s=None, pin_factory=factory)
        lights = LightsAndBuzzer(players, [16, 20], 12, factory)
        at_lights, at_end = _Probe(), _Probe()
        hub = Hub()
        web = WebAnnouncer(hub, "carrousel", players, "sim")
        service = Service(referee, MonotonicClock(), journal=journal, session=session, sources=[buttons],
                          announcers=[lights, at_lights, web, at_end])
        web.attach(service)
        entries = EntryServer(Path(tmp) / "journal.sock", status=lambda: {"game": "carrousel", "parts": {}})
        server = WebServer(make_app(hub, entries, token="bench-token-0123456789"), bind("127.0.0.1", 0), hub)
        server.start()
        loop = threading.Thread(target=service.run, kwargs={"stop_when_over": False}, daemon=True)
        loop.start()
        chromium = None
        pages = []
        reader_proc = None
        try:
            if readers:
                reader_proc = subprocess.Popen(
                    [sys.executable, __file__, "--sse-readers", server.url, str(readers)],
                    preexec_fn=(lambda: os.sched_setaffinity(0, CLIENT_CPUS)) if CLIENT_CPUS else None)
                deadline = time.monotonic() + 20
                while hub.clients < readers and time.monotonic() < deadline:
                    time.sleep(0.05)
                if hub.clients < readers:
                    raise SystemExit(f"only {hub.clients} of {readers} event-stream readers connected")
            if browsers:
                chromium = pw.chromium.launch(executable_path=_chromium(),
                                              args=["--no-sandbox"] if os.geteuid() == 0 else [])
                for _ in range(browsers):
                    page = chromium.new_context().new_page()
                    page.goto(server.url)
                    pages.append(page)
                for page in pages:
                    page.wait_for_selector("#conn:text('live')")
            ru0 = resource.getrusage(resource.RUSAGE_SELF)
            t_start = time.monotonic()
            done = 0
            while done < presses:
                start = Position.from_text(".gbykr.")
                deck = [c for c in CARDS if c != start.first_three] + [start.first_three]
                if service.referee.is_over(service.state):
                    service.state = referee.initial_state()  # a new game on the same table (the loop waits)
                service.emit(GameStart(t=service.clock.now(), players=tuple(players), spaces=start.spaces,
                                       deck=tuple(deck)))
                while service.state.phase != "playing" or service.state.position is None:
                    time.sleep(0.001)
                for i in range(presses - done):
                    t_press = time.perf_counter()
                    seat = 1 + i % 2
                    player = players[seat - 1]
                    card = service.state.player(player).active
                    rest = tuple(c for c in ("black", "yellow", "blue", "green", "red") if c not in card)
                    target = Position.from_line(card + rest if i % 4 >= 2 else rest[:2] + card, 5)
                    target = Position.from_line(target.line, 4 if service.state.position.first_space == 5 else 5)
                    service.emit(Board(t=service.clock.now(), spaces=target.spaces))
                    while service.state.position != target and not service.referee.is_over(service.state):
                        time.sleep(0.0005)
                    if service.referee.is_over(service.state):
                        break
                    time.sleep(max(0.005, every_s - (time.perf_counter() - t_press)))  # the pace of the game
                    at_lights.done.clear()
                    at_end.done.clear()
                    pin = factory.pin(5 if seat == 1 else 6)
                    t0 = time.perf_counter()
                    pin.drive_low()
                    if not at_end.done.wait(5.0):
                        raise SystemExit("a claim press was not judged within 5 s")
                    led_ms.append((at_lights.at - t0) * 1000)
                    told_ms.append((at_end.at - t0) * 1000)
                    pin.drive_high()
                    done += 1
            elapsed = time.monotonic() - t_start
            ru1 = resource.getrusage(resource.RUSAGE_SELF)
            time.sleep(0.5)  # the last events reach the pages
            for page in pages:
                dom += page.evaluate("window.__latencies")
            calls = hub.published
        finally:
            if chromium is not None:
                chromium.close()
            if reader_proc is not None:
                reader_proc.kill()
                reader_proc.wait(5)
            service.stop()
            loop.join(5)
            server.stop()
            lights.close()
            buttons.stop()
            journal.close()
    factory.reset()
    cpu = (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
    return {"led_ms": led_ms, "told_ms": told_ms, "dom_ms": dom, "cpu_s": cpu, "elapsed_s": elapsed,
            "rss_mb": ru1.ru_maxrss / 1024, "calls": calls}


def _latency_lines(ref: float, browsers: int, presses: int, pw, rounds: int = 2, every_s: float = 0.1) -> str:
    """Rounds of 0 and ``browsers`` pages, then ``browsers`` plain event-stream readers, alternated,
    in one run; one line per measure."""
    lines = []
    for r in range(rounds):
        for n, readers in ((0, 0), (browsers, 0), (0, browsers)):
            ref = reference_op_s(100)  # timed again before each measure: other jobs share the cores
            load = os.getloadavg()[0]
            m = referee_latency(n, presses, pw, readers, every_s)
            led, told, dom = m["led_ms"], m["told_ms"], m["dom_ms"]
            who = f"{readers:2d} event-stream readers" if readers else f"{n:2d} browsers"
            line = (f"round {r + 1}, {who} (ref op {ref * 1e6:.0f} us, load {load:.1f}): {len(led)} presses; press->LED median {percentile(led, 50):.2f} ms "
                    f"({percentile(led, 50) / (ref * 1000):.2f} x ref), p99 {percentile(led, 99):.2f} ms "
                    f"({percentile(led, 99) / (ref * 1000):.2f} x ref); press->all announcers median "
                    f"{percentile(told, 50):.2f} ms, p99 {percentile(told, 99):.2f} ms; "
                    f"process CPU {m['cpu_s']:.2f} s over {m['elapsed_s']:.1f} s "
                    f"({100 * m['cpu_s'] / m['elapsed_s']:.0f} %), peak memory {m['rss_mb']:.0f} MB, "
                    f"{m['calls']} events published")
            if dom:
                line += (f"; call-to-DOM over {len(dom)} deliveries: median {statistics.median(dom):.1f} ms, "
                         f"p99 {percentile(dom, 99):.1f} ms")
            lines.append(line)
            print(line, flush=True)
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="real seconds of each game")
    parser.add_argument("--browsers", type=int, default=20)
    parser.add_argument("--presses", type=int, default=300, help="claim presses per refereeing-latency round")
    parser.add_argument("--only-latency", action="store_true", help="only the refereeing latency (part 5)")
    parser.add_argument("--press-every", type=float, default=0.1, metavar="SECONDS",
                        help="pace of the refereeing-latency game: a claim press every so many seconds")
    parser.add_argument("--sse-readers", nargs=2, metavar=("URL", "N"), help=argparse.SUPPRESS)
    parser.add_argument("--apart", metavar="SERVICE_CPUS:CLIENT_CPUS",
                        help="pin the service (this process) and the browsers to separate CPUs, e.g. 0:1: the "
                             "clients are the players' devices, not the Pi; the refereeing latency is then the "
                             "service's own with 20 pages connected")
    args = parser.parse_args()
    if args.apart:
        global CLIENT_CPUS
        service_cpus, _, client_cpus = args.apart.partition(":")
        os.sched_setaffinity(0, {int(c) for c in service_cpus.split(",")})
        CLIENT_CPUS = {int(c) for c in client_cpus.split(",")}
        print(f"service on CPUs {sorted(os.sched_getaffinity(0))}, browsers and readers on {sorted(CLIENT_CPUS)}")
    if args.sse_readers:
        _sse_readers(args.sse_readers[0], int(args.sse_readers[1]))
        return
    if not os.path.exists(CHROMIUM):
        raise SystemExit(f"{CHROMIUM} is missing: apt-get install -y --no-install-recommends chromium fonts-liberation libatomic1")
    from playwright.sync_api import sync_playwright

    ref = reference_op_s()
    print(f"machine: {machine()}")
    print(f"reference op (cvtColor BGR->Lab 640x480): {ref * 1e6:.0f} us")
    with sync_playwright() as pw:
        if args.only_latency:
            _latency_lines(ref, args.browsers, args.presses, pw, every_s=args.press_every)
            print(f"reference op again: {reference_op_s() * 1e6:.0f} us")
            return
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
        _latency_lines(ref, args.browsers, args.presses, pw, every_s=args.press_every)
        print(f"reference op again: {reference_op_s() * 1e6:.0f} us")


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
        chromium = pw.chromium.launch(executable_path=_chromium(), args=["--no-sandbox"] if os.geteuid() == 0 else [])
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
