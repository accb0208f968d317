"""From encoder samples to spin observations: the angle model and the spin detector together,
plus the fault handling. :class:`RotationTracker` is pure (time comes with each sample);
:class:`RotationSource` is the :class:`~companion.sources.Source` the service runs.

Faults and what happens (each is logged once, none stops the service):

* link lost during a spin (unplugged, serial error): no stop is declared while no samples
  come; the spin ends *uncertain* when samples show it at rest;
* link back with the count continuous (same Pico power-on, e.g. renamed ttyACM0 -> ttyACM1):
  counts made meanwhile are kept, the angle stays right;
* link back after a Pico restart: the angle is unreferenced until the next index pulse or
  marker; a spin spanning it is uncertain;
* an index pulse far from where the count expected it: re-referenced, spin uncertain;
* a missed index pulse (more than 1.5 turns without one): logged, spin uncertain;
* no absolute reference yet: spins are reported, uncertain.
"""

from __future__ import annotations

import logging
import threading

from companion.clock import Clock
from companion.events import Observation
from companion.rotation.angle import AngleModel
from companion.rotation.observations import SpinStarted, SpinStopped
from companion.rotation.samples import (
    CountReader,
    CountSample,
    IndexPulse,
    LinkFault,
    LinkLost,
    LinkRestored,
    Sample,
)
from companion.rotation.spin import SpinDetector
from companion.sources import Emit

__all__ = ["RotationTracker", "RotationSource"]

log = logging.getLogger(__name__)


