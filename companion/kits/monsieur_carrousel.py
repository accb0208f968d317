"""Monsieur Carrousel's kit: the simulated table (simulated children, the simulated shaft's
spins, or with ``--camera sim[:SEED]`` the simulated camera alone) and the real one (the shaft
encoder through the rotation tracker and/or the camera, the electronic die button, the kids'
YES/NO buttons; every step spoken).

With a camera (``--camera`` or ``[camera] source`` other than ``auto``) the seats, the die, the
weather and the finger come from the camera (:mod:`companion.sources.monsieur_camera`); the
spins from the encoder when one is there (the camera giving it its zero and catching a slip,
:mod:`companion.rotation.camera_zero`), else from the camera."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from companion.assembly import Kit, Rig, Table, gpio_part

__all__ = ["GAME", "KIT"]

GAME = "monsieur-carrousel"

log = logging.getLogger("companion.kits.monsieur_carrousel")


def _options(config: Any) -> dict[str, Any]:
    return dict(config["monsieur_carrousel"])


def _buttons(t: Table) -> Any:
    from companion.sources.kid_buttons import KidButtons

    pins = t.config["pins"]
    return gpio_part("YES/NO and die buttons", lambda: KidButtons(
        pins["yes_button"], pins["no_button"], pins["die_button"], t.referee.table.die_colours,
        t.config["buttons"]["bounce_s"], t.pin_factory))


def _show(t: Table) -> Any:
    return getattr(t.console, "show_spin", None)


def _weather_prompts(t: Table) -> list[Any]:
    """Every kid in the sun and in the rain: the prompts that must come the moment the carousel
    stops (rendered at start)."""
    from companion.games.monsieur_carrousel import Weather

    return [Weather(t=0.0, player=p, kid=k, zone=z) for k in t.referee.table.kids for z in ("sun", "rain")
            for p in t.players]


def _kid_colours(t: Table, geometry: Any) -> Any:
    """Each kid's token colour (the kids in the table's order, the geometry's token colours in turn)."""
    colours = list(geometry.kid_srgb)
    kids = list(t.referee.table.kids)
    return lambda kid: colours[kids.index(kid) % len(colours)] if kid in kids else colours[0]


def _tell(t: Table) -> Any:
    """``tell(call)``: a service call to the table (the service's, once it is built)."""
    return lambda call: t.parts.tell(call) if t.parts.tell is not None else log.info("%s", call.to_json())


def _simulated_camera(t: Table, spec: str) -> Rig:
    """The simulated table seen only through the simulated camera: the referee learns the die,
    the seats and the spins from rendered frames (:mod:`companion.sim.monsieur_camera`)."""
    import numpy as np

    from companion.sim.monsieur_camera import CameraTable
    from companion.sim.monsieur_carrousel import (
        MonsieurCarrouselTable,
        settings_from_config,
    )
    from companion.sources.carrousel_camera import ScheduledCamera
    from companion.sources.monsieur_camera import (
        check_same_table,
        geometry_for_layout,
        monsieur_camera_from_config,
    )
    from companion.vision.monsieur_geometry import MonsieurGeometry
    from companion.vision.sim_monsieur import (
        MonsieurRenderer,
        MonsieurScene,
        SimulatedMonsieurCamera,
        die_place,
    )

    settings = dataclasses.replace(settings_from_config(t.config), seed=t.seed, players=tuple(t.players),
                                   seat_by="camera")
    table = MonsieurCarrouselTable(settings, t.referee.table)
    seed_text = spec.partition(":")[2]
    if seed_text and not seed_text.lstrip("-").isdigit():
        raise ValueError(f"camera {spec!r}: expected sim or sim:SEED (an integer)")
    seed = int(seed_text) if seed_text else t.seed
    geometry = MonsieurGeometry.load(config=t.config)
    check_same_table(geometry, t.referee.table)
    geometry = geometry_for_layout(geometry, t.referee.table.layouts[settings.layout])
    renderer = MonsieurRenderer(geometry)
    rng = np.random.default_rng(seed)
    scene = MonsieurScene(angle_deg=table.angle_deg, die=str(rng.choice(geometry.die_colours)),
                          die_xy_mm=die_place(rng, geometry))
    camera = SimulatedMonsieurCamera(seed, kind="normal", clock=t.clock.now, renderer=renderer, scene=scene)
    source = monsieur_camera_from_config(t.config, t.referee.table, settings.layout, frames=camera,
                                         on_status=None, ask=_tell(t))  # the source logs its state
    seen = CameraTable(camera, source, _kid_colours(t, geometry), settings.spin_s_per_rev, seed)
    table.shaft = seen
    cam = t.config["camera"]
    period = cam["frame_period_s"] or 0.1
    frames = ScheduledCamera(source, period_s=period, start_t=t.clock.now())  # type: ignore[arg-type]
    t.parts.set("camera", "simulated", spec)
    t.parts.set("encoder", "simulated", "none: the camera reads the spins")
    return Rig(sources=[_buttons(t), table, seen, frames], scheduled=[table, seen, frames],
               announcers=[table, source, seen], delay_s=cam["settle_s"] + 2 * period, camera=source,
               resume=lambda state, now: _resume_seen(state, now, table, camera, source, _kid_colours(t, geometry)))


