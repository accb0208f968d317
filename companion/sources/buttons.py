"""Player claim buttons through gpiozero ``Button``: one per seat.

Wiring: each button between its GPIO (BCM, default 5, 6, 13, 19 for seats 1-4) and ground;
the Pi's internal pull-up holds the pin high, a press pulls it low. Contact bounce is filtered
by gpiozero's ``bounce_time`` (the ``[buttons] bounce_s`` key, seconds).

Example::

    buttons = ClaimButtons(["Ana", "Ben"], pins=[5, 6], bounce_s=0.02, pin_factory=factory)
    buttons.start(service.emit, clock)   # each press emits Claim(t=clock.now(), player=...)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from companion.clock import Clock
from companion.games.carrousel import Claim
from companion.sources import Emit

__all__ = ["ClaimButtons"]


class ClaimButtons:
    """The claim buttons of the seated players, as a source of ``claim`` observations.

    Args:
        players: names in seat order (seat 1 first); only these seats get a button.
        pins: BCM GPIO numbers of seats 1-4 (at least one per player).
        bounce_s: debounce time in seconds (gpiozero ``bounce_time``), or None for none.
        pin_factory: the gpiozero pin factory (see :func:`companion.pins.make_pin_factory`).

    Raises:
        ValueError: fewer pins than players.
        gpiozero.GPIOZeroError: a pin that cannot be used (already in use, not a GPIO).
    """

    def __init__(
        self,
        players: Sequence[str],
        pins: Sequence[int],
        bounce_s: float | None,
        pin_factory: Any,
    ):
        if len(pins) < len(players):
            raise ValueError(f"{len(players)} players but only {len(pins)} claim button pins")
        self.players = list(players)
        self.pins = list(pins[: len(players)])
        self.bounce_s = bounce_s
        self._factory = pin_factory
        self._buttons: list[Any] = []

    def start(self, emit: Emit, clock: Clock) -> None:
        """Create the gpiozero Buttons; each press emits ``Claim(t=clock.now(), player)``."""
        from gpiozero import Button

        for name, pin in zip(self.players, self.pins):
            button = Button(pin, pull_up=True, bounce_time=self.bounce_s, pin_factory=self._factory)

            def pressed(_device: Any = None, name: str = name) -> None:
                emit(Claim(t=clock.now(), player=name))

            button.when_pressed = pressed
            self._buttons.append(button)

    def stop(self) -> None:
        """Close the Buttons (frees the pins); safe to call twice."""
        for b in self._buttons:
            b.close()
        self._buttons.clear()

    def mock_pin(self, seat: int) -> Any:
        """The mock pin of a seat (1-based), to press it with ``drive_low()`` in the
        simulated table and in tests. Raises IndexError for a seat without a button."""
        return self._buttons[seat - 1].pin
