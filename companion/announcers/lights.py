"""LEDs and buzzer: one LED per seat and a piezo buzzer, each call with its own pattern.

Wiring (BCM numbering, defaults in ``[pins]``): each LED from its GPIO (16, 20, 21, 26 for
seats 1-4) through a 270 ohm (hardware/README.md) resistor to ground; the buzzer (a passive piezo) on GPIO 12
(hardware PWM) through an NPN transistor. The pins are gpiozero ``LED`` and ``TonalBuzzer``
devices. The first step of a pattern (LED on, first note) is set before :meth:`announce`
returns, so the table sees and hears a call within the loop's own latency; the rest of the
pattern is played by one long-lived timeline thread, so an announcement never blocks the
service loop and never starts a thread. A new pattern replaces the one playing.

Patterns (distinct by light and by sound):

==================  ======================================  ===========================
call                LEDs                                    buzzer
==================  ======================================  ===========================
point, lucky bird   scorer's LED on for 1 s                 rising C5 E5 G5 (G5 E5 G5 C6)
penalty             penalised player's LED blinks 3x fast   one low A3, 0.4 s
dead end            all LEDs blink twice                    two mid tones E4 E4
illegal move        all LEDs flash once                     low-high-low buzz
winner              winner's LED blinks for 30 s            C5 E5 G5 C6 fanfare
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

from companion.events import Call

__all__ = ["LightsAndBuzzer", "PATTERNS"]

log = logging.getLogger("companion.lights")

#: call type -> (LED pattern, buzzer notes as (note name or None for a rest, seconds)).
PATTERNS: dict[str, tuple[str, tuple[tuple[str | None, float], ...]]] = {
    "point": ("scorer_on", (("C5", 0.1), ("E5", 0.1), ("G5", 0.2))),
    "lucky_bird": ("scorer_on", (("G5", 0.1), ("E5", 0.1), ("G5", 0.1), ("C6", 0.2))),
    "penalty": ("player_fast", (("A3", 0.4),)),
    "dead_end": ("all_twice", (("E4", 0.2), (None, 0.1), ("E4", 0.2))),
    "illegal_move": ("all_once", (("A3", 0.1), ("A4", 0.1), ("A3", 0.1))),
    "winner": ("winner_blink", (("C5", 0.15), ("E5", 0.15), ("G5", 0.15), ("C6", 0.45))),
}


class LightsAndBuzzer:
    """Announcer driving the seat LEDs and the buzzer.

    Args:
        players: names in seat order; seat k uses ``led_pins[k-1]``.
        led_pins: BCM GPIO numbers of the seat LEDs.
        buzzer_pin: BCM GPIO number of the buzzer (PWM).
        pin_factory: the gpiozero pin factory (mock pins must be ``MockPWMPin``).

    Raises:
        gpiozero.GPIOZeroError: a pin that cannot be used.
    """

    def __init__(self, players: Sequence[str], led_pins: Sequence[int], buzzer_pin: int, pin_factory: Any):
        from gpiozero import LED, TonalBuzzer

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
        pattern = PATTERNS.get(call.TYPE)
        if pattern is None:
            return
        leds, notes = pattern
        steps = self._led_steps(leds, getattr(call, "player", None)) + self._note_steps(notes)
        self._timeline.play(steps, self._all_off)

    def _led_steps(self, pattern: str, player: str | None) -> list[tuple[float, Callable[[], None]]]:
        led = self.leds[self.players.index(player)] if player in self.players else None
        mine = [led] if led is not None else []

        def blink(leds: list[Any], on_s: float, off_s: float, n: int) -> list[tuple[float, Callable[[], None]]]:
            out = []
            for k in range(n):
                t = k * (on_s + off_s)
                out += [(t, lambda: [x.on() for x in leds]), (t + on_s, lambda: [x.off() for x in leds])]
            return out

        if pattern == "scorer_on":
            return blink(mine, 1.0, 0.0, 1)
        if pattern == "player_fast":
            return blink(mine, 0.1, 0.1, 3)
        if pattern == "all_twice":
            return blink(self.leds, 0.3, 0.2, 2)
        if pattern == "all_once":
            return blink(self.leds, 0.2, 0.0, 1)
        if pattern == "winner_blink":
            return blink(mine, 0.5, 0.5, 30)
        return []

    def _note_steps(self, notes: Sequence[tuple[str | None, float]]) -> list[tuple[float, Callable[[], None]]]:
        if self.buzzer is None:
            return []
        from gpiozero.tones import Tone

        out: list[tuple[float, Callable[[], None]]] = []
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
