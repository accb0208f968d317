"""LEDs and buzzer: one LED per seat and a piezo buzzer, each call with its own pattern.

Wiring (BCM numbering, defaults in ``[pins]``): each LED from its GPIO (16, 20, 21, 26 for
seats 1-4) through a 330 ohm resistor to ground; the buzzer (a passive piezo) on GPIO 12
(hardware PWM) through an NPN transistor. Built on gpiozero ``LED`` (``blink`` runs in
gpiozero's background thread) and ``TonalBuzzer`` (notes played through its ``source``
thread), so an announcement never blocks the service loop.

Patterns (distinct by light and by sound):

==================  ======================================  ===========================
call                LEDs                                    buzzer
==================  ======================================  ===========================
point, lucky bird   scorer's LED on for 1 s                 rising C5 E5 G5
penalty             penalised player's LED blinks 3x fast   one low A3, 0.4 s
dead end            all LEDs blink twice                    two mid tones E4 E4
illegal move        all LEDs flash once                     low-high-low buzz
winner              winner's LED blinks until the end       C5 E5 G5 C6 fanfare
==================  ======================================  ===========================
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from companion.events import Call

__all__ = ["LightsAndBuzzer", "PATTERNS", "STEP_S"]

log = logging.getLogger("companion.lights")

#: Duration of one step of a buzzer pattern, seconds (gpiozero ``source_delay``).
STEP_S = 0.05

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
            self.buzzer.source_delay = STEP_S
        except Exception as exc:  # no PWM on this pin: lights only, and say so once
            log.warning("buzzer on GPIO %s unavailable (%s): lights only", buzzer_pin, exc)
            self.buzzer = None

    def _led(self, player: str | None) -> Any:
        if player in self.players:
            return self.leds[self.players.index(player)]
        return None

    def announce(self, call: Call, summary: Mapping[str, Any]) -> None:
        """Start the call's light and sound pattern and return at once."""
        pattern = PATTERNS.get(call.TYPE)
        if pattern is None:
            return
        leds, notes = pattern
        player = getattr(call, "player", None)
        led = self._led(player)
        if leds == "scorer_on" and led is not None:
            led.blink(on_time=1.0, off_time=0.0, n=1)
        elif leds == "player_fast" and led is not None:
            led.blink(on_time=0.1, off_time=0.1, n=3)
        elif leds == "all_twice":
            for x in self.leds:
                x.blink(on_time=0.3, off_time=0.2, n=2)
        elif leds == "all_once":
            for x in self.leds:
                x.blink(on_time=0.2, off_time=0.0, n=1)
        elif leds == "winner_blink" and led is not None:
            led.blink(on_time=0.5, off_time=0.5)
        self.play(notes)

    def play(self, notes: Sequence[tuple[str | None, float]]) -> None:
        """Play notes (name such as ``"C5"`` or None for a rest, seconds) in the background.

        The first note sounds before this returns; the rest follow in gpiozero's source
        thread, one value every :data:`STEP_S` seconds. A new pattern replaces a playing one.
        """
        if self.buzzer is None:
            return
        from gpiozero.tones import Tone

        values: list[float | None] = []
        for name, seconds in notes:
            v = None if name is None else _tone_value(self.buzzer, Tone(name))
            values.extend([v] * max(1, round(seconds / STEP_S)))
        values.append(None)
        self.buzzer.source = None
        self.buzzer.value = values[0]  # sound at once; the source thread plays the rest
        self.buzzer.source = iter(values[1:])

    def close(self) -> None:
        """Switch everything off and free the pins; safe to call twice."""
        for x in self.leds:
            x.close()
        if self.buzzer is not None:
            self.buzzer.close()
        self.leds = []
        self.buzzer = None


def _tone_value(buzzer: Any, tone: Any) -> float:
    """TonalBuzzer value (-1..1) of a tone: octaves above (+) or below (-) the mid tone."""
    import math

    v = math.log2(tone.frequency / buzzer.mid_tone.frequency) / buzzer.octaves
    return max(-1.0, min(1.0, v))
