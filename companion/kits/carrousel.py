"""Carrousel's kit: the simulated table (seeded players, mock claim buttons, optionally seen
through the simulated camera) and the real one (the camera reads the horses and cards; the claim
buttons; the game starts with the first full reading of the board)."""

from __future__ import annotations

import logging
from typing import Any

from companion.assembly import Kit, Rig, Table, gpio_part
from companion.health import PartMissing

__all__ = ["KIT"]

log = logging.getLogger("companion.kits.carrousel")


def _options(config: Any) -> dict[str, Any]:
    c = config["carrousel"]
    return {"advanced": c["advanced"], "dead_end_s": c["dead_end_s"]}


def _players(t: Table) -> list[str]:
    state = t.opened.state
    return [p.name for p in state.players] if state is not None and state.players else list(t.players)


def _buttons(t: Table, players: list[str]) -> Any:
    from companion.sources.buttons import ClaimButtons

    pins = t.config["pins"]
    return gpio_part("claim buttons", lambda: ClaimButtons(players, pins["claim_buttons"],
                                                           t.config["buttons"]["bounce_s"], t.pin_factory))


def _delay(t: Table) -> float:
    """The jitter buffer with a camera: its settle time + 2 frames (see Service)."""
    cam = t.config["camera"]
    return cam["settle_s"] + 2 * (cam["frame_period_s"] or 0.1)


def simulated(t: Table) -> Rig:
    """Seeded players move the horses and press their (mock) claim buttons; with
    ``options["camera"] = "sim[:SEED]"`` the referee learns the table only from rendered frames."""
    from companion.sim.carrousel import SimulatedCarrouselTable
    from companion.sources.carrousel_camera import ScheduledCamera, camera_source_from_config, default_seats

    players = _players(t)
    buttons = _buttons(t, players)
    sim_cfg, carrousel = t.config["sim"], t.config["carrousel"]

    def press(seat: int) -> None:
        pin = buttons.mock_pin(seat)
        pin.drive_low()  # the button pulls the pin to ground...
        pin.drive_high()  # ...and is released

    camera = t.options.get("camera")
    extra: list[Any] = []
    camera_options: dict[str, Any] = {}
    delay_s = 0.0
    if camera is not None:
        spec = camera if ":" in camera else f"sim:{t.seed}"
        source = camera_source_from_config(t.config, players, spec=spec, clock=t.clock.now,
                                           on_status=None)  # the source logs its state
        source.stamp_first_seen = True
        period = t.config["camera"]["frame_period_s"] or 0.1
        delay_s = _delay(t)
        extra.append(ScheduledCamera(source, period_s=period, start_t=t.clock.now()))
        camera_options = {"camera": source.frames,
                          "seats": list(t.config["camera"]["seats"] or default_seats(len(players))),
                          "camera_latency_s": t.config["camera"]["settle_s"] + 3 * period}
        t.parts.set("camera", "simulated", spec)
    sim = SimulatedCarrouselTable(
        players, seed=t.seed, move_time_s=sim_cfg["move_time_s"], illegal_rate=sim_cfg["illegal_rate"],
        false_claim_rate=sim_cfg["false_claim_rate"], stall_rate=sim_cfg["stall_rate"],
        dead_end_s=carrousel["dead_end_s"], advanced=carrousel["advanced"],
        press=press if t.mock_pins else None, start_t=t.clock.now(), **camera_options,
    )
    def resume(state: Any, now: float) -> None:
        # The table as it is once the jitter buffer's journaled content is applied: the camera
        # must not show (and settle) the horses or a card of before a point still pending.
        state = t.opened.table_state(t.referee) if t.opened.state is state else state
        sim.resume(state, now)
        if camera is not None and state.position is not None:
            source.prime(state.position.spaces, {p.name: p.active for p in state.players})

    return Rig(sources=[buttons, sim, *extra], scheduled=[sim, *extra], announcers=[sim], delay_s=delay_s,
               resume=resume)


def real(t: Table) -> Rig:
    """The camera reads the horses and cards (its own thread, the real clock); the players press
    their claim buttons; the game starts with the first full reading of the board."""
    from companion.kits import camera_fix, camera_spec, camera_status
    from companion.sources.carrousel_camera import camera_source_from_config
    from companion.sources.starters import FirstBoardStarts
    from companion.vision.frames import FrameSourceError

    players = _players(t)
    spec = camera_spec(t)
    holder: list[Any] = []
    on_status = camera_status(t, spec, lambda: holder[0] if holder else None)
    try:
        camera = camera_source_from_config(t.config, players, spec=spec, clock=t.clock.now, on_status=on_status)
    except FrameSourceError as exc:
        raise PartMissing("camera", str(exc), camera_fix(exc)) from None
    holder.append(camera)
    camera.stamp_first_seen = True
    t.parts.set("camera", "ok", spec)
    buttons = _buttons(t, players)
    lines = [] if t.resumed else ["Carrousel: set the horses on the carousel and the cards in front of the players; "
                                  "the game starts when the camera sees all five horses and every player's card."]
    return Rig(sources=[FirstBoardStarts(camera, players, _options(t.config), started=t.resumed), buttons],
               delay_s=_delay(t), lines=lines)


KIT = Kit(game="carrousel", options=_options, simulated=simulated, real=real)
