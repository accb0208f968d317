"""Claim button press to LED and buzzer, on the real service loop.

The service runs as in `companion run` (its own thread, the real monotonic clock, the SQLite
journal on disk with synchronous=FULL, then NORMAL), with gpiozero Buttons, LEDs and a
TonalBuzzer on MockFactory pins (MockPWMPin). The benchmark drives a claim button's mock pin
low and measures the time until the LED pin is lit and the buzzer pin has its frequency: the
moment the LightsAndBuzzer announcer returns (a probe announcer placed after it records it,
and checks the pins). Alternate wrong and right claims give penalties and points.
Target (issue "Carrousel referee end to end"): p99 under 5 ms.

    .venv/bin/python bench/claim_latency.py [N]
"""

from __future__ import annotations

import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import machine, percentile  # noqa: E402
from gpiozero.pins.mock import MockFactory, MockPWMPin  # noqa: E402

from companion.announcers.lights import LightsAndBuzzer  # noqa: E402
from companion.clock import MonotonicClock  # noqa: E402
from companion.games.carrousel import CARDS, Board, CarrouselReferee, GameStart, Position  # noqa: E402
from companion.journal import Journal  # noqa: E402
from companion.service import Service  # noqa: E402
from companion.sources.buttons import ClaimButtons  # noqa: E402


class Probe:
    def __init__(self, factory):
        self.factory = factory
        self.done = threading.Event()
        self.at = 0.0
        self.ok = True

    def announce(self, call, summary):
        if call.TYPE in ("point", "penalty"):
            self.at = time.perf_counter()
            led = self.factory.pin(16 if call.player == "Ana" else 20)
            self.ok &= bool(led.state) and self.factory.pin(12).frequency is not None
            self.done.set()

    def close(self):
        pass


def measure(n: int, sync: str) -> list[float]:
    factory = MockFactory(pin_class=MockPWMPin)
    with tempfile.TemporaryDirectory() as tmp:
        journal = Journal(Path(tmp) / "journal.db", sync=sync)
        session = journal.start_session("carrousel", {})
        referee = CarrouselReferee()
        buttons = ClaimButtons(["Ana", "Ben"], [5, 6], bounce_s=None, pin_factory=factory)
        lights = LightsAndBuzzer(["Ana", "Ben"], [16, 20], 12, factory)
        probe = Probe(factory)
        service = Service(referee, MonotonicClock(), journal=journal, session=session,
                          sources=[buttons], announcers=[lights, probe])
        loop = threading.Thread(target=service.run, kwargs={"stop_when_over": False}, daemon=True)
        loop.start()
        start = Position.from_text(".gbykr.")
        deck = [c for c in CARDS if c != start.first_three] + [start.first_three]
        service.emit(GameStart(t=0.0, players=("Ana", "Ben"), spaces=start.spaces, deck=tuple(deck)))
        samples = []
        for i in range(n):
            while service.state.phase != "playing" or service.state.position is None:
                time.sleep(0.001)
            if service.referee.is_over(service.state):
                break
            seat = 1 + i % 2
            player = "Ana" if seat == 1 else "Ben"
            card = service.state.player(player).active
            rest = tuple(c for c in ("black", "yellow", "blue", "green", "red") if c not in card)
            if i % 4 >= 2:  # every other pair of presses is a right claim: a point
                target = Position.from_line(card + rest, 5)
            else:  # a wrong claim: an order that is nobody's card
                target = Position.from_line(rest[:2] + card, 5)
            target = Position.from_line(target.line, 4 if service.state.position.first_space == 5 else 5)
            service.emit(Board(t=service.clock.now(), spaces=target.spaces))
            while service.state.position != target and not service.referee.is_over(service.state):
                time.sleep(0.0005)
            if service.referee.is_over(service.state):
                break
            time.sleep(0.005)  # let the LEDs' blink threads settle between presses
            probe.done.clear()
            pin = factory.pin(5 if seat == 1 else 6)
            t0 = time.perf_counter()
            pin.drive_low()
            probe.done.wait(2.0)
            samples.append((probe.at - t0) * 1000)
            pin.drive_high()
        service.stop()
        loop.join(5)
        lights.close()
        buttons.stop()
        journal.close()
        assert probe.ok, "LED or buzzer pin not set when the announcement returned"
    factory.reset()
    return samples


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    print(f"machine: {machine()}")
    for sync in ("full", "normal"):
        ms: list[float] = []
        while len(ms) < n:  # a new game whenever one ends (lucky birds add up)
            ms += measure(min(100, n - len(ms)), sync)
        print(
            f"journal synchronous={sync}: {len(ms)} presses, median {percentile(ms, 50):.3f} ms, "
            f"p99 {percentile(ms, 99):.3f} ms, max {max(ms):.3f} ms (target p99 < 5 ms)"
        )


if __name__ == "__main__":
    main()
