"""The console announcer: one readable line per call, as it happens.

Example output::

      12.4 s  Ana scores with black-red-yellow: 3 points, next card green-blue-red
      20.0 s  DEAD END: 20 s without a point; move green to the front
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import IO, Any

from companion.events import Call

__all__ = ["ConsoleAnnouncer", "describe"]


def _points(n: int) -> str:
    return f"{n} point" if n == 1 else f"{n} points"


def _card(card: Any) -> str:
    return "-".join(card) if card else "(none)"


_FORMATS: dict[str, Callable[[dict[str, Any]], str]] = {
    "game_started": lambda c: (
        f"Carrousel starts: {', '.join(c['players'])}; first to {c['target']} points wins"
        + ("; advanced rules" if c["advanced"] else "")
        + "; cards: "
        + ", ".join(f"{p} {_card(card)}" for p, card in c["cards"].items())
    ),
    "move": lambda c: f"move {c['kind'].replace('_', ' ')} ({', '.join(c['horses'])}); first three {_card(c['first_three'])}",
    "illegal_move": lambda c: f"ILLEGAL MOVE: {c['reason']}",
    "point": lambda c: (
        f"{c['player']} scores with {_card(c['card'])}"
        + (f" (from {c['owner']})" if c.get("owner") and c["owner"] != c["player"] else "")
        + f": {_points(c['score'])}, next card {_card(c['next_card'])}"
    ),
    "lucky_bird": lambda c: f"LUCKY BIRD for {c['player']} ({c['reason'].replace('_', ' ')}): {_card(c['card'])}, {_points(c['score'])}",
    "penalty": lambda c: (
        f"PENALTY {c['player']}: card {_card(c['card'])} but first three {_card(c['first_three'])}; "
        + (f"loses {_card(c['lost_card'])}" if c["lost_card"] else "no won card to lose")
        + f", {_points(c['score'])}"
    ),
    "claim_too_late": lambda c: f"{c['player']} pressed too late: {c['scored_by']} already scored {_card(c['card'])}",
    "dead_end": lambda c: f"DEAD END: no point in time; move {c['horse']} to the front",
    "dead_end_corrected": lambda c: "dead end corrected; the clock restarts",
    "dead_end_not_corrected": lambda c: "the dead-end move was not made (the last horse should have gone to the front)",
    "card_corrected": lambda c: f"{c['player']}'s card is {_card(c['now'])} (was tracked as {_card(c['was'])})",
    "winner": lambda c: f"WINNER: {c['player']}! scores " + ", ".join(f"{p} {s}" for p, s in c["scores"].items()),
    "invalid_observation": lambda c: f"rejected observation: {c['reason']}",
}


def _plain(value: Any) -> str:
    if isinstance(value, list):
        if all(isinstance(v, str) for v in value):
            return "-".join(value) if 1 < len(value) <= 3 else ", ".join(value)
        return "[" + ", ".join(_plain(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} {_plain(v)}" for k, v in value.items()) + "}"
    if value is None:
        return "none"
    return str(value)


def describe(call: Call, formats: Mapping[str, Callable[[dict[str, Any]], str]] | None = None) -> str:
    """One human sentence for a call: a written one for the Carrousel calls, else the call's
    type and fields in words (``built: player Cleo; ride ferris_wheel; ...``). ``formats``:
    ``type -> formatter`` to use instead of the built-in ones."""
    data = call.to_json()
    fmt = (formats or _FORMATS).get(call.TYPE)
    if fmt is not None:
        try:
            return fmt(data)
        except (KeyError, TypeError):
            pass
    fields = "; ".join(f"{k.replace('_', ' ')} {_plain(v)}" for k, v in data.items() if k not in ("type", "t"))
    head = call.TYPE.replace("_", " ")
    return f"{head}: {fields}" if fields else head


class ConsoleAnnouncer:
    """Writes one line per call: the session time in seconds, then the sentence.

    Args:
        stream: a text stream (default: standard output); flushed after every line.
        show_moves: also print every legal move (else only what a player needs to know).
        formats: extra ``type -> formatter`` entries for other games' calls.
    """

    def __init__(
        self,
        stream: IO[str] | None = None,
        show_moves: bool = True,
        formats: Mapping[str, Callable[[dict[str, Any]], str]] | None = None,
    ):
        self.stream = stream or sys.stdout
        self.show_moves = show_moves
        self.formats = {**_FORMATS, **(formats or {})}  # this console's own, not the module's

    def announce(self, call: Call, summary: Mapping[str, Any]) -> None:
        """Print the call's line."""
        if call.TYPE == "move" and not self.show_moves:
            return
        try:
            self.stream.write(f"{call.t:9.1f} s  {describe(call, self.formats)}\n")
            self.stream.flush()
        except (OSError, ValueError):
            pass  # a closed terminal must not stop the referee

    def close(self) -> None:
        """Nothing to release."""
