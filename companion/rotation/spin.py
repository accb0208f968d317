"""The spin detector: from a stream of (time, count) to "a spin started" and "it stopped".

Pure: time arrives with each sample (seconds); no clock reads.

Rules:

* At rest, the count may jitter by a few counts (contact bounce, a vibrating table): movement
  within ``deadband_counts`` of the rest count is not motion.
* A single-sample spike (contact bounce, a jitter that adds to a slow creep) is not motion:
  the detector looks at the median of the last three samples.
* A spin starts when the count leaves the dead band around the rest count.
* During a spin, each move of more than ``deadband_counts`` from the last anchor is *motion*
  and moves the anchor.
* A stop needs evidence of rest: it is declared by the first sample taken at least
  ``settle_s`` after the last motion (the samples then span the whole settle window and show
  no motion), and ``stop_t`` is that sample's time. Time passing without samples declares
  nothing: no data is not the same as no motion (a serial link gone quiet before its loss is
  detected, a reader that falls behind on a busy machine). So every reader must send samples
  while the part rests (a heartbeat: the Pico's count lines at ``rate_hz``, the gpiozero
  reader's own timer, the simulated shaft's samples), and a stop is reported at most
  ``settle_s`` plus one heartbeat period after the last motion.

Choosing ``settle_s``: a part slowing down under friction at ``a`` counts/s² covers
``deadband + 1`` counts from the moment it would stop in ``sqrt(2 (deadband + 1) / a)``
seconds, the longest gap between two motions of a slowing spin. With 2400 counts per turn, a
dead band of 3 counts and the gentlest deceleration we measured on the simulated carousel
(0.3 turns/s² = 720 counts/s²) that is 0.12 s, so the default 0.25 s never takes a slowing spin
for a stop, and with 100 heartbeats a second a stop is reported at most 0.26 s after the last
motion, under the 0.3 s settle time used by open-source sensing chess boards.
``min_decel_counts_s2`` gives the bound for other set-ups (see ``docs/rotation.md``).
"""

from __future__ import annotations

import dataclasses
import math

__all__ = ["SpinDetector", "SpinState", "min_decel_counts_s2"]


def min_decel_counts_s2(settle_s: float, deadband_counts: int) -> float:
    """The gentlest deceleration (counts/s²) that ``settle_s`` still tells apart from a stop."""
    return 2.0 * (deadband_counts + 1) / (settle_s * settle_s)


@dataclasses.dataclass(frozen=True, slots=True)
class SpinState:
    """A started or finished spin as the detector saw it (counts unwrapped, times seconds)."""

    start_t: float
    start_count: int
    stop_t: float | None = None
    stop_count: int | None = None


class SpinDetector:
    """Detects spins from count samples.

    Args:
        settle_s: seconds without motion that make a stop (default 0.25).
        deadband_counts: jitter tolerated at rest (counts, default 3).

    ``feed`` and ``tick`` return a list of ``("started", SpinState)`` / ``("stopped",
    SpinState)`` pairs (usually empty). A stop is declared only by a sample at least
    ``settle_s`` after the last motion (see the module's rules), never by time alone.

    Attributes:
        last_motion_t: time (s) of the last motion (or of the first sample).
        last_sample_t: time (s) of the newest sample, None before the first.

    Raises:
        ValueError: settle_s <= 0 or deadband_counts < 0.
    """

    def __init__(self, settle_s: float = 0.25, deadband_counts: int = 3):
        if not (settle_s > 0 and math.isfinite(settle_s)):
            raise ValueError(f"settle_s must be > 0, got {settle_s}")
        if deadband_counts < 0:
            raise ValueError(f"deadband_counts must be >= 0, got {deadband_counts}")
        self.settle_s = settle_s
        self.deadband_counts = deadband_counts
        self.rest_count: int | None = None
        self.spin: SpinState | None = None
        self._anchor = 0
        self.last_motion_t = 0.0
        self.last_count: int | None = None
        self.last_sample_t: float | None = None
        self._recent: list[int] = []

    @property
    def spinning(self) -> bool:
        """True between a start and its stop."""
        return self.spin is not None

    def reset(self, count: int | None = None) -> None:
        """Forget the rest position (after a rebase); the next sample is taken as at rest."""
        self.rest_count = count
        self.spin = None
        self._recent = []

    def feed(self, t: float, count: int) -> list[tuple[str, SpinState]]:
        """Take one sample: ``count`` (counts, unwrapped) at ``t`` (seconds)."""
        out: list[tuple[str, SpinState]] = []
        self.last_count = count
        self.last_sample_t = t
        self._recent = (self._recent + [count])[-3:]
        count = sorted(self._recent)[len(self._recent) // 2]  # median of the last three
        if self.rest_count is None:
            self.rest_count = count
            self.last_motion_t = t
            return out
        if self.spin is None:
            if abs(count - self.rest_count) > self.deadband_counts:
                self.spin = SpinState(t, self.rest_count)
                self._anchor = count
                self.last_motion_t = t
                out.append(("started", self.spin))
            return out
        if abs(count - self._anchor) > self.deadband_counts:
            self._anchor = count
            self.last_motion_t = t
        out.extend(self._settled())
        return out

    def _settled(self) -> list[tuple[str, SpinState]]:
        """The stop, at the newest sample's time, once it is >= settle_s after the last motion."""
        s = self.last_sample_t
        if self.spin is None or s is None or s - self.last_motion_t < self.settle_s:
            return []
        end = self.last_count if self.last_count is not None else self._anchor
        done = dataclasses.replace(self.spin, stop_t=s, stop_count=end)
        self.spin = None
        self.rest_count = end
        return [("stopped", done)]

    def tick(self, t: float) -> list[tuple[str, SpinState]]:
        """Time is ``t`` (seconds) and nothing new came.

        Declares the stop only if the samples already received cover the settle time without
        motion (newest sample's time minus the last motion's >= ``settle_s``); ``t`` itself
        never makes a stop, however late: silence is not evidence of rest. :meth:`feed`
        declares the stop at the very sample that gives that evidence, so a caller polling
        on time gets nothing here that it has not had already.
        """
        return self._settled()
