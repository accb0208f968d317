"""Carrossel's kit: the simulated table (a seeded stream of a whole game) and the real one (the
round board's angle from the shaft encoder; the face-down plays, the choices and the abilities,
which no sensor sees, from the entry source).

Angle convention: the engine's ``board_turned.angle_deg`` is degrees clockwise seen from above,
0 = the board as it stood at setup. The encoder's tracker reports degrees counter-clockwise
(``[encoder] direction`` says which way a rising count turns); this kit converts, taking the
encoder's angle when the game starts (or resumes) as the board's angle the referee expects.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from companion.assembly import Kit, Rig, Table

__all__ = ["KIT", "BoardAngle"]

log = logging.getLogger("companion.kits.carrossel")


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
    source = carrossel_camera_from_config(t.config, frames, watch=watch,
                                          on_status=lambda text: log.info("camera: %s", text))
    period = t.config["camera"]["frame_period_s"] or 0.1
    table = CameraCarrosselTable(frames, seed=t.seed, players=t.players, referee=t.referee,
                                 play_time_s=t.config["sim"]["move_time_s"], start_t=t.clock.now())
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

    The first stop or sample angle seen (counter-clockwise, the tracker's) is taken as
    ``expected_deg``; later stops are reported relative to it, clockwise.
    """

    def __init__(self, expected_deg: float = 0.0):
        self.expected_deg = expected_deg
        self._zero_ccw: float | None = None
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
    """The encoder on the board's bearing reports each turn; the game starts with a
    ``game_start`` entry (the players tell the deal as read, or give a ``seed`` and lay out what
    the companion announces); plays, choices and abilities come from the entry source."""
    from companion.kits import real_encoder

    expected = 0.0
    if t.opened.state is not None:
        expected = float(t.referee.summary(t.opened.state).get("angle_deg") or 0.0)
    angle = BoardAngle(expected)
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
    players = ",".join(t.players)
    lines = [] if t.resumed else [
        "Carrossel: start with `companion enter carrossel game_start players=" + players + " seed=N` "
        "(the companion deals; lay out what it announces) or the deal as read; tell each play with "
        "`companion enter carrossel play ...` (or the table's page); turn the board when asked."]
    return Rig(sources=[encoder], lines=lines)


KIT = Kit(game="carrossel", options=_options, simulated=simulated, real=real)
