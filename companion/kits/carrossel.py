"""Carrossel's kit: the simulated table (a seeded stream of a whole game) and the real one (the
round board's angle from the shaft encoder; the face-down plays, the choices and the abilities,
which no sensor sees, from the entry source).

Angle convention: the engine's ``board_turned.angle_deg`` is degrees clockwise seen from above,
0 = the board as it stood at setup. The encoder's tracker reports degrees counter-clockwise
(``[encoder] direction`` says which way a rising count turns); this kit converts, taking the
encoder's angle when the game starts (or resumes) as the board's angle the referee expects.

With a camera, the reader's angle of the board at setup (the camera's zero) is kept in the
session's table settings (``carrossel_camera_zero_ccw``, :meth:`~companion.service.Service.note_table`):
a game resumed after a restart reads the board against it, so a board turned while the companion
was down is a turn, not the angle the referee expects.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from companion.assembly import Kit, Rig, Table

__all__ = ["KIT", "BoardAngle"]

log = logging.getLogger("companion.kits.carrossel")

ZERO_KEY = "carrossel_camera_zero_ccw"


def _saved_zero(t: Table) -> float | None:
    """The camera's zero kept with a resumed game (degrees CCW), or None."""
    value = t.opened.table.get(ZERO_KEY) if t.resumed else None
    return float(value) % 360.0 if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _keeping_zero(t: Table, expected: float, then: Any = None) -> Any:
    """An ``on_rest(t_s, ccw_deg)`` that keeps the camera's zero with the session the first
    time the board is seen at rest in a new game (the camera takes that angle as ``expected``,
    degrees clockwise from setup), then calls ``then``."""
    kept = [_saved_zero(t) is not None]

    def on_rest(t_s: float, ccw_deg: float) -> None:
        if not kept[0]:
            note = getattr(t.parts, "note_table", None)
            if note is not None:
                note({ZERO_KEY: round((ccw_deg + expected) % 360.0, 3)})
                kept[0] = True
        if then is not None:
            then(t_s, ccw_deg)

    return on_rest


def _options(config: Any) -> dict[str, Any]:
    return dict(config["carrossel"])


def simulated(t: Table) -> Rig:
    """A seeded stream of a whole game: plays, choices, turns of the board. With
    ``options["camera"] = "sim[:SEED]"`` the game is laid out on the simulated camera's table and
    the referee learns the board's turns and the plays without an ability from rendered frames
    alone (:class:`~companion.sim.carrossel_camera.CameraCarrosselTable`)."""
    from companion.sim.carrossel import SimulatedCarrosselTable

    camera = t.options.get("camera")
    if camera is None:
        sim = SimulatedCarrosselTable(seed=t.seed, players=t.players, referee=t.referee)
        return Rig(sources=[sim], scheduled=[sim], resume=sim.resume)
    return _simulated_camera(t, camera)


def _simulated_camera(t: Table, spec: str) -> Rig:
    from companion.sim.carrossel_camera import CameraCarrosselTable
    from companion.sources.carrossel_camera import (
        CarrosselWatch,
        ScheduledCarrosselCamera,
        carrossel_camera_from_config,
    )
    from companion.vision.sim_carrossel import SimulatedCarrosselCamera

    if spec != "sim" and not (spec.startswith("sim:") and spec[4:].isdigit()):
        raise ValueError(f"--camera {spec}: the simulated table's camera is sim or sim:SEED (a whole number)")
    seed = int(spec[4:]) if spec.startswith("sim:") else t.seed
    frames = SimulatedCarrosselCamera(seed=seed, clock=t.clock.now)
    watch = CarrosselWatch(t.referee, t.opened.state, tell=lambda call: _tell(t, call))
    table = CameraCarrosselTable(frames, seed=t.seed, players=t.players, referee=t.referee,
                                 play_time_s=t.config["sim"]["move_time_s"], start_t=t.clock.now())
    expected = watch.expected_angle_deg()
    # the source logs its state; a resumed table goes on once the camera has seen the board at rest
    source = carrossel_camera_from_config(t.config, frames, watch=watch, on_status=None, expected_deg=expected,
                                          on_rest=_keeping_zero(t, expected, table.camera_at_rest))
    if _saved_zero(t) is not None:
        source.resume_zero(_saved_zero(t))
    period = t.config["camera"]["frame_period_s"] or 0.1
    camera = ScheduledCarrosselCamera(source, period_s=period, start_t=t.clock.now())
    t.parts.set("camera", "simulated", spec)
    return Rig(sources=[table, camera], scheduled=[table, camera], announcers=[table], observers=[watch],
               camera=source, resume=table.resume)


