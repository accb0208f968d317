"""Clocks for the service loop: the session time in seconds, real, accelerated or manual.

The rules engines never read a clock; the service loop does, through one of these, and puts
the time into each observation. Tests inject :class:`ManualClock` and advance it by hand, so
no test sleeps to wait for time.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol

__all__ = ["Clock", "MonotonicClock", "ManualClock", "PacedClock"]


class Clock(Protocol):
    """Session time in seconds (float), starting at ``origin`` and never going backwards."""

    def now(self) -> float:
        """The session time now, seconds."""

    def wait(self, event: threading.Event, until: float | None) -> bool:
        """Block until ``event`` is set or the session time reaches ``until`` (None = no
        limit). Returns True when the event was set."""


class MonotonicClock:
    """The real clock (``time.monotonic``), optionally accelerated.

    Args:
        origin: session time (s) at construction, e.g. the last journaled time when resuming.
        speed: session seconds per real second (1 = real time; 10 = ten times faster).
    """

    def __init__(self, origin: float = 0.0, speed: float = 1.0):
        if speed <= 0:
            raise ValueError(f"speed must be > 0, got {speed}")
        self.speed = speed
        self._origin = origin
        self._start = time.monotonic()

    def now(self) -> float:
        """The session time now, seconds."""
        return self._origin + (time.monotonic() - self._start) * self.speed

    def wait(self, event: threading.Event, until: float | None) -> bool:
        """Wait on ``event`` at most until session time ``until``."""
        if until is None:
            return event.wait()
        while True:
            remaining = (until - self.now()) / self.speed
            if remaining <= 0:
                return event.is_set()
            if event.wait(remaining):
                return True


class ManualClock:
    """A clock that only moves when told to: for tests and for replay.

    ``wait`` never blocks: when the event is not set it jumps the time forward to ``until``
    (as if nothing happened meanwhile) and returns False.

    Args:
        origin: the starting session time, seconds.
    """

    def __init__(self, origin: float = 0.0):
        self._t = origin
        self.speed = 1.0

    def now(self) -> float:
        """The current session time, seconds."""
        return self._t

    def advance(self, seconds: float) -> float:
        """Move the time forward; returns the new time. Raises ValueError when negative."""
        if seconds < 0:
            raise ValueError("a clock does not go backwards")
        self._t += seconds
        return self._t

    def set(self, t: float) -> None:
        """Move the time forward to ``t`` (ignored when ``t`` is in the past)."""
        self._t = max(self._t, t)

    def wait(self, event: threading.Event, until: float | None) -> bool:
        """Return at once: True when the event is set, else jump to ``until`` and False."""
        if event.is_set():
            return True
        if until is not None:
            self.set(until)
        return False


class PacedClock:
    """Simulated time that keeps pace with the real clock: for the simulated table.

    ``now()`` is the time of the event being handled, exactly: ``wait(event, until)`` sleeps
    the real time it takes to reach ``until`` at ``speed``, then the clock *is* ``until``. So
    a seeded simulated game is the same game at any speed, and ``--until`` stops exactly
    there. Something set from another thread (a stop request) moves the clock to the real
    elapsed time, never past ``until``.

    Args:
        origin: the session time (s) to start from.
        speed: session seconds per real second.
    """

    def __init__(self, origin: float = 0.0, speed: float = 1.0):
        if speed <= 0:
            raise ValueError(f"speed must be > 0, got {speed}")
        self.speed = speed
        self._t = origin
        self._origin = origin
        self._start = time.monotonic()

    def now(self) -> float:
        """The simulated session time, seconds."""
        return self._t

    def _real(self) -> float:
        return self._origin + (time.monotonic() - self._start) * self.speed

    def wait(self, event: threading.Event, until: float | None) -> bool:
        """Sleep (real time) until ``until`` or the event; the clock then reads ``until``, or
        the real elapsed time when the event came first."""
        while True:
            if event.is_set():
                self._t = max(self._t, min(self._real(), until if until is not None else float("inf")))
                return True
            if until is None:
                event.wait()
                continue
            remaining = (until - self._real()) / self.speed
            if remaining <= 0 or not event.wait(remaining):
                if not event.is_set():
                    self._t = max(self._t, until)
                    return False
