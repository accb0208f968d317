"""LEDs and buzzer: one LED per seat and a piezo buzzer, each call with its own pattern.

Wiring (BCM numbering, defaults in ``[pins]``): each LED from its GPIO (16, 20, 21, 26 for
seats 1-4) through a 270 ohm (hardware/README.md) resistor to ground; the buzzer (a passive piezo) on GPIO 12
(hardware PWM) through an NPN transistor. The pins are gpiozero ``LED`` and ``TonalBuzzer``
devices. The first step of a pattern (LED on, first note) is set before :meth:`announce`
returns, so the table sees and hears a call within the loop's own latency; the rest of the
pattern is played by one long-lived timeline thread, so an announcement never blocks the
service loop and never starts a thread. A new pattern replaces the one playing.

The patterns are data: ``companion/data/signals.toml``, keyed by game and call (which LEDs:
the player's, all, the scorer's, the winners'; how they blink; the buzzer's notes), read by
:class:`~companion.announcers.signals.Signals`. For Carrousel, for example:

==================  ======================================  ===========================
call                LEDs                                    buzzer
==================  ======================================  ===========================
point, lucky bird   scorer's LED on for 1 s                 rising C5 E5 G5 (G5 E5 G5 A5)
penalty             penalised player's LED blinks 3x fast   one low A3, 0.4 s
countdown           all LEDs flash once, 0.15 s             one short A4
dead end            all LEDs blink twice                    two mid tones E4 E4
illegal move        all LEDs flash once                     low-high-low buzz
winner              winner's LED blinks for 30 s            C5 E5 G5 A5 fanfare
==================  ======================================  ===========================
"""

from __future__ import annotations

import heapq
import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from companion.announcers.signals import LightPattern, Signals
from companion.events import Call

__all__ = ["LightsAndBuzzer", "PATTERNS"]

log = logging.getLogger("companion.lights")


def _carrousel_patterns() -> dict[str, tuple[LightPattern | None, tuple[tuple[str | None, float], ...]]]:
    signals = Signals()
    return {key: (sig.lights, sig.notes) for key, sig in signals.entries.get("carrousel", {}).items()}


#: Carrousel's call type -> (LED pattern, buzzer notes), as read from the signals file (kept
#: for callers of the former in-code table; the file is the source).
PATTERNS = _carrousel_patterns()

Step = tuple[float, Callable[[], None]]


