"""Observations of the rotating part: a spin started, a spin stopped.

These are the messages the rotation reader sends to the referees of the turning games
(Monsieur Carrousel's carousel, Carrossel's round board). A game lists them in its
:class:`~companion.events.Vocabulary`::

    from companion.rotation.observations import ROTATION_OBSERVATIONS
    Vocabulary("monsieur-carrousel", [*ROTATION_OBSERVATIONS, ...], [...])

JSON form (``docs/rotation.md``)::

    {"type": "spin_started", "t": 12.0, "angle_deg": 93.5}
    {"type": "spin_stopped", "t": 15.25, "angle_deg": 211.0, "revolutions": 2.33,
     "direction": "ccw", "uncertain": false, "reason": ""}
"""

from __future__ import annotations

import dataclasses
from typing import Literal

from companion.events import Observation, event_type

__all__ = ["SpinStarted", "SpinStopped", "ROTATION_OBSERVATIONS"]


@event_type("spin_started")
@dataclasses.dataclass(frozen=True, slots=True)
class SpinStarted(Observation):
    """The rotating part began to turn at ``t`` (seconds).

    Attributes:
        angle_deg: where it was at rest, degrees 0-360, counter-clockwise seen from above,
            0 = the reference (index magnet or ArUco marker).
    """

    angle_deg: float = 0.0


@event_type("spin_stopped")
@dataclasses.dataclass(frozen=True, slots=True)
class SpinStopped(Observation):
    """The rotating part has come to rest (no motion for the settle time) at ``t`` (seconds).

    Attributes:
        angle_deg: rest angle, degrees 0-360, counter-clockwise seen from above from the
            reference.
        revolutions: how far it turned from its start, in turns (>= 0; 1.5 = one and a half).
        direction: ``"ccw"`` or ``"cw"`` (seen from above), the sign of the net turn.
        uncertain: True when the angle or the turn cannot be trusted (the link dropped during
            the spin, the Pico restarted, no absolute reference yet, an index pulse disagreed);
            a referee then asks for the spin again instead of guessing.
        reason: why it is uncertain, in words ("" when certain).
    """

    angle_deg: float = 0.0
    revolutions: float = 0.0
    direction: Literal["ccw", "cw"] = "ccw"
    uncertain: bool = False
    reason: str = ""


#: The observation classes a turning game adds to its vocabulary.
ROTATION_OBSERVATIONS = (SpinStarted, SpinStopped)
