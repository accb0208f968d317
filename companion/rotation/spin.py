"""The spin detector: from a stream of (time, count) to "a spin started" and "it stopped".

Pure: time arrives with each sample (seconds); no clock reads.

Rules:

* A spike is not motion: a change of at most ``deadband_counts`` that comes back to the count
  before it within ``spike_samples`` samples (contact bounce, chatter at rest) is dropped. A
  change still there after ``spike_samples`` samples, or a jump larger than the dead band
  (which neither bounce nor chatter make: the part turned), is kept with the time of its first
  sample. Until a small change is settled either way the detector declares nothing.
* A spin starts when the count leaves ``deadband_counts`` around the rest count.
* During a spin, *motion* is a count outside the span of counts seen since the last motion.
  Every new count of a part still creeping forward is motion, and so is a swing back that
  takes the part more than ``rest_band_counts`` behind where it turned; a count flickering
  between ``rest_band_counts + 1`` neighbouring values (a part resting on an encoder edge
  of a vibrating table) is not. After motion, the span is the run of latest samples that lie
  within ``rest_band_counts`` of each other.
* A stop needs evidence of rest: it is declared by the first sample taken at least
  ``settle_s`` after the last motion, once every change before it is settled; ``stop_t`` is
  that sample's time and ``stop_count`` the count it settled on. Time passing without samples
  declares nothing: no data is not the same as no motion (a serial link gone quiet before
  its loss is detected, a reader that falls behind on a busy machine). So every reader must
  send samples while the part rests (a heartbeat: the Pico's count lines at ``rate_hz``, the
  gpiozero reader's own timer, the simulated shaft's samples).

The small reverse motion at the end of a hand spin is part of the same spin. A light carousel
twists its pivot under the friction torque while it slows; when it stops, the twist springs
back and carries it 0.7 to 1.5 degrees back, to rest 0.27 to 0.34 s after the swing began (real
hand spins). At the turn the part is still for a moment: the last forward count comes at most
``sqrt(2 / a)`` before the turn (deceleration ``a`` counts/s²), and the swing, a half-cosine of
amplitude ``A`` counts and duration ``T``, leaves the rest band ``T acos(1 - 2 (band + 1) / A)
/ pi`` after it (:func:`turnaround_s`). The stop is safe when that, plus up to three sample
periods (one of sampling, two more when the first count back bounces), stays under
``settle_s``: with 2400 counts a turn, a rest band of 1 count, a swing of at least 0.7 degrees
(4.7 counts) in at most 0.34 s, 100 samples a second and the default 0.25 s, any end
deceleration above 0.2 turns/s² (:func:`min_decel_counts_s2` gives the plain spin's bound, 32
counts/s²). A stop is then reported ``settle_s`` after the true rest plus one sample period,
and two more when the last count bounces: 0.26 s, at most 0.28 s, at 100 samples a second.
See ``docs/rotation.md``.
"""

from __future__ import annotations

import dataclasses
import math

__all__ = ["SpinDetector", "SpinState", "min_decel_counts_s2", "turnaround_s"]


def min_decel_counts_s2(settle_s: float, deadband_counts: int = 0) -> float:
    """The gentlest deceleration (counts/s²) that ``settle_s`` still tells apart from a stop.

    A part slowing at ``a`` counts/s² covers ``deadband_counts + 1`` counts from the moment
    it would stop in ``sqrt(2 (deadband_counts + 1) / a)`` seconds, the longest gap between two
    motions when motion is seen every ``deadband_counts + 1`` counts. :class:`SpinDetector`
    sees every new count as motion while a spin creeps on, so its bound is
    ``min_decel_counts_s2(settle_s)`` (32 counts/s² at 0.25 s, 0.013 turns/s² at 2400 counts a
    turn); ``deadband_counts`` gives it for a detector that only sees larger steps.

    Raises:
        ValueError: settle_s <= 0.
    """
    if not settle_s > 0:
        raise ValueError(f"settle_s must be > 0, got {settle_s}")
    return 2.0 * (deadband_counts + 1) / (settle_s * settle_s)