def _tell(t: Table, call: Any) -> None:
    """Tell the table a call of the service (a disagreement of the camera and the referee)."""
    if t.parts.tell is not None:
        t.parts.tell(call)
    else:
        log.warning("camera: %s", call.to_json())


class BoardAngle:
    """Turns the rotation tracker's stops into Carrossel's ``board_turned`` observations.

    Args:
        expected_deg: the board's angle (degrees clockwise from setup) the referee expects now.
        follow_encoder: take the reference from the encoder's first angle (a ``spin_started``);
            False when the camera gives it (:meth:`reference` with the camera's angle at rest).
        zero_ccw: the camera's angle of the board at setup kept from before a restart (degrees
            CCW), or None: then the first angle seen is taken as ``expected_deg``.

    The first stop or sample angle seen (counter-clockwise, the tracker's) is taken as
    ``expected_deg``; later stops are reported relative to it, clockwise.
    """

    def __init__(self, expected_deg: float = 0.0, follow_encoder: bool = True, zero_ccw: float | None = None):
        self.expected_deg = expected_deg
        self.follow_encoder = follow_encoder
        self._zero_ccw: float | None = zero_ccw
        self._lock = threading.Lock()

    def reference(self, ccw_deg: float) -> None:
        """Take ``ccw_deg`` (the tracker's angle now) as the board at ``expected_deg``."""
        with self._lock:
            if self._zero_ccw is None:
                self._zero_ccw = ccw_deg + self.expected_deg  # clockwise = minus counter-clockwise

    def convert(self, obs: Any) -> Any:
        """``spin_stopped`` -> ``board_turned`` (clockwise degrees from setup); others dropped."""
        from companion.games.carrossel import BoardTurned

        if obs.TYPE == "spin_started":
            if self.follow_encoder:
                self.reference(obs.angle_deg)
            return None
        if obs.TYPE != "spin_stopped":
            return None
        with self._lock:
            zero = self._zero_ccw if self._zero_ccw is not None else obs.angle_deg
        cw = (zero - obs.angle_deg) % 360.0
        # Angles relative to setup need no absolute reference (index pulse): only the other
        # doubts (a lost link during the turn) make the reading uncertain.
        doubts = [d for d in (obs.reason or "").split("; ") if d and not d.startswith("no absolute reference")]
        return BoardTurned(t=obs.t, angle_deg=round(cw, 3), uncertain=bool(obs.uncertain and doubts))


def real(t: Table) -> Rig:
    """The round board's turns from the encoder on its bearing, or from the camera when one is
    configured (``--camera``, or ``[camera] source`` other than ``auto``); with both, the camera's
    angle at rest gives the encoder its zero and a slip is called
    (:class:`~companion.rotation.camera_zero.CameraZero`). With a camera the plays without an
    ability are read from the board once revealed and checked against the plays entered. The
    game starts with a ``game_start`` entry (the players tell the deal as read, or give a
    ``seed`` and lay out what the companion announces); the other plays, the choices and the
    abilities come from the entry source.

    Raises:
        PartMissing: the camera cannot be opened; no camera and no encoder.
    """
    expected = 0.0
    if t.opened.state is not None:
        expected = float(t.referee.summary(t.opened.state).get("angle_deg") or 0.0)
    players = ",".join(t.players)
    lines = [] if t.resumed else [
        "Carrossel: start with `companion enter carrossel game_start players=" + players + " seed=N` "
        "(the companion deals; lay out what it announces) or the deal as read; tell each play with "
        "`companion enter carrossel play ...` (or the table's page); turn the board when asked."]
    spec = t.options.get("camera") or (t.config["camera"]["source"] if t.config["camera"]["source"] != "auto" else None)
    if spec is None:
        return Rig(sources=[_encoder_turns(t, BoardAngle(expected))], lines=lines)
    return _real_camera(t, spec, expected, lines)