def _resume_seen(state: Any, now: float, table: Any, camera: Any, source: Any, kid_colour: Any) -> None:
    """A journaled game resumed before the simulated camera: the tokens on their seats, the
    camera source told what the referee has and waits for, the table doing what it waits for."""
    if state.phase == "setup":
        return
    camera.set_scene(kids=tuple(None if kid is None else kid_colour(kid) for kid in state.seats))
    source.resume(state)
    table.resume(state, now)


def simulated(t: Table) -> Rig:
    """Simulated children roll the die, seat the kids, spin the carousel (the simulated shaft's
    physics through the rotation tracker, when ``[encoder] backend`` is sim or auto without a
    Pico) and press YES or NO when asked; with ``options["camera"] = "sim[:SEED]"`` the
    referee learns the table from the simulated camera's frames alone."""
    camera = t.options.get("camera")
    if camera is not None:
        return _simulated_camera(t, camera if camera.startswith("sim") else "sim")
    from companion.rotation import reader_from_config, tracker_from_config
    from companion.rotation.simulated import SimulatedShaft
    from companion.sim.monsieur_carrousel import (
        MonsieurCarrouselTable,
        settings_from_config,
    )
    from companion.sim.shaft import ShaftSpins

    settings = dataclasses.replace(settings_from_config(t.config), seed=t.seed, players=tuple(t.players))
    table = MonsieurCarrouselTable(settings, t.referee.table)
    reader = reader_from_config(t.config)
    shaft = None
    if isinstance(reader, SimulatedShaft):
        reader.stop()
        enc = t.config["encoder"]
        cpr = 4 * enc["lines_per_rev"]
        sim_shaft = SimulatedShaft(counts_per_rev=cpr, seed=t.seed, spin_every_s=None, drop_every_s=None,
                                   index_count=0 if enc["index"] else None,
                                   start_count=round(table.angle_deg / 360.0 * cpr))
        vocabulary = t.referee.vocabulary
        shaft = ShaftSpins(sim_shaft, tracker_from_config(t.config, sim_shaft),
                           convert=lambda obs: vocabulary.observation(obs.to_json()), show=_show(t))
        t.parts.set("encoder", "simulated", "the simulated shaft")
    else:
        reader.stop()
    table.shaft = shaft
    rotation = [shaft] if shaft is not None else []
    return Rig(sources=[_buttons(t), table, *rotation], scheduled=[table, *rotation], announcers=[table],
               resume=lambda state, now: table.resume(state, now) if state.phase != "setup" else None)


def _camera_wanted(t: Table) -> bool:
    """A camera at the real table: ``--camera``, or ``[camera] source`` set to a camera."""
    return bool(t.options.get("camera")) or t.config["camera"]["source"] not in ("auto", "")


class _AnswersThrough:
    """The YES/NO buttons, their answers passed through the camera source first (a full-turn
    question it asked takes the answer; the answer itself goes on to the journal)."""

    def __init__(self, buttons: Any, camera: Any):
        self.buttons = buttons
        self.camera = camera

    def start(self, emit: Any, clock: Any) -> None:
        """Start the buttons; each answer goes through the camera source."""
        def through(obs: Any) -> None:
            for o in self.camera.take_answer(obs):
                emit(o)

        self.buttons.start(through, clock)

    def stop(self) -> None:
        """Stop the buttons."""
        self.buttons.stop()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.buttons, name)


