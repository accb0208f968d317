"""The angle model: from an encoder count to the angle of the rotating part.

Pure: no clock, no I/O. Counts come in unwrapped (the readers undo the 32-bit wrap).

* ``counts_per_rev``: counts for one full turn of the *rotating part* (encoder counts per
  revolution of its own shaft times the coupling ratio), measured by
  ``companion calibrate encoder``.
* ``direction``: +1 when a rising count turns the part counter-clockwise seen from above,
  -1 otherwise (depends on which way the encoder is mounted and wired).
* Absolute zero: the index pulse (a magnet on the rotating part passing a hall sensor) fires at
  ``index_angle_deg``; or a camera sees an ArUco marker on the rotating part and gives an
  angle with :meth:`AngleModel.set_reference`. Until one of them has been seen the model is
  *unreferenced* (angles are relative to power-on) unless the setup has no index sensor, where
  the power-on position is the reference by definition.
* Drift correction: at each index pulse the count should match the reference; a difference of
  up to ``index_tolerance_counts`` (slip of a friction coupling, a few missed counts) is
  corrected; a larger one is reported (the index or the count is wrong).
* Missed index pulse: when the part has turned more than 1.5 turns since the last pulse while
  index pulses are expected, :meth:`AngleModel.check_missed_index` says so.
"""

from __future__ import annotations

import dataclasses
import logging

__all__ = ["AngleModel", "IndexCheck"]

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, slots=True)
class IndexCheck:
    """What one index pulse told the model.

    Attributes:
        drift_counts: count error corrected by this pulse (0 for the first reference).
        accepted: False when the error was larger than the tolerance (re-referenced anyway:
            the magnet is the absolute truth, but the spin in progress is uncertain).
        first: True when this pulse gave the first absolute reference.
    """

    drift_counts: int
    accepted: bool
    first: bool


class AngleModel:
    """Count -> angle of the rotating part.

    Args:
        counts_per_rev: counts per turn of the rotating part (> 0).
        direction: +1 (rising count = counter-clockwise seen from above) or -1.
        index_angle_deg: angle of the part (degrees) when the index pulse fires.
        has_index: whether an index sensor is fitted. Without one, the power-on position is
            0 degrees and the model is referenced from the start.
        index_tolerance_counts: largest drift corrected silently (counts); default 2 % of a turn.

    Raises:
        ValueError: counts_per_rev <= 0 or direction not +1/-1.
    """

    def __init__(
        self,
        counts_per_rev: float,
        direction: int = 1,
        index_angle_deg: float = 0.0,
        has_index: bool = True,
        index_tolerance_counts: float | None = None,
    ):
        if not counts_per_rev > 0:
            raise ValueError(f"counts_per_rev must be > 0, got {counts_per_rev}")
        if direction not in (1, -1):
            raise ValueError(f"direction must be +1 or -1, got {direction}")
        self.counts_per_rev = float(counts_per_rev)
        self.direction = direction
        self.index_angle_deg = index_angle_deg % 360.0
        self.has_index = has_index
        self.index_tolerance_counts = (
            0.02 * self.counts_per_rev if index_tolerance_counts is None else index_tolerance_counts
        )
        #: count at which the part is at 0 degrees
        self.zero_count: float = 0.0
        self.referenced = not has_index
        self.last_index_count: int | None = None
        self.total_drift_counts = 0.0

    def turns(self, count: float) -> float:
        """Signed turns of the part from the zero (counter-clockwise positive)."""
        return self.direction * (count - self.zero_count) / self.counts_per_rev

    def angle_deg(self, count: float) -> float:
        """Angle of the part, degrees in [0, 360), counter-clockwise seen from above."""
        return (self.turns(count) * 360.0) % 360.0

    def count_at(self, angle_deg: float, near: float) -> float:
        """The count nearest ``near`` at which the part is at ``angle_deg``."""
        base = self.zero_count + self.direction * (angle_deg / 360.0) * self.counts_per_rev
        k = round((near - base) / self.counts_per_rev)
        return base + k * self.counts_per_rev

    def set_reference(self, count: float, angle_deg: float) -> float:
        """Declare that at ``count`` the part is at ``angle_deg`` (e.g. from an ArUco marker).

        Returns the correction applied to the angle, degrees in (-180, 180].
        """
        before = self.angle_deg(count) if self.referenced else angle_deg
        self.zero_count = count - self.direction * (angle_deg / 360.0) * self.counts_per_rev
        self.referenced = True
        return ((angle_deg - before + 180.0) % 360.0) - 180.0

    def on_index(self, count: int) -> IndexCheck:
        """Apply an index pulse latched at ``count``; returns what it corrected."""
        self.last_index_count = count
        if not self.referenced:
            self.set_reference(count, self.index_angle_deg)
            return IndexCheck(0, True, True)
        expected = self.count_at(self.index_angle_deg, count)
        drift = count - expected
        self.set_reference(count, self.index_angle_deg)
        self.total_drift_counts += drift
        if abs(drift) > self.index_tolerance_counts:
            log.warning(
                "index pulse %.0f counts away from where the count expected it "
                "(tolerance %.0f): re-referenced on the index",
                drift,
                self.index_tolerance_counts,
            )
            return IndexCheck(round(drift), False, False)
        return IndexCheck(round(drift), True, False)

    def check_missed_index(self, count: float) -> bool:
        """True when index pulses are expected and the part has turned more than 1.5 turns
        since the last one (a missed pulse: magnet too far, sensor unplugged)."""
        if not self.has_index or self.last_index_count is None:
            return False
        return abs(count - self.last_index_count) > 1.5 * self.counts_per_rev

    def rebase(self) -> None:
        """The count restarted from an unknown position (the Pico rebooted): forget the
        reference until the next index pulse or marker (without an index sensor, until a
        marker is seen)."""
        self.referenced = False
        self.last_index_count = None
