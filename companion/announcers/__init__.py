"""Announcers: what tells the table about each call (console, LEDs and buzzer, speech).

An announcer has ``announce(call, summary)``, called by the service loop on its own thread for
every call in order; it must return quickly (start a blink, queue a sentence) and never raise
for a missing device: it degrades (speech -> buzzer) and logs one line. ``close()`` releases it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from companion.events import Call

__all__ = ["Announcer"]


class Announcer(Protocol):
    """Subscriber to the referee's calls."""

    def announce(self, call: Call, summary: Mapping[str, Any]) -> None:
        """React to one call; ``summary`` is the referee's summary after it. Never blocks."""

    def close(self) -> None:
        """Release devices and threads; safe to call twice."""
