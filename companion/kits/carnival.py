"""Carnival's kit: the simulated table (a seeded stream of a whole game) and the real one (the
camera reads the dice in the tray as ``roll`` observations; the deal, builds, actions and
tickets, which no sensor sees, come from the entry source)."""

from __future__ import annotations

import logging
from typing import Any

from companion.assembly import Kit, Rig, Table
from companion.health import PartMissing

__all__ = ["KIT"]

log = logging.getLogger("companion.kits.carnival")


def _options(config: Any) -> dict[str, Any]:
    return dict(config["carnival"])


def simulated(t: Table) -> Rig:
    """A seeded stream of a whole game: the deal, rolls, actions, builds."""
    from companion.sim.carnival import SimulatedCarnivalTable

    sim = SimulatedCarnivalTable(t.players, seed=t.seed, move_time_s=t.config["sim"]["move_time_s"],
                                 start_t=t.clock.now(), referee=t.referee)
    return Rig(sources=[sim], scheduled=[sim], resume=sim.resume)


def real(t: Table) -> Rig:
    """The dice camera reports each roll of the active player once the dice lie still; the
    players tell the deal (``game_start`` with the face-up discard cards), builds, actions and
    tickets through the entry source."""
    from companion.kits import CAMERA_LOST_FIX, camera_fix, camera_spec
    from companion.sources.dice_camera import dice_source_from_config
    from companion.vision.frames import FrameSourceError

    spec = camera_spec(t)

    def on_part(ok: bool, detail: str) -> None:
        if ok:
            t.parts.back("camera", detail)
        else:
            t.parts.lost("camera", detail, CAMERA_LOST_FIX)

    def on_status(text: str) -> None:
        console = t.console  # (the dice source logs it)
        if console is not None and hasattr(console, "note"):
            console.note(t.clock.now(), text)

    def on_call(call) -> None:
        # the dice camera's own calls ("a die is cocked", "I see four dice"): told like a part's
        tell = t.parts.tell
        if tell is not None:
            tell(call)

    try:
        dice = dice_source_from_config(t.config, spec=spec, clock=t.clock.now, on_status=on_status,
                                       on_part=on_part, on_end=t.on_end, on_call=on_call)
    except FrameSourceError as exc:
        raise PartMissing("camera", str(exc), camera_fix(exc)) from None
    except ValueError as exc:
        if "too small to read" not in str(exc):
            raise
        raise PartMissing("camera", str(exc), "lower the camera or give it more pixels, then calibrate the tray "
                                              "again (companion calibrate tray)") from None
    t.parts.set("camera", "ok", spec)
    lines = [] if t.resumed else [
        "Carnival: deal the cards, then tell the companion the face-up discard cards: "
        "`companion enter carnival game_start players=Ana,Ben discard=CARD,CARD` (or the table's page); "
        "roll the dice in the tray."]
    return Rig(sources=[dice], announcers=[dice], lines=lines)


KIT = Kit(game="carnival", options=_options, simulated=simulated, real=real)
