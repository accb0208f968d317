"""The health of the table's parts: what ``--table hardware`` needs and what was lost while playing.

A real table is made of parts: the GPIO pins (buttons, LEDs, buzzer), the camera, the shaft
encoder (the Pico on USB, or GPIO), the audio output, the entry socket. At start, a part that is
missing raises :class:`PartMissing`, which ``companion run`` prints as one line naming the part
and the fix. While playing, a part that stops working is reported to :class:`Parts`; the service
then tells the table (a :class:`PartLost` call, spoken and shown like any call), withholds the
referee's deadlines until the part is back (:class:`PartBack`), and ``companion status`` shows
each part's state.

``part_lost`` and ``part_back`` are calls of the service, not of a rules engine: they are
announced, logged and shown, but not journaled as game calls (the journal holds what the referee
decided; a replay reproduces it without them).
"""

from __future__ import annotations

import dataclasses
import logging
import re
import threading
from collections.abc import Callable
from typing import Any

from companion.events import Call, event_type

__all__ = ["PartMissing", "PartLost", "PartBack", "Parts", "PART_STATES", "state_key"]

log = logging.getLogger("companion.health")

#: The states a part can be in, as ``companion status`` prints them.
PART_STATES = ("ok", "lost", "missing", "mock", "simulated")


_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def state_key(text: str) -> str:
    """A part's state line with its figures taken out: what the log says once per change.

    ``"camera frozen: the same frame for 3.1 s"`` and ``"... for 3.2 s"`` are one state
    (``"camera frozen: the same frame for # s"``); a source logs a line when this key changes,
    not on every frame whose figure moved.

    Args:
        text: the state line (``"board visible"``, ``"colour lost: ..."``).

    Returns:
        ``text`` with every decimal number replaced by ``#``.
    """
    return _NUMBER.sub("#", text)


class PartMissing(Exception):
    """A part that ``--table hardware`` needs is missing or fails at start.

    Args:
        part: the part in the players' words (``"camera"``, ``"encoder (Pico on USB)"``).
        problem: what is wrong (``"no camera found by picamera2"``).
        fix: what to do (``"connect the camera's ribbon cable ..."``).

    ``str()`` is the one line ``companion run`` prints: ``camera: no camera found ...; fix: ...``.
    """

    def __init__(self, part: str, problem: str, fix: str):
        super().__init__(f"{part}: {problem}; fix: {fix}")
        self.part = part
        self.problem = problem
        self.fix = fix


@event_type("part_lost")
@dataclasses.dataclass(frozen=True, slots=True)
class PartLost(Call):
    """A part stopped working while playing; the game pauses until it is back.

    Attributes:
        part: the part (``camera``, ``encoder``, ``pins``, ``audio``).
        fix: what the table should do, in plain words.
    """

    part: str = ""
    fix: str = ""


@event_type("part_back")
@dataclasses.dataclass(frozen=True, slots=True)
class PartBack(Call):
    """A lost part works again; the game goes on."""

    part: str = ""


class Parts:
    """Thread-safe register of the table's parts and their states.

    Sources call :meth:`lost` and :meth:`back` from any thread; ``tell`` (the service's
    :meth:`~companion.service.Service.tell`) announces the change on the loop's thread.

    Args:
        tell: ``tell(call)`` announces a :class:`PartLost` / :class:`PartBack`; None until the
            service is built (changes are then only recorded).
        clock: ``clock()`` -> session seconds, the time of the calls (default 0).
    """

    def __init__(self, tell: Callable[[Call], None] | None = None, clock: Callable[[], float] | None = None):
        self.tell = tell
        self.clock = clock or (lambda: 0.0)
        self._lock = threading.Condition()
        self._parts: dict[str, dict[str, str]] = {}

    def set(self, part: str, state: str, detail: str = "") -> None:
        """Record ``part`` as ``state`` (one of :data:`PART_STATES`) with a detail line."""
        if state not in PART_STATES:
            raise ValueError(f"part state: expected one of {', '.join(PART_STATES)}, got {state!r}")
        with self._lock:
            self._parts[part] = {"state": state, "detail": detail}
            self._lock.notify_all()

    def lost(self, part: str, detail: str, fix: str) -> None:
        """``part`` stopped working: record it, log one line, tell the table once."""
        with self._lock:
            was = self._parts.get(part, {}).get("state")
            self._parts[part] = {"state": "lost", "detail": detail}
            self._lock.notify_all()
        if was == "lost":
            return
        log.warning("%s lost: %s (%s)", part, detail, fix)
        if self.tell is not None:
            self.tell(PartLost(t=self.clock(), part=part, fix=fix))

    def back(self, part: str, detail: str = "") -> None:
        """``part`` works again: record it and tell the table (only if it had been lost)."""
        with self._lock:
            was = self._parts.get(part, {}).get("state")
            self._parts[part] = {"state": "ok", "detail": detail}
            self._lock.notify_all()
        if was != "lost":
            return
        log.info("%s back%s", part, f": {detail}" if detail else "")
        if self.tell is not None:
            self.tell(PartBack(t=self.clock(), part=part))

    def wait_for(self, part: str, state: str, timeout_s: float) -> bool:
        """Block until ``part`` is in ``state`` (or ``timeout_s`` seconds pass); True if it is."""
        with self._lock:
            return self._lock.wait_for(lambda: self._parts.get(part, {}).get("state") == state, timeout_s)

    @property
    def any_lost(self) -> bool:
        """True while at least one part is lost (the game is paused)."""
        with self._lock:
            return any(p["state"] == "lost" for p in self._parts.values())

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """``{part: {"state": ..., "detail": ...}}``, a copy (for ``companion status``)."""
        with self._lock:
            return {k: dict(v) for k, v in self._parts.items()}
