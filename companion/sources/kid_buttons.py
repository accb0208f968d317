"""The kids' YES and NO buttons and the electronic die button (Monsieur Carrousel).

Wiring: each button between its GPIO (BCM; defaults YES 23, NO 24, die 22 from ``[pins]``) and
ground; the internal pull-up holds the pin high, a press pulls it low; contact bounce is
filtered by gpiozero's ``bounce_time`` (``[buttons] bounce_s``, seconds).

* YES or NO emits ``answer`` with ``yes`` or ``no`` once ``together_s`` seconds have passed
  without the other button being pressed; when the other one is pressed (or already held)
  within that time the answer is ``both`` (the referee asks to press only one).
* The die button rolls the electronic die: a colour drawn uniformly from the die's colours
  (``random.SystemRandom`` unless a seeded generator is given) emits ``die_rolled``; the
  referee's next prompt says the colour.

Example::

    buttons = KidButtons(yes_pin=23, no_pin=24, die_pin=22, die_colours=table.die_colours,
                         bounce_s=0.02, pin_factory=factory)
    buttons.start(service.emit, clock)
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Sequence
from typing import Any

from companion.clock import Clock
from companion.games.monsieur_carrousel import Answer, DieRolled
from companion.sources import Emit

__all__ = ["KidButtons"]

Schedule = Callable[[float, Callable[[], None]], Any]


def _timer(delay_s: float, fn: Callable[[], None]) -> threading.Timer:
    t = threading.Timer(delay_s, fn)
    t.daemon = True
    t.start()
    return t


class KidButtons:
    """YES, NO and die buttons as a source of ``answer`` and ``die_rolled`` observations.

    Args:
        yes_pin, no_pin: BCM GPIO numbers of the YES and NO buttons.
        die_pin: BCM GPIO number of the electronic die button, or None (a real die is used).
        die_colours: the die's colours (``calibration/monsieur_carrousel.toml``).
        bounce_s: debounce time, seconds (gpiozero ``bounce_time``), or None.
        pin_factory: the gpiozero pin factory.
        together_s: seconds within which YES and NO count as pressed together.
        rng: the die's random generator (default ``random.SystemRandom()``).
        schedule: ``schedule(delay_s, fn)`` runs ``fn`` later (default a ``threading.Timer``;
            tests pass a recorder and run it by hand).

    Raises:
        gpiozero.GPIOZeroError: a pin that cannot be used.
    """

    def __init__(
        self,
        yes_pin: int,
        no_pin: int,
        die_pin: int | None,
        die_colours: Sequence[str],
        bounce_s: float | None,
        pin_factory: Any,
        together_s: float = 0.3,
        rng: random.Random | None = None,
        schedule: Schedule = _timer,
    ):
        self.pins = {"yes": yes_pin, "no": no_pin}
        self.die_pin = die_pin
        self.die_colours = tuple(die_colours)
        self.bounce_s = bounce_s
        self.together_s = together_s
        self._factory = pin_factory
        self._rng = rng or random.SystemRandom()
        self._schedule = schedule
        self._lock = threading.Lock()
        self._pending: str | None = None  # the first button of a press not yet reported
        self._pending_t = 0.0
        self.buttons: dict[str, Any] = {}

    def start(self, emit: Emit, clock: Clock) -> None:
        """Create the gpiozero Buttons and report presses through ``emit``."""
        from gpiozero import Button

        self._emit = emit
        self._clock = clock
        for name, pin in self.pins.items():
            b = Button(pin, pull_up=True, bounce_time=self.bounce_s, pin_factory=self._factory)
            b.when_pressed = lambda _d=None, name=name: self._pressed(name)
            self.buttons[name] = b
        if self.die_pin is not None:
            b = Button(self.die_pin, pull_up=True, bounce_time=self.bounce_s, pin_factory=self._factory)
            b.when_pressed = lambda _d=None: self._roll()
            self.buttons["die"] = b

    def stop(self) -> None:
        """Close the Buttons (frees the pins); safe to call twice."""
        for b in self.buttons.values():
            b.close()
        self.buttons.clear()

    def _pressed(self, name: str) -> None:
        other = "no" if name == "yes" else "yes"
        t = self._clock.now()
        with self._lock:
            if self._pending == other:
                # The other button is waiting to be reported: both pressed together.
                self._pending = None
                self._emit(Answer(t=t, value="both"))
                return
            if self._pending is not None:
                return  # the same button again (bounce not filtered): one press
            if self.buttons[other].is_pressed:
                self._emit(Answer(t=t, value="both"))
                return
            self._pending = name
            self._pending_t = t
        self._schedule(self.together_s, self._settle)

    def _settle(self) -> None:
        with self._lock:
            name, self._pending = self._pending, None
            t = self._pending_t
        if name is not None:
            self._emit(Answer(t=t, value=name))  # type: ignore[arg-type]

    def _roll(self) -> None:
        self._emit(DieRolled(t=self._clock.now(), colour=self._rng.choice(self.die_colours)))
