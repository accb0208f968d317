"""Spins seen by the camera alone: a turning part's marker (Monsieur Carrousel's roof marker,
Carrossel's centre marker) read frame by frame, with no encoder.

Pure: time arrives with each reading (seconds); no clock reads, no I/O.

Rules (DESIGN.md, Vision; issue 12 item 5):

* At rest the part's angle stays within ``still_deg`` of its rest angle (reading noise is a few
  tenths of a degree; the swing back of a hand spin, 0.7-1.5 degrees, stays inside).
* A spin starts when the marker is read more than ``still_deg`` away from the rest angle; a
  marker lost at rest (a hand over it, the roof out of view) is not a spin until it is read
  again elsewhere.
* A spin ends when the marker has been read for ``settle_s`` with every reading within
  ``still_deg`` of the latest one (a lost frame restarts that wait); the rest angle is the
  latest reading (after the swing back).
* The turn is *followed* when every step between two readings of the spin was at most
  ``max_step_deg`` and came at most ``follow_gap_s`` after the one before: only then can the
  angle be unwrapped and the turns counted (a hand-turned carousel is assumed slower than
  ``max_step_deg / follow_gap_s``, 400 degrees a second with the defaults). A spin with a gap
  (the marker smeared by speed, a hand over the roof) is not followed: its turns are unknown.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

__all__ = ["CameraSpin", "CameraSpinTracker"]


def _wrap(d: float) -> float:
    """An angle difference in (-180, 180] degrees."""
    return (d + 180.0) % 360.0 - 180.0


@dataclasses.dataclass(frozen=True, slots=True)
class CameraSpin:
    """A spin start or stop seen by the camera.

    Attributes:
        kind: ``"started"`` or ``"stopped"``.
        t: seconds: when the part was last seen at rest before it moved (started), or when it
            had been still for the settle time (stopped).
        angle_deg: the rest angle (degrees 0-360) before the spin (started) or after it (stopped).
        turns: signed turns made (CCW positive) when the spin was followed, else None.
        followed: the camera followed the marker through the whole spin.
        direction: ``"ccw"`` or ``"cw"``: the net turn's sense when followed, else the sense
            of the first step seen.
    """

    kind: Literal["started", "stopped"]
    t: float
    angle_deg: float
    turns: float | None = None
    followed: bool = True
    direction: Literal["ccw", "cw"] = "ccw"


class CameraSpinTracker:
    """Turns a stream of marker angles into :class:`CameraSpin` starts and stops.

    Args:
        settle_s: seconds the marker must stay still for a stop (and for the first rest).
        still_deg: readings within this many degrees of each other are the part at rest.
        follow_gap_s: longest time between two readings of a followed spin (seconds).
        max_step_deg: largest step between two readings of a followed spin (degrees).

    Attributes:
        rest_deg: the angle at rest (degrees), None before the first rest or while it turns.
        moving: True between a start and its stop.

    Raises:
        ValueError: a parameter out of range.
    """

    def __init__(self, settle_s: float = 0.5, still_deg: float = 2.0, follow_gap_s: float = 0.25,
                 max_step_deg: float = 100.0):
        if not (settle_s >= 0 and still_deg > 0 and follow_gap_s > 0 and 0 < max_step_deg < 180):
            raise ValueError("settle_s >= 0, still_deg > 0, follow_gap_s > 0 and 0 < max_step_deg < 180 are needed")
        self.settle_s = float(settle_s)
        self.still_deg = float(still_deg)
        self.follow_gap_s = float(follow_gap_s)
        self.max_step_deg = float(max_step_deg)
        self.rest_deg: float | None = None
        self.moving = False
        self._window: list[tuple[float, float]] = []
        self._last: tuple[float, float] | None = None
        self._turn = 0.0
        self._followed = True
        self._first_sense = 1.0

    def feed(self, t: float, angle_deg: float | None) -> list[CameraSpin]:
        """Apply the reading of one frame at ``t`` (seconds): the marker's angle (degrees) or
        None when it was not read; returns the spins it starts or ends (usually none)."""
        if angle_deg is None:
            self._window = []  # the wait for a stop starts again with the next reading
            return []
        a = angle_deg % 360.0
        last = self._last
        self._last = (t, a)
        if not self.moving:
            if self.rest_deg is None:
                return self._first_rest(t, a)
            d = _wrap(a - self.rest_deg)
            if abs(d) <= self.still_deg:
                return []
            # it moved: followed from the last reading at rest if that one was just before
            self.moving = True
            self._turn = d
            self._first_sense = 1.0 if d >= 0 else -1.0
            self._followed = last is not None and t - last[0] <= self.follow_gap_s and abs(d) <= self.max_step_deg
            start = CameraSpin("started", last[0] if last is not None else t, self.rest_deg,
                               direction="ccw" if d >= 0 else "cw")
            self.rest_deg = None
            self._window = [(t, a)]
            return [start]
        assert last is not None
        step = _wrap(a - last[1])
        if t - last[0] > self.follow_gap_s or abs(step) > self.max_step_deg:
            self._followed = False
        self._turn += step
        self._push(t, a)
        if self._window[-1][0] - self._window[0][0] < self.settle_s:
            return []
        self.moving = False
        self.rest_deg = a
        self._window = []
        turns = self._turn / 360.0 if self._followed else None
        sense = (1.0 if self._turn >= 0 else -1.0) if self._followed else self._first_sense
        return [CameraSpin("stopped", t, a, turns, self._followed, "ccw" if sense > 0 else "cw")]

    def _push(self, t: float, a: float) -> None:
        """Keep the latest run of readings that all lie within ``still_deg`` of the newest."""
        w = self._window
        w.append((t, a))
        keep = len(w) - 1
        while keep > 0 and abs(_wrap(w[keep - 1][1] - a)) <= self.still_deg:
            keep -= 1
        del w[:keep]

    def _first_rest(self, t: float, a: float) -> list[CameraSpin]:
        self._push(t, a)
        if self._window[-1][0] - self._window[0][0] >= self.settle_s:
            self.rest_deg = a
            self._window = []
        return []
