"""Resuming a seeded stream of observations (the simulated Carrossel and Carnival tables).

A stream table plays one game fixed by its seed. After a restart the journal's game is rebuilt
into the referee's state; :func:`applied_count` finds how many of the stream's observations that
state has seen, by applying the same stream to a fresh state until it matches, so every simulated
table resumes through the same ``resume(state, t)``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["applied_count"]


def _timeless(state: Any) -> Any:
    """``state`` with its time fields (``t``, ``last_t``, ``*_t``) zeroed: a resumed game's
    observations keep the stream's order but not its times."""
    import dataclasses

    if not dataclasses.is_dataclass(state):
        return state
    times = {f.name: 0.0 for f in dataclasses.fields(state)
             if (f.name in ("t", "last_t") or f.name.endswith("_t")) and isinstance(getattr(state, f.name), float)}
    return dataclasses.replace(state, **times) if times else state


def applied_count(referee: Any, observations: Iterable[Any], state: Any) -> int:
    """How many observations of ``observations`` (in order) lead from the referee's initial
    state to ``state`` (times aside: a game resumed before was shifted in time).

    Args:
        referee: the game's engine (``initial_state``, ``apply``).
        observations: the table's stream, as generated (times from 0).
        state: the restored state.

    Raises:
        ValueError: ``state`` is not reached by any prefix of the stream (the journaled game was
            not this seed's simulated game, e.g. entries were added by hand).
    """
    target = _timeless(state)
    current = referee.initial_state()
    if _timeless(current) == target:
        return 0
    for n, obs in enumerate(observations, 1):
        current, _ = referee.apply(current, obs)
        if _timeless(current) == target:
            return n
    raise ValueError("the journal's unfinished game is not this table's seeded game "
                     "(observations were entered by hand?): start a new one with --new")