def turnaround_s(decel_counts_s2: float, swing_counts: float, swing_s: float,
                 rest_band_counts: int = 1) -> float:
    """The longest a part swinging back at the end of a spin looks at rest (seconds).

    From its last new count forward (at most ``sqrt(2 / decel)`` before it turns, under a
    deceleration ``decel_counts_s2``) to the first count of the swing back outside the rest
    band (``rest_band_counts`` + 1 counts behind the count it turned on, at most): the swing is
    a half-cosine of amplitude ``swing_counts`` over ``swing_s`` seconds (the elastic return
    of :class:`~companion.rotation.simulated.SimulatedShaft`). A detector with settle time
    ``settle_s`` never ends the spin at the turn when this, plus its spike filter's wait and
    one sample period, is under ``settle_s``. ``math.inf`` when the swing never leaves the
    rest band (its ``swing_counts`` at most ``rest_band_counts + 1``: the swing then stays in
    the counts the stop reports, and may end after the stop).

    Raises:
        ValueError: a deceleration, amplitude or duration that is not > 0.
    """
    if not (decel_counts_s2 > 0 and swing_counts > 0 and swing_s > 0):
        raise ValueError("decel_counts_s2, swing_counts and swing_s must be > 0, got "
                         f"{decel_counts_s2}, {swing_counts}, {swing_s}")
    reach = 2.0 * (rest_band_counts + 1) / swing_counts  # 1 - cos(phase) to leave the band
    if reach >= 2.0:
        return math.inf
    return math.sqrt(2.0 / decel_counts_s2) + swing_s * math.acos(1.0 - reach) / math.pi


@dataclasses.dataclass(frozen=True, slots=True)
class SpinState:
    """A started or finished spin as the detector saw it (counts unwrapped, times seconds)."""

    start_t: float
    start_count: int
    stop_t: float | None = None
    stop_count: int | None = None


