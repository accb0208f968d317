"""Clocks for the service loop: the session time in seconds, real, accelerated or manual.

The rules engines never read a clock; the service loop does, through one of these, and puts
the time into each observation. Tests inject :class:`ManualClock` and advance it by hand, so
no test sleeps to wait for time.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Protocol

__all__ = ["Clock", "MonotonicClock", "ManualClock", "PacedClock"]

log = logging.getLogger("companion.clock")


def _held_wait(event: threading.Event, until: float | None, now: float, speed: float) -> bool:
    """``wait`` of a held clock: session time stands still, so ``until`` is never reached;
    wait for ``event`` at most the real time ``until`` is away, ``(until - now) / speed``
    seconds (the heartbeat's period), None = no limit. The clock does not move."""
    if until is None:
        return event.wait()
    return event.wait(max(0.0, (until - now) / speed))


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
        self._held: float | None = None

    def now(self) -> float:
        """The session time now, seconds (the time it was held at, while held)."""
        held = self._held
        if held is not None:
            return held
        return self._origin + (time.monotonic() - self._start) * self.speed

    def hold(self) -> None:
        """Stop session time where it is (the players' pause); safe to call twice."""
        if self._held is None:
            self._held = self.now()

    def release(self) -> None:
        """Let session time go on from where it was held; safe when not held."""
        held = self._held
        if held is not None:
            self._origin, self._start = held, time.monotonic()
            self._held = None

    @property
    def held(self) -> bool:
        """True while :meth:`hold` stops the time."""
        return self._held is not None

    def wait(self, event: threading.Event, until: float | None) -> bool:
        """Wait on ``event`` at most until session time ``until`` (held: see :meth:`hold`)."""
        if self._held is not None:
            return _held_wait(event, until, self._held, self.speed)
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
        self.held = False

    def now(self) -> float:
        """The current session time, seconds."""
        return self._t

    def hold(self) -> None:
        """Stop session time (the players' pause): :meth:`advance` and :meth:`set` then leave
        it where it is, as real time passing does to a held clock."""
        self.held = True

    def release(self) -> None:
        """Let session time move again from where it was held."""
        self.held = False

    def advance(self, seconds: float) -> float:
        """Move the time forward (not while held); returns the new time. Raises ValueError
        when negative."""
        if seconds < 0:
            raise ValueError("a clock does not go backwards")
        if not self.held:
            self._t += seconds
        return self._t

    def set(self, t: float) -> None:
        """Move the time forward to ``t`` (ignored when ``t`` is in the past, or while held)."""
        if not self.held:
            self._t = max(self._t, t)

    def wait(self, event: threading.Event, until: float | None) -> bool:
        """Return at once: True when the event is set, else jump to ``until`` and False.
        While held, time cannot jump: it waits for the event (see :func:`_held_wait`)."""
        if event.is_set():
            return True
        if self.held:
            return _held_wait(event, until, self._t, self.speed)
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

    When the game cannot keep up (each event handled takes more real time than ``speed``
    allows), the session time falls behind the real one; it is said once in the log
    (``companion.clock``, a warning) when it is :attr:`BEHIND_S` real seconds late, with the
    speed this machine keeps, and again each time the delay doubles. :attr:`behind_s` is the
    delay in real seconds at the last wait.

    Args:
        origin: the session time (s) to start from.
        speed: session seconds per real second.
        monotonic: the real clock, seconds (default :func:`time.monotonic`; tests give their own).
    """

    #: real seconds late before the falling behind is said
    BEHIND_S = 2.0

    def __init__(self, origin: float = 0.0, speed: float = 1.0, monotonic: Callable[[], float] = time.monotonic):
        if speed <= 0:
            raise ValueError(f"speed must be > 0, got {speed}")
        self.speed = speed
        self._monotonic = monotonic
        self._t = origin
        self._origin = origin
        self._start = monotonic()
        self.held = False
        self.behind_s = 0.0
        self._told_behind = 0.0
        self._paced = False  # the first wait rebases: the service's start-up is no game time

    def _late(self, until: float) -> None:
        """Note how late (real s) the game reaches ``until``; say it when it first passes
        :attr:`BEHIND_S`, then at each doubling."""
        real = self._monotonic()
        self.behind_s = max(0.0, (self._origin + (real - self._start) * self.speed - until) / self.speed)
        if self.behind_s >= max(self.BEHIND_S, 2 * self._told_behind):
            elapsed = max(real - self._start, 1e-9)
            kept = max(until - self._origin, 0.0) / elapsed
            log.warning("the simulated game falls behind --speed %g: %.1f s of real time late; this machine "
                        "keeps about %.1f x real time here", self.speed, self.behind_s, kept)
            self._told_behind = self.behind_s

    def now(self) -> float:
        """The simulated session time, seconds."""
        return self._t

    def hold(self) -> None:
        """Stop session time at the event being handled (the players' pause)."""
        self.held = True

    def release(self) -> None:
        """Let session time go on, paced again from now, from where it was held."""
        if self.held:
            self._origin, self._start = self._t, self._monotonic()
            self.held = False

    def _real(self) -> float:
        return self._origin + (self._monotonic() - self._start) * self.speed

    def wait(self, event: threading.Event, until: float | None) -> bool:
        """Sleep (real time) until ``until`` or the event; the clock then reads ``until``, or
        the real elapsed time when the event came first. While held it does not move."""
        if self.held:
            return _held_wait(event, until, self._t, self.speed)
        if not self._paced:  # paced from the game's first wait, as after a pause
            self._paced = True
            if self._real() > self._t:
                self._origin, self._start = self._t, self._monotonic()
        while True:
            if event.is_set():
                self._t = max(self._t, min(self._real(), until if until is not None else float("inf")))
                return True
            if until is None:
                event.wait()
                continue
            remaining = (until - self._real()) / self.speed
            if remaining < 0:
                self._late(until)
            if remaining <= 0 or not event.wait(remaining):
                if not event.is_set():
                    self._t = max(self._t, until)
                    return False