class LightsAndBuzzer:
    """Announcer driving the seat LEDs and the buzzer.

    Args:
        players: names in seat order; seat k uses ``led_pins[k-1]``.
        led_pins: BCM GPIO numbers of the seat LEDs.
        buzzer_pin: BCM GPIO number of the buzzer (PWM).
        pin_factory: the gpiozero pin factory (mock pins must be ``MockPWMPin``).
        game: the game whose patterns are played (``carrousel``, ``monsieur-carrousel``,
            ``carrossel``, ``carnival``), keyed in ``companion/data/signals.toml``.
        signals: the signals file already read (default: the package's).

    Raises:
        gpiozero.GPIOZeroError: a pin that cannot be used.
        companion.announcers.signals.SignalsError: a broken signals file (names the key).

    Example::

        from gpiozero.pins.mock import MockFactory, MockPWMPin
        lights = LightsAndBuzzer(["Ana", "Ben"], [16, 20], 12, MockFactory(pin_class=MockPWMPin))
        lights.announce(point_call, {})   # Ana's LED on for 1 s, C5 E5 G5
    """

    def __init__(
        self,
        players: Sequence[str],
        led_pins: Sequence[int],
        buzzer_pin: int,
        pin_factory: Any,
        game: str = "carrousel",
        signals: Signals | None = None,
    ):
        from gpiozero import LED, TonalBuzzer

        self.game = game
        self.signals = signals or Signals()
        self.players = list(players)
        self.leds = [LED(p, pin_factory=pin_factory) for p in led_pins[: len(players)]]
        try:
            self.buzzer: Any = TonalBuzzer(buzzer_pin, octaves=2, pin_factory=pin_factory)
        except Exception as exc:  # no PWM on this pin: lights only, and say so once
            log.warning("buzzer on GPIO %s unavailable (%s): lights only", buzzer_pin, exc)
            self.buzzer = None
        self._timeline = _Timeline()

    def announce(self, call: Call, summary: Mapping[str, Any]) -> None:
        """Start the call's light and sound pattern; returns at once."""
        signal = self.signals.find(self.game, self.signals.keys_for(call, self.game))
        if signal is None:
            return
        steps = self._led_steps(signal.lights, call) + self._note_steps(signal.notes)
        if steps:
            self._timeline.play(steps, self._all_off)

    def _led_steps(self, pattern: LightPattern | None, call: Call) -> list[Step]:
        if pattern is None:
            return []
        names = pattern.players(call.to_json(), self.players)
        leds = [self.leds[self.players.index(n)] for n in names if self.players.index(n) < len(self.leds)]
        out: list[Step] = []
        for k in range(pattern.times):
            t = k * (pattern.on_s + pattern.off_s)
            out += [(t, lambda: [x.on() for x in leds]), (t + pattern.on_s, lambda: [x.off() for x in leds])]
        return out

    def _note_steps(self, notes: Sequence[tuple[str | None, float]]) -> list[Step]:
        if self.buzzer is None or not notes:
            return []
        from gpiozero.tones import Tone

        out: list[Step] = []
        t = 0.0
        buzzer = self.buzzer
        for name, seconds in notes:
            if name is None:
                out.append((t, buzzer.stop))
            else:
                value = _tone_value(buzzer, Tone(name))
                out.append((t, lambda v=value: setattr(buzzer, "value", v)))
            t += seconds
        out.append((t, buzzer.stop))
        return out

    def _all_off(self) -> None:
        for x in self.leds:
            x.off()
        if self.buzzer is not None:
            self.buzzer.stop()

    def play(self, notes: Sequence[tuple[str | None, float]]) -> None:
        """Play notes (name such as ``"C5"`` or None for a rest, seconds); the first sounds
        before this returns."""
        self._timeline.play(self._note_steps(notes), lambda: self.buzzer and self.buzzer.stop())

    def close(self) -> None:
        """Stop the timeline, switch everything off and free the pins; safe to call twice."""
        self._timeline.close()
        for x in self.leds:
            x.close()
        if self.buzzer is not None:
            self.buzzer.close()
        self.leds = []
        self.buzzer = None


class _Timeline:
    """One thread that runs timed steps (offset seconds, action); a new :meth:`play` replaces
    what is pending. Steps at offset 0 run in the caller's thread, at once."""

    def __init__(self) -> None:
        self._inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="lights-timeline", daemon=True)
        self._thread.start()

    def play(self, steps: list[tuple[float, Callable[[], None]]], reset: Callable[[], None]) -> None:
        """Replace what is pending with ``steps`` (offset seconds, action); run ``reset`` and
        the offset-0 steps now, in the caller's thread."""
        now = time.monotonic()
        self._inbox.put(("cancel", now))
        reset_needed = True
        later = []
        for offset, action in sorted(steps, key=lambda s: s[0]):
            if offset <= 0:
                if reset_needed:
                    reset()
                    reset_needed = False
                action()
            else:
                later.append((now + offset, action))
        self._inbox.put(("steps", later))

    def close(self) -> None:
        """Stop the thread (at most 2 s); pending steps are dropped."""
        if self._thread.is_alive():
            self._inbox.put(("stop", None))
            self._thread.join(2.0)

    def _run(self) -> None:
        pending: list[tuple[float, int, Callable[[], None]]] = []
        seq = itertools.count()
        while True:
            timeout = max(0.0, pending[0][0] - time.monotonic()) if pending else None
            try:
                kind, arg = self._inbox.get(timeout=timeout)
            except queue.Empty:
                while pending and pending[0][0] <= time.monotonic():
                    _, _, action = heapq.heappop(pending)
                    try:
                        action()
                    except Exception:  # a pin that fails must not stop the other patterns
                        log.exception("LED or buzzer step failed")
                continue
            if kind == "stop":
                return
            if kind == "cancel":
                pending.clear()
            elif kind == "steps":
                for at, action in arg:
                    heapq.heappush(pending, (at, next(seq), action))


def _tone_value(buzzer: Any, tone: Any) -> float:
    """TonalBuzzer value (-1..1) of a tone: octaves above (+) or below (-) the mid tone."""
    import math

    v = math.log2(tone.frequency / buzzer.mid_tone.frequency) / buzzer.octaves
    return max(-1.0, min(1.0, v))
