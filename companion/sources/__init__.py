"""Sources: where observations come from (buttons, camera readers, encoders, the simulated
table). Each is a small object with a real backend and a mock one, chosen by configuration.

A source is started with an ``emit`` function and the session :class:`~companion.clock.Clock`;
it calls ``emit(observation)`` from any thread whenever it has something to report, with
``observation.t`` taken from that clock. ``emit`` is thread-safe and never blocks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from companion.clock import Clock
from companion.events import Observation

__all__ = ["Source", "Emit"]

Emit = Callable[[Observation], None]


class Source(Protocol):
    """Something that produces observations for the service loop."""

    def start(self, emit: Emit, clock: Clock) -> None:
        """Begin reporting: call ``emit`` for each observation (any thread)."""

    def stop(self) -> None:
        """Stop reporting and release the hardware; safe to call twice."""