def _encoder_or_none(t: Table, convert: Any) -> Any:
    """The real encoder (the Pico or GPIO), or None when there is none and the camera reads the
    spins: ``[encoder] backend`` "sim", or "auto" with no Pico found. A configured Pico or GPIO
    encoder that is missing is :class:`~companion.health.PartMissing`."""
    from companion.health import PartMissing
    from companion.kits import real_encoder

    backend = t.config["encoder"]["backend"]
    if backend == "sim":
        return None
    try:
        return real_encoder(t, convert)
    except PartMissing:
        if backend == "auto" and not t.config["encoder"]["port"]:
            return None
        raise


def _real_camera(t: Table, convert: Any) -> tuple[list[Any], list[Any], float]:
    """The camera reads the die, the seats, the weather and the finger; with an encoder, the
    encoder the spins (its zero and its slips from the camera), else the camera. Returns the
    sources, the announcers and the jitter delay (s).

    Raises:
        PartMissing: the camera cannot be opened, or a configured encoder is missing.
    """
    from companion.health import PartMissing
    from companion.kits import camera_fix, camera_spec, camera_status
    from companion.rotation.camera_zero import CameraZero, ZeroedRotation
    from companion.sources.monsieur_camera import monsieur_camera_from_config
    from companion.vision.frames import FrameSourceError

    spec = camera_spec(t)
    holder: list[Any] = []
    on_status = camera_status(t, spec, lambda: holder[0] if holder else None)
    rotation = _encoder_or_none(t, None)
    try:
        camera = monsieur_camera_from_config(t.config, t.referee.table, t.referee.layout, spec=spec,
                                             clock=t.clock.now, on_status=on_status, ask=_tell(t),
                                             spins=rotation is None)
    except FrameSourceError as exc:
        raise PartMissing("camera", str(exc), camera_fix(exc)) from None
    holder.append(camera)
    t.parts.set("camera", "ok", spec)
    sources: list[Any] = [camera]
    if rotation is not None:
        zero = CameraZero(rotation, tolerance_deg=t.config["camera"]["slip_tolerance_deg"], tell=_tell(t),
                          part="carousel", convert=convert)
        camera.on_rest = zero.at_rest
        camera.on_frame = zero.frame
        sources.append(ZeroedRotation(rotation, zero))
    else:
        t.parts.set("encoder", "missing", "none: the camera reads the spins")
    cam = t.config["camera"]
    return sources, [camera], cam["settle_s"] + 2 * (cam["frame_period_s"] or 0.1)


def real(t: Table) -> Rig:
    """The shaft encoder reports the carousel's spins; the die button rolls the electronic die;
    the kids answer with YES and NO (a kid seated on the suggested seat is confirmed with YES).
    With a camera (``--camera`` or ``[camera] source``) the die, the seats, the weather and the
    finger are read by the camera, and the spins too when there is no encoder. The game starts
    at once with the configured players."""
    from companion.games.monsieur_carrousel import GameStart
    from companion.kits import real_encoder
    from companion.sources.starters import StartNow

    vocabulary = t.referee.vocabulary
    show = _show(t)

    def convert(obs: Any) -> Any:
        if show is not None:
            show(obs)
        return vocabulary.observation(obs.to_json())

    players = tuple(t.players)
    start = StartNow(lambda now: GameStart(t=now, players=players), started=t.resumed)
    if _camera_wanted(t):
        sources, announcers, delay_s = _real_camera(t, convert)
        buttons = _AnswersThrough(_buttons(t), sources[0])
        lines = [] if t.resumed else [
            ("Monsieur Carrousel: roll the die on the board; put the kid on the seat you are told; turn the "
             "carousel when asked. The camera watches the table.")]
        return Rig(sources=[start, buttons, *sources], announcers=announcers, delay_s=delay_s, lines=lines,
                   prompts=_weather_prompts(t), camera=sources[0],
                   resume=lambda state, now: sources[0].resume(state) if state.phase != "setup" else None)
    encoder = real_encoder(t, convert)
    buttons = _buttons(t)
    lines = [] if t.resumed else [
        "Monsieur Carrousel: press the die button to roll; put the kid on the seat you are told and "
        "press YES; turn the carousel when asked."]
    return Rig(sources=[start, buttons, encoder], lines=lines, prompts=_weather_prompts(t))


KIT = Kit(game=GAME, options=_options, simulated=simulated, real=real)
