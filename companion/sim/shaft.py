"""Spins through the rotation chain: the simulated table's spins turn a simulated shaft.

When the simulated table wants the carousel spun by ``revolutions`` turns, this bridge flicks
a :class:`~companion.rotation.simulated.SimulatedShaft` (inertia, friction, contact bounce)
with the speed that friction slows down over about that many turns. The shaft's counts go
through the same :class:`~companion.rotation.tracker.RotationTracker` (angle model, index
pulse, spin detector) as a real encoder's, and the referee gets the tracker's
``spin_started`` / ``spin_stopped``, not the table's own. Stepped by the service loop on the
session clock (10 ms samples while the carousel turns, nothing while it rests), so a seeded
game is the same at any speed.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

from companion.clock import Clock
from companion.sources import Emit

__all__ = ["ShaftSpins"]


class ShaftSpins:
    """A scheduled source turning a simulated shaft for the simulated table's spins.

    Args:
        shaft: the simulated shaft (``spin_every_s=None``: it turns only when flicked).
        tracker: the rotation tracker fed with its samples.
        step_s: session seconds between samples while it turns.
        convert: turns the tracker's observations into the referee's own classes (e.g.
            ``lambda o: vocabulary.observation(o.to_json())``); None keeps them.
        show: called with each spin observation (to print spins and stops), or None.

    Use :meth:`wrap` on the table's ``emit``: the table's ``spin_started`` becomes a flick;
    its ``spin_stopped`` is dropped (the tracker reports the real stop).
    """

    def __init__(self, shaft: Any, tracker: Any, step_s: float = 0.01, convert: Any = None,
                 show: Any = None):
        self.convert = convert
        self.show = show
        self.shaft = shaft
        self.tracker = tracker
        self.step_s = step_s
        self._emit: Emit | None = None
        self._next: float | None = None
        self._expected: deque[tuple[float | None, str]] = deque()

    def start(self, emit: Emit, clock: Clock) -> None:
        """Begin: the tracker's observations go to ``emit``."""
        self._emit = emit
        self.shaft.t = clock.now()

    def stop(self) -> None:
        """Stop stepping."""
        self._next = None

    def next_time(self) -> float | None:
        """Session time (s) of the next sample, None while the carousel rests."""
        return self._next

    def advance(self, t: float) -> None:
        """Run the shaft to ``t`` (s); feed its samples to the tracker; emit what it reports."""
        if self._next is None or self._next > t:
            return
        out: list[Any] = []
        # the shaft's samples go on at rest (its heartbeat): the one that comes the settle
        # time after the last motion makes the tracker report the stop
        self.shaft.advance(t, lambda sample: out.extend(self.tracker.feed(sample)))
        for obs in out:
            if self.show is not None:
                self.show(obs)
            if self._emit is not None:
                self._emit(self.convert(obs) if self.convert is not None else obs)
        moving = self.shaft.omega != 0.0 or self.tracker.detector.spinning
        self._next = round(t + self.step_s, 6) if moving else None

    def flick(self, t: float, revolutions: float, direction: str) -> None:
        """Flick the shaft at session time ``t`` (s) so that it turns about ``revolutions``
        turns (``direction`` ``"ccw"`` or ``"cw"``) before friction stops it."""
        self.shaft.advance(t)  # catch up (at rest: nothing moves)
        decel = self.shaft.decel_rps2  # turns/s² from dry friction
        rps = math.sqrt(2.0 * decel * max(revolutions, 0.01))
        self.shaft.flick(rps if direction == "ccw" else -rps)
        self._next = round(t + self.step_s, 6)

    def wrap(self, emit: Emit) -> Emit:
        """The table's ``emit`` with its spins sent through the shaft."""

        def wrapped(obs: Any) -> None:
            if obs.TYPE == "spin_started":
                revolutions, direction = self._expected.popleft() if self._expected else (None, "ccw")
                if revolutions is None:  # a jammed carousel: it starts and never stops
                    emit(obs)
                    return
                self.flick(obs.t, revolutions, direction)
                return
            if obs.TYPE == "spin_stopped":
                return
            emit(obs)

        return wrapped

    def expect(self, revolutions: float | None, direction: str) -> None:
        """Note the turns the table means for its next spin (None: the carousel jams)."""
        self._expected.append((revolutions, direction))