def _encoder_turns(t: Table, angle: BoardAngle) -> Any:
    """The encoder's stops as ``board_turned``; its first angle is the board's expected one."""
    from companion.kits import real_encoder

    encoder = real_encoder(t, angle.convert)
    tracker = encoder.source.tracker
    # the encoder's first angle is the board's expected angle (wraps the source's sample hook
    # before it starts, so the reader calls this one)
    original = encoder.source._on_sample

    def on_sample(sample: Any) -> None:
        original(sample)
        a = tracker.angle_deg()
        if a is not None:
            angle.reference(a)

    encoder.source._on_sample = on_sample
    return encoder


def _real_camera(t: Table, spec: str, expected: float, lines: list[str]) -> Rig:
    from companion.health import PartMissing
    from companion.kits import camera_fix, camera_spec, camera_status, real_encoder
    from companion.sources.carrossel_camera import CarrosselWatch, carrossel_camera_from_config
    from companion.vision.frames import FrameSourceError

    spec = camera_spec(t)  # refuses the simulated camera at a real table
    holder: list[Any] = []
    on_status = camera_status(t, spec, lambda: holder[0] if holder else None)
    watch = CarrosselWatch(t.referee, t.opened.state, tell=lambda call: _tell(t, call))
    angle = BoardAngle(expected, follow_encoder=False, zero_ccw=_saved_zero(t))
    sources: list[Any] = []
    zero = None
    try:
        encoder = real_encoder(t)
    except PartMissing as exc:
        log.info("no encoder (%s): the board's turns come from the camera", exc)
        encoder = None
    if encoder is not None:
        from companion.rotation.camera_zero import CameraZero, ZeroedRotation

        zero = CameraZero(encoder, tolerance_deg=t.config["camera"]["slip_tolerance_deg"],
                          tell=lambda call: _tell(t, call), part="board", convert=angle.convert)
        sources.append(_Dropping(ZeroedRotation(encoder, zero)))

    def at_rest(t_s: float, ccw_deg: float) -> None:
        angle.reference(ccw_deg)
        if zero is not None:
            zero.at_rest(t_s, ccw_deg)

    on_rest = _keeping_zero(t, expected, at_rest)

    try:
        camera = carrossel_camera_from_config(
            t.config, spec, watch=watch, on_status=on_status, clock=t.clock.now, expected_deg=expected,
            on_rest=on_rest, report_turns=zero is None, on_frame=zero.frame if zero is not None else None)
    except FrameSourceError as exc:
        raise PartMissing("camera", str(exc), camera_fix(exc)) from None
    if _saved_zero(t) is not None:
        camera.resume_zero(_saved_zero(t))
    holder.append(camera)
    t.parts.set("camera", "ok", spec)
    return Rig(sources=[camera, *sources], observers=[watch], camera=camera, lines=lines)


class _Dropping:
    """A source whose ``None`` observations (dropped by a converter) are not emitted."""

    def __init__(self, source: Any):
        self.source = source

    def start(self, emit: Any, clock: Any) -> None:
        """Start the wrapped source; what it emits goes on unless it is None."""
        self.source.start(lambda obs: emit(obs) if obs is not None else None, clock)

    def stop(self) -> None:
        """Stop the wrapped source."""
        self.source.stop()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.source, name)


KIT = Kit(game="carrossel", options=_options, simulated=simulated, real=real)
