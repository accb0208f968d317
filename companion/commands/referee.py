"""Referee a game from a file of observations: JSON Lines in, JSON Lines out.

Each input line is one observation (``{"type": "claim", "t": 12.5, "player": "Ana"}``); each
output line is one call. The same input always gives the same output. A line that is not
valid JSON or not a valid observation gives an ``invalid_observation`` call naming the line
(and a message on standard error); the game goes on. Blank lines and lines starting with ``#``
are skipped. The vocabulary is in docs/vocabulary.md.

Examples:
  companion referee carrousel --events game.jsonl
  cat game.jsonl | companion referee carrousel --events -
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator
from typing import IO, Any

from companion.events import Call, EventError, InvalidObservation

__all__ = ["configure", "run", "referee_lines"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``companion referee``."""
    from companion.games import GAMES

    parser.add_argument("game", choices=sorted(GAMES), help="the game to referee")
    parser.add_argument(
        "--events", required=True, metavar="FILE", help="observations, JSON Lines; '-' = standard input"
    )
    parser.add_argument(
        "--output", "-o", metavar="FILE", help="write the calls here (default: standard output)"
    )


def referee_lines(referee: Any, lines: Iterable[str], errors: IO[str] | None = None) -> Iterator[Call]:
    """Apply JSON Lines observations to a fresh game; yield every call in order.

    Args:
        referee: a :class:`companion.games.Referee`.
        lines: the input lines (with or without newlines).
        errors: where to write one human-readable line per rejected input line, or None.
    """
    state = referee.initial_state()
    last_t = 0.0
    for number, raw in enumerate(lines, start=1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            yield _reject(errors, number, last_t, f"line {number}: not valid JSON: {exc.msg} (column {exc.colno})", text)
            continue
        try:
            observation = referee.vocabulary.observation(obj)
        except EventError as exc:
            yield _reject(errors, number, last_t, f"line {number}: {exc}", obj)
            continue
        state, calls = referee.apply(state, observation)
        last_t = max(last_t, observation.t)
        for call in calls:
            if isinstance(call, InvalidObservation):
                call = InvalidObservation(t=call.t, reason=f"line {number}: {call.reason}", line=number, observation=call.observation)
                if errors is not None:
                    print(f"companion referee: {call.reason}", file=errors)
            yield call


def _reject(errors: IO[str] | None, number: int, t: float, reason: str, raw: Any) -> InvalidObservation:
    if errors is not None:
        print(f"companion referee: {reason}", file=errors)
    return InvalidObservation(t=t, reason=reason, line=number, observation=raw)


def run(args: argparse.Namespace) -> int:
    """Run ``companion referee``; exit status 0 (rejected lines are calls, not failures)."""
    from companion.cli import UsageError
    from companion.config import load
    from companion.games import referee_from_config

    config = load(args.config)
    referee = referee_from_config(args.game, config)
    if args.events == "-":
        source: IO[str] = sys.stdin
    else:
        try:
            source = open(args.events, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--events {args.events}: {exc.strerror}") from None
    out: IO[str] = sys.stdout
    if args.output:
        try:
            out = open(args.output, "w", encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--output {args.output}: {exc.strerror}") from None
    try:
        for call in referee_lines(referee, source, sys.stderr):
            out.write(call.to_line() + "\n")
        out.flush()
    except UnicodeDecodeError as exc:
        raise UsageError(f"--events {args.events}: not UTF-8 text ({exc.reason})") from None
    finally:
        if source is not sys.stdin:
            source.close()
        if out is not sys.stdout:
            out.close()
    return 0