class SpinDetector:
    """Detects spins from count samples (see the module's rules).

    Args:
        settle_s: seconds without motion that make a stop (default 0.25).
        deadband_counts: how far (counts) the count must leave the rest count to start a spin
            (jitter tolerated at rest; default 3).
        rest_band_counts: counts a resting part may flicker over without it being motion
            (default ``min(1, deadband_counts)``: a part resting on an encoder edge).
        spike_samples: a change that returns within this many samples is a spike (default 2).

    ``feed`` and ``tick`` return a list of ``("started", SpinState)`` / ``("stopped",
    SpinState)`` pairs (usually empty). A stop is declared only by a sample at least
    ``settle_s`` after the last motion, never by time alone.

    Attributes:
        last_motion_t: time (s) of the last motion (or of the first sample).
        last_count: the newest raw count, None before the first sample.
        last_sample_t: time (s) of the newest sample, None before the first.
        rest_count: the count the part rests at (counts), None before the first sample.

    Raises:
        ValueError: settle_s <= 0, deadband_counts < 0, rest_band_counts outside 0 to
            deadband_counts, or spike_samples < 0.
    """

    def __init__(self, settle_s: float = 0.25, deadband_counts: int = 3,
                 rest_band_counts: int | None = None, spike_samples: int = 2):
        if not (settle_s > 0 and math.isfinite(settle_s)):
            raise ValueError(f"settle_s must be > 0, got {settle_s}")
        if deadband_counts < 0:
            raise ValueError(f"deadband_counts must be >= 0, got {deadband_counts}")
        if rest_band_counts is None:
            rest_band_counts = min(1, deadband_counts)
        if not 0 <= rest_band_counts <= deadband_counts:
            raise ValueError(f"rest_band_counts must be from 0 to deadband_counts "
                             f"({deadband_counts}), got {rest_band_counts}")
        if spike_samples < 0:
            raise ValueError(f"spike_samples must be >= 0, got {spike_samples}")
        self.settle_s = settle_s
        self.deadband_counts = deadband_counts
        self.rest_band_counts = rest_band_counts
        self.spike_samples = spike_samples
        self.rest_count: int | None = None
        self.spin: SpinState | None = None
        self.last_motion_t = 0.0
        self.last_count: int | None = None
        self.last_sample_t: float | None = None
        self._settled: int | None = None  # the count once spikes are dropped
        self._pending: list[tuple[float, int]] = []  # changes not yet settled
        self._runs: list[list] = []  # [count, first t] of the settled counts since the last motion
        self._lo = self._hi = 0  # span of counts since the last motion
        self._seen_from = -math.inf  # time of the first sample after the last long silence

    @property
    def spinning(self) -> bool:
        """True between a start and its stop."""
        return self.spin is not None

    def reset(self, count: int | None = None) -> None:
        """Forget the rest position (after a rebase); ``count`` (counts) is the new rest
        count, or None: the next sample is taken as at rest."""
        self.rest_count = count
        self.spin = None
        self._settled = count
        self._pending = []
        t = self.last_sample_t if self.last_sample_t is not None else 0.0
        self._runs = [] if count is None else [[count, t]]
        if count is not None:
            self._lo = self._hi = count

    def feed(self, t: float, count: int) -> list[tuple[str, SpinState]]:
        """Take one sample: ``count`` (counts, unwrapped) at ``t`` (seconds)."""
        if self.last_sample_t is not None and t - self.last_sample_t > self.settle_s:
            # a silence longer than the settle time shows nothing: rest is seen again after it
            # (and the first samples after it may be a backlog, all stamped when read)
            self._seen_from = t
        self.last_count = count
        self.last_sample_t = t
        if self._settled is None:
            self._settled = count
            if self.rest_count is None:
                self.rest_count = count
            self._runs = [[count, t]]
            self._lo = self._hi = count
            self.last_motion_t = t
            return []
        out: list[tuple[str, SpinState]] = []
        if count == self._settled:
            self._pending.clear()  # what differed came back: a spike
        else:
            self._pending.append((t, count))
            del self._pending[:-(self.spike_samples + 1)]  # older ones were inconclusive
            big = abs(count - self._settled) > self.deadband_counts  # no bounce or chatter
            if big or self._one_side():
                for pt, pc in self._pending:  # a real change: kept with its own times
                    out.extend(self._settle(t, pt, pc))
                self._pending.clear()
        if not self._pending:
            out.extend(self._rested())
        return out

    def _one_side(self) -> bool:
        """The last ``spike_samples + 1`` samples all differ from the settled count on the
        same side: a change (chatter that jumps both ways is not)."""
        if len(self._pending) <= self.spike_samples:
            return False
        above = [c > self._settled for _, c in self._pending]
        return all(above) or not any(above)

    def _settle(self, now: float, t: float, count: int) -> list[tuple[str, SpinState]]:
        """A settled count ``count`` first seen at ``t`` (s), known at ``now`` (s)."""
        out: list[tuple[str, SpinState]] = []
        if count != self._settled:
            self._settled = count
            self._runs.append([count, t])
        if not self._lo <= count <= self._hi:  # motion: outside the span since the last motion
            self.last_motion_t = t
            lo = hi = count
            keep = len(self._runs) - 1
            while keep > 0:  # the latest runs within the rest band of each other
                c = self._runs[keep - 1][0]
                if max(hi, c) - min(lo, c) > self.rest_band_counts:
                    break
                lo, hi, keep = min(lo, c), max(hi, c), keep - 1
            del self._runs[:keep]
            self._lo, self._hi = lo, hi
        if self.spin is None:
            if abs(count - self.rest_count) > self.deadband_counts:
                self.spin = SpinState(now, self.rest_count)
                self.last_motion_t = t
                out.append(("started", self.spin))
            else:
                del self._runs[:-2]  # at rest the history is not needed
        return out

    def _rested(self) -> list[tuple[str, SpinState]]:
        """The stop, at the newest sample's time, once it is >= settle_s after the last motion."""
        s = self.last_sample_t
        if self.spin is None or s is None or self._pending:
            return []
        since = max(self.last_motion_t, self._seen_from)
        if s - since < self.settle_s - 1e-9:  # 1 ns: sums of sample periods
            return []
        done = dataclasses.replace(self.spin, stop_t=s, stop_count=self._settled)
        self.spin = None
        self.rest_count = self._settled
        del self._runs[:-2]
        return [("stopped", done)]

    def tick(self, t: float) -> list[tuple[str, SpinState]]:
        """Time is ``t`` (seconds) and nothing new came.

        Declares the stop only if the samples already received cover the settle time without
        motion (newest sample's time minus the last motion's >= ``settle_s``); ``t`` itself
        never makes a stop, however late: silence is not evidence of rest. :meth:`feed`
        declares the stop at the very sample that gives that evidence, so a caller polling
        on time gets nothing here that it has not had already.
        """
        if self._pending:
            return []
        return self._rested()
