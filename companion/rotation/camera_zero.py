"""Camera and encoder together: the camera's angle at rest is the encoder's absolute zero, and a
carousel that slipped on its shaft is called.

A turning part read by both an encoder on its shaft and a camera (the marker on Monsieur
Carrousel's roof, the marker at the centre of Carrossel's board):

* **Zero**: no index magnet is needed. Until the camera has seen the part at rest, the
  encoder's angle is only relative to power-on: the angle model is unreferenced (spins stop
  *uncertain*, so the referee asks for the spin again rather than guess); the first camera
  angle at rest becomes the encoder's reference (:meth:`RotationTracker.marker_reference`).
* **Check**: each encoder stop is held until the camera has seen the part at rest (at most
  ``hold_s`` seconds); the two angles must agree within ``tolerance_deg`` (``[camera]
  slip_tolerance_deg``). Within it the encoder's stop goes on (its angle is the finer; a small
  difference re-zeroes the encoder on the camera, the absolute one). Beyond it the part turned
  on its shaft (a friction coupling slipped, the disc was lifted and put back): the service
  tells the table :class:`CarouselSlipped` ("the carousel slipped on its shaft:
  recalibrating"), the encoder is re-zeroed on the camera's angle, and the stop goes on with the
  camera's angle, *uncertain* (its turns cannot be trusted): the referee asks for the spin again.
* With no camera reading in ``hold_s`` (a hand over the roof) the encoder's stop goes on as it is.

Used by the Monsieur Carrousel kit and usable by any kit with a rotation source and a camera
that reads the part's angle (:class:`companion.rotation.camera_spin.CameraSpinTracker` gives
the rests). Thread-safe: the encoder's observations and the camera's rests may come from two
threads.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable
from typing import Any

from companion.events import Call, event_type

__all__ = ["CameraZero", "CarouselSlipped", "ZeroedRotation"]

log = logging.getLogger(__name__)


@event_type("carousel_slipped")
@dataclasses.dataclass(frozen=True, slots=True)
class CarouselSlipped(Call):
    """A call of the service: the camera and the encoder disagree on the turning part's angle
    at rest by more than the tolerance; the encoder is re-zeroed on the camera.

    Attributes:
        part: the turning part in the players' words (``"carousel"``, ``"board"``).
        offset_deg: the camera's angle minus the encoder's, degrees in (-180, 180].
    """

    part: str = "carousel"
    offset_deg: float = 0.0


def _wrap(d: float) -> float:
    return (d + 180.0) % 360.0 - 180.0


def _referenced(stop: Any, angle_deg: float) -> Any:
    """An encoder stop made before the zero, with the camera's angle: the turns were counted,
    so its only doubt (no absolute reference yet) is gone; any other doubt stays."""
    doubts = [d for d in str(getattr(stop, "reason", "") or "").split("; ")
              if d and not d.startswith("no absolute reference")]
    return dataclasses.replace(stop, angle_deg=round(angle_deg % 360.0, 3), uncertain=bool(doubts),
                               reason="; ".join(doubts))


class CameraZero:
    """Gives an encoder its zero from the camera and checks the two against each other.

    Args:
        tracker: the encoder's :class:`~companion.rotation.tracker.RotationSource` or
            :class:`~companion.rotation.tracker.RotationTracker` (``marker_reference(angle)``,
            and ``tracker.angle`` / ``angle`` the angle model).
        tolerance_deg: largest disagreement (degrees) that is not a slip.
        hold_s: longest an encoder stop waits for the camera (seconds of the stop's clock).
        tell: ``tell(call)`` tells the table a service call (``Service.tell``), or None.
        part: the part's name in the slip call.
        convert: turns the rotation observations into the game's own classes, or None.

    Call :meth:`wrap` on the encoder's ``emit`` and :meth:`at_rest` / :meth:`frame` from the
    camera. ``zeroed`` is True once the camera has given the zero; ``slips`` counts the slips.

    Raises:
        ValueError: ``tolerance_deg`` not in (0, 180) or ``hold_s`` < 0.
    """

    def __init__(self, tracker: Any, tolerance_deg: float = 5.0, hold_s: float = 2.0,
                 tell: Callable[[Call], None] | None = None, part: str = "carousel",
                 convert: Callable[[Any], Any] | None = None):
        if not (0 < tolerance_deg < 180 and hold_s >= 0):
            raise ValueError(f"tolerance_deg must be in (0, 180) and hold_s >= 0, got {tolerance_deg}, {hold_s}")
        self.tracker = tracker
        self.tolerance_deg = float(tolerance_deg)
        self.hold_s = float(hold_s)
        self.tell = tell
        self.part = part
        self.convert = convert
        self.zeroed = False
        self.slips = 0
        self._lock = threading.Lock()
        self._held: Any = None
        self._emit: Callable[[Any], None] | None = None
        model = self._model()
        if model is not None and not model.has_index:
            model.rebase()  # without an index magnet the power-on angle is no zero: wait for the camera

    def _model(self) -> Any:
        inner = getattr(self.tracker, "tracker", self.tracker)
        return getattr(inner, "angle", None)

    def _encoder_angle(self) -> float | None:
        inner = getattr(self.tracker, "tracker", self.tracker)
        return inner.angle_deg() if hasattr(inner, "angle_deg") else None

    def wrap(self, emit: Callable[[Any], None]) -> Callable[[Any], None]:
        """The encoder source's ``emit``: a ``spin_stopped`` is held for the camera's check,
        everything else goes on (converted)."""
        self._emit = emit

        def wrapped(obs: Any) -> None:
            out = self._on_encoder(obs)
            for o in out:
                emit(self.convert(o) if self.convert is not None else o)

        return wrapped

    def _on_encoder(self, obs: Any) -> list[Any]:
        with self._lock:
            if getattr(obs, "TYPE", "") != "spin_stopped":
                return [obs]
            released = [self._held] if self._held is not None else []
            self._held = obs
            return released

    def at_rest(self, t: float, camera_angle_deg: float) -> list[Any]:
        """The camera sees the part at rest at ``camera_angle_deg`` (degrees, the encoder's
        convention) at ``t`` (s): zero the encoder, or check it; returns the held encoder
        observations now released (also sent to the wrapped ``emit``)."""
        with self._lock:
            held, self._held = self._held, None
            model = self._model()
            encoder = self._encoder_angle()
            call = None
            if not self.zeroed or (model is not None and not model.referenced):
                if self.tracker.marker_reference(camera_angle_deg) is not None:
                    self.zeroed = True
                    log.info("the camera gave the encoder its zero: %.1f deg", camera_angle_deg)
                    if held is not None:  # the stop came before the zero: its angle was relative
                        held = _referenced(held, camera_angle_deg)
            elif encoder is not None:
                offset = _wrap(camera_angle_deg - encoder)
                if abs(offset) > self.tolerance_deg:
                    self.slips += 1
                    self.tracker.marker_reference(camera_angle_deg)
                    log.warning("camera %.1f deg, encoder %.1f deg: the %s slipped on its shaft; re-zeroed",
                                camera_angle_deg, encoder, self.part)
                    call = CarouselSlipped(t=t, part=self.part, offset_deg=round(offset, 2))
                    if held is not None:
                        held = dataclasses.replace(
                            held, angle_deg=round(camera_angle_deg % 360.0, 3), uncertain=True,
                            reason=f"the {self.part} slipped on its shaft ({offset:+.1f} deg from the camera)")
                elif abs(offset) > 1.0:  # within the tolerance: the camera is the absolute one
                    self.tracker.marker_reference(camera_angle_deg)
        if call is not None and self.tell is not None:
            self.tell(call)
        out = [held] if held is not None else []
        self._send(out)
        return out

    def frame(self, t: float) -> list[Any]:
        """A camera frame at ``t`` (s) without a rest reading: a held stop older than
        ``hold_s`` goes on unchecked; returns what was released."""
        with self._lock:
            held = self._held
            if held is None or t - held.t < self.hold_s:
                return []
            self._held = None
        self._send([held])
        return [held]

    def _send(self, out: list[Any]) -> None:
        if self._emit is None:
            return
        for o in out:
            self._emit(self.convert(o) if self.convert is not None else o)


class ZeroedRotation:
    """A rotation source whose observations pass through a :class:`CameraZero` (its stops are
    held for the camera's check, then converted by ``zero.convert``).

    Args:
        source: the encoder's :class:`~companion.rotation.tracker.RotationSource`.
        zero: the :class:`CameraZero` built on it.
    """

    def __init__(self, source: Any, zero: CameraZero):
        self.source = source
        self.zero = zero

    def start(self, emit: Callable[[Any], None], clock: Any) -> None:
        """Start the encoder; its observations go through the camera check to ``emit``."""
        self.source.start(self.zero.wrap(emit), clock)

    def stop(self) -> None:
        """Stop the encoder."""
        self.source.stop()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.source, name)