class RotationTracker:
    """Turns samples into :class:`SpinStarted` / :class:`SpinStopped` observations.

    Args:
        angle: the angle model (counts per turn, direction, reference).
        detector: the spin detector (settle time, dead band).

    Attributes:
        count: the last count (counts, unwrapped), or None before the first sample.
        speed_rps: the last speed estimate, turns per second (signed, ccw positive).
        connected: True once samples arrive; False between a lost link and its return.
        fault: the reason of a fatal reader fault, or None.
    """

    def __init__(self, angle: AngleModel, detector: SpinDetector):
        self.angle = angle
        self.detector = detector
        self.count: int | None = None
        self.speed_rps = 0.0
        self.connected = False
        self.fault: str | None = None
        self._doubts: list[str] = []
        self._last: tuple[float, int] | None = None
        self._missed_logged = False

    def _doubt(self, reason: str) -> None:
        if reason not in self._doubts:
            self._doubts.append(reason)

    def angle_deg(self) -> float | None:
        """The current angle (degrees), or None before any sample."""
        return None if self.count is None else self.angle.angle_deg(self.count)

    def feed(self, sample: Sample) -> list[Observation]:
        """Apply one sample; return the observations it causes (usually none)."""
        if isinstance(sample, CountSample):
            self.connected = True
            return self._count(sample.t, sample.count)
        if isinstance(sample, IndexPulse):
            check = self.angle.on_index(sample.count)
            self._missed_logged = False
            if not check.accepted:
                self._doubt(f"index pulse {check.drift_counts} counts off")
            return self._count(sample.t, sample.count)
        if isinstance(sample, LinkLost):
            log.warning("encoder link lost: %s", sample.reason)
            self.connected = False
            self._doubt("encoder link lost during the spin")
            return []
        if isinstance(sample, LinkRestored):
            self.connected = True
            if sample.continuous:
                log.info("encoder connected on %s", sample.port or "?")
            else:
                log.warning(
                    "encoder restarted (link back on %s): angle unknown until the next index "
                    "pulse", sample.port or "?",
                )
                self.angle.rebase()
                self._doubt("encoder restarted during the spin")
                self._last = None
                if not self.detector.spinning:
                    self.detector.reset()
            return []
        if isinstance(sample, LinkFault):
            log.error("encoder: %s", sample.reason)
            self.fault = sample.reason
            self.connected = False
            return []
        raise TypeError(f"not an encoder sample: {sample!r}")

    def marker_reference(self, angle_deg: float) -> float | None:
        """The camera saw the ArUco marker on the rotating part at ``angle_deg`` (degrees ccw
        from the reference, the same convention as the index): make that the angle of the
        current count.

        Taken only at rest (a moving part's marker reading is already stale) and once counts
        have arrived. Returns the correction applied (degrees, (-180, 180]), or None when the
        reading was not used.
        """
        if self.count is None or self.detector.spinning:
            return None
        correction = self.angle.set_reference(self.count, angle_deg)
        if abs(correction) > 1.0:
            log.info("marker reference moved the angle by %.1f degrees", correction)
        return correction

    def tick(self, t: float) -> list[Observation]:
        """Time is ``t`` (seconds) and no sample came: never a stop from time alone.

        A stop is declared only on evidence of rest: a sample at least the settle time after
        the last motion (:class:`~companion.rotation.spin.SpinDetector`), which :meth:`feed`
        reports as it arrives. Silence (a link gone quiet before its loss is detected, a
        reader behind on a busy machine, a link that is down) declares nothing: no data is not
        the same as no motion.
        """
        if not self.connected:
            return []
        return self._observe(self.detector.tick(t))

    def _count(self, t: float, count: int) -> list[Observation]:
        if self._last is not None:
            t0, c0 = self._last
            if t > t0:
                rps = self.angle.turns(count) - self.angle.turns(c0)
                self.speed_rps = rps / (t - t0)
        self._last = (t, count)
        self.count = count
        if self.angle.check_missed_index(count) and not self._missed_logged:
            self._missed_logged = True
            log.warning("no index pulse for 1.5 turns: missed index pulse (check the magnet)")
            self._doubt("missed index pulse")
        return self._observe(self.detector.feed(t, count))

    def _observe(self, events) -> list[Observation]:
        out: list[Observation] = []
        for kind, spin in events:
            if kind == "started":
                self._doubts = [] if self.connected else ["encoder link lost during the spin"]
                out.append(SpinStarted(t=spin.start_t,
                                       angle_deg=round(self.angle.angle_deg(spin.start_count), 3)))
            else:
                delta = self.angle.turns(spin.stop_count) - self.angle.turns(spin.start_count)
                doubts = list(self._doubts)
                if not self.angle.referenced:
                    doubts.append("no absolute reference yet (index pulse or marker)")
                if not self.connected:
                    doubts.append("encoder link is down")
                out.append(
                    SpinStopped(
                        t=spin.stop_t,
                        angle_deg=round(self.angle.angle_deg(spin.stop_count), 3),
                        revolutions=round(abs(delta), 4),
                        direction="ccw" if delta >= 0 else "cw",
                        uncertain=bool(doubts),
                        reason="; ".join(doubts),
                    )
                )
                self._doubts = []
                self.speed_rps = 0.0
        return out


class RotationSource:
    """The rotation :class:`~companion.sources.Source`: a reader and a tracker.

    Stops are declared by the samples themselves (every reader sends a heartbeat while the
    part rests), so no thread of its own is needed.

    Args:
        reader: the encoder backend (Pico, gpiozero, simulated).
        tracker: the tracker (owns the angle model and spin detector).
        on_sample: optional callback for every raw sample (the monitor's live display).
    """

    def __init__(self, reader: CountReader, tracker: RotationTracker, on_sample=None):
        self.reader = reader
        self.tracker = tracker
        self.on_sample = on_sample
        self._lock = threading.Lock()
        self._emit: Emit | None = None

    def start(self, emit: Emit, clock: Clock) -> None:
        """Start the reader; observations go to ``emit``."""
        self._emit = emit
        self.reader.start(self._on_sample, clock)

    def _on_sample(self, sample: Sample) -> None:
        with self._lock:
            obs = self.tracker.feed(sample)
        if self.on_sample is not None:
            self.on_sample(sample)
        for o in obs:
            self._emit(o)

    def marker_reference(self, angle_deg: float) -> float | None:
        """Thread-safe :meth:`RotationTracker.marker_reference` (called by the camera reader)."""
        with self._lock:
            return self.tracker.marker_reference(angle_deg)

    def stop(self) -> None:
        """Stop the reader; safe to call twice."""
        self.reader.stop()
