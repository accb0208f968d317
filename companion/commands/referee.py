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


#: Longest text of a rejected line echoed back in its ``invalid_observation`` call.
ECHO_CHARS = 300


def _clip(value: Any) -> Any:
    """The rejected input as echoed back: long strings cut to :data:`ECHO_CHARS`."""
    if isinstance(value, str):
        return value if len(value) <= ECHO_CHARS else value[:ECHO_CHARS] + "..."
    if isinstance(value, list):
        return [_clip(v) for v in value[:50]]
    if isinstance(value, dict):
        return {_clip(k): _clip(v) for k, v in list(value.items())[:50]}
    return value


def referee_lines(
    referee: Any, lines: Iterable[str | bytes], errors: IO[str] | None = None
) -> Iterator[Call]:
    """Apply JSON Lines observations to a fresh game; yield every call in order.

    Args:
        referee: a :class:`companion.games.Referee`.
        lines: the input lines, text or UTF-8 bytes (with or without newlines).
        errors: where to write one human-readable line per rejected input line, or None.
    """
    state = referee.initial_state()
    last_t = 0.0
    for number, raw in enumerate(lines, start=1):
        if isinstance(raw, bytes):
            try:
                raw = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield _reject(errors, number, last_t, f"line {number}: not UTF-8 text ({exc.reason} at byte {exc.start})",
                              raw.decode("utf-8", "replace"))
                continue
        text = raw.strip().lstrip("\ufeff")
        if not text or text.startswith("#"):
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            yield _reject(errors, number, last_t, f"line {number}: not valid JSON: {exc.msg} (column {exc.colno})", text)
            continue
        except RecursionError:
            yield _reject(errors, number, last_t, f"line {number}: not valid JSON: nested too deeply", text)
            continue
        except ValueError as exc:  # e.g. an integer of more than 4300 digits
            yield _reject(errors, number, last_t, f"line {number}: not valid JSON: {exc}", text)
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
                call = InvalidObservation(
                    t=call.t, reason=_clip(f"line {number}: {call.reason}"), line=number, observation=_clip(call.observation)
                )
                if errors is not None:
                    print(f"companion referee: {call.reason}", file=errors)
            yield call


def _reject(errors: IO[str] | None, number: int, t: float, reason: str, raw: Any) -> InvalidObservation:
    reason = _clip(reason)
    if errors is not None:
        print(f"companion referee: {reason}", file=errors)
    return InvalidObservation(t=t, reason=reason, line=number, observation=_clip(raw))


def run(args: argparse.Namespace) -> int:
    """Run ``companion referee``; exit status 0 (rejected lines are calls, not failures)."""
    from companion.cli import UsageError
    from companion.config import load
    from companion.games import referee_from_config

    config = load(args.config)
    referee = referee_from_config(args.game, config)
    if args.events == "-":
        if sys.stdin is None:
            raise UsageError("--events -: there is no standard input")
        source: Any = getattr(sys.stdin, "buffer", sys.stdin)
    else:
        try:
            source = open(args.events, "rb")
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
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):
            raise
        raise UsageError(f"cannot write the calls: {exc.strerror or exc}") from None
    finally:
        if args.events != "-":
            source.close()
        if out is not sys.stdout:
            out.close()
    return 0
