"""The players' pause: two observations of the service's own and the two calls that answer them.

A pause is asked for on the game page, with ``companion enter --pause`` or ``{"control":
"pause"}`` on the entry socket. The service then holds its clock
(:meth:`~companion.clock.MonotonicClock.hold`): session time stops, so the referee's deadlines
(Carrousel's dead end, Monsieur Carrousel's spin timeout) wait, and so do the simulated players,
who act at session times. ``resume`` lets the clock go on from where it stopped: the countdown
goes on with the seconds it had left.

:class:`Pause` and :class:`Resume` are journaled like any observation (so a game paused when the
power went is paused again when it is resumed, and ``companion replay`` reproduces the same
calls), but they are the service's, not a rules engine's: the service never hands them to the
referee, and :func:`restore` / ``companion replay`` skip them when they re-apply a session.
:class:`Paused` and :class:`Resumed` are service calls (like ``part_lost``): announced, spoken
and shown in every catalogue's ``[common]`` section, not journaled as game calls.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from companion.events import Call, Observation, event_type

__all__ = ["Pause", "Resume", "Paused", "Resumed", "SERVICE_OBSERVATIONS", "SERVICE_CALLS",
           "is_pause_or_resume", "service_observation"]


@event_type("pause")
@dataclasses.dataclass(frozen=True, slots=True)
class Pause(Observation):
    """The players ask the game to wait (the game page, ``companion enter --pause``).

    Attributes:
        by: who asked, in words (``"the game page"``, ``"companion enter"``), or empty.
    """

    by: str = ""


@event_type("resume")
@dataclasses.dataclass(frozen=True, slots=True)
class Resume(Observation):
    """The players ask the paused game to go on.

    Attributes:
        by: who asked, in words, or empty.
    """

    by: str = ""


@event_type("paused")
@dataclasses.dataclass(frozen=True, slots=True)
class Paused(Call):
    """The game waits: the session clock is held (deadlines and simulated players wait).

    Attributes:
        by: who asked for the pause, or empty.
    """

    by: str = ""


@event_type("resumed")
@dataclasses.dataclass(frozen=True, slots=True)
class Resumed(Call):
    """The game goes on from where it was paused.

    Attributes:
        paused_s: how long the game waited, real seconds (0 after a restart: unknown).
    """

    paused_s: float = 0.0


#: The service's own observations by their JSON ``type`` word (journaled, never refereed).
SERVICE_OBSERVATIONS: dict[str, type] = {"pause": Pause, "resume": Resume}
#: The pause's calls by their JSON ``type`` word (announced, not journaled).
SERVICE_CALLS: dict[str, type] = {"paused": Paused, "resumed": Resumed}


def is_pause_or_resume(observation: Any) -> bool:
    """True for a :class:`Pause` or :class:`Resume` (the service's, not the referee's)."""
    return isinstance(observation, (Pause, Resume))


def service_observation(obj: Mapping[str, Any]) -> Observation | None:
    """Parse ``obj`` as a pause or a resume; None when its ``type`` is another word.

    Raises:
        companion.events.EventError: a pause or resume with a bad field (naming it).
    """
    cls = SERVICE_OBSERVATIONS.get(obj.get("type")) if isinstance(obj, Mapping) else None
    return None if cls is None else cls.from_json(obj)
