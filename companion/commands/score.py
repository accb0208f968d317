"""Print the final score table of a game: client cards, each objective, total, tie-breaks.

STATE.json is a table file: the players with their colours and won client cards, the four
objective cards and the tiles (with their standees) on the board, as the Carrossel referee
writes it (``CarrosselReferee.table``; format in docs/carrossel.md). A file that breaks the
game's invariants (a client won twice, a fifteenth tile of a colour, a standee on an empty slot,
the Dragon client on a fish...) is an error naming the field; nothing is repaired silently.

Examples:
  companion score carrossel end.json
  companion score carrossel end.json --json
  companion score carrossel --events game.jsonl     (referee the game, then score its end)
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["configure", "run", "format_table"]

#: Games with a final score table.
SCORED_GAMES = ("carrossel",)


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``companion score``."""
    parser.add_argument("game", choices=SCORED_GAMES, help="the game")
    parser.add_argument("state", nargs="?", metavar="STATE.json", help="the table file")
    parser.add_argument(
        "--events",
        metavar="FILE",
        help="instead: observations (JSON Lines) of a game to referee and score",
    )
    parser.add_argument("--json", action="store_true", help="print the table as JSON")


def format_table(table: dict[str, Any]) -> str:
    """The score table as aligned text, one row per player (best first), winners marked ``*``,
    one column per objective card (``#id``) with a legend below."""
    rows = table["players"]
    labels = list(rows[0]["objectives"]) if rows else []
    head = (
        [" player", "colour", "clients"]
        + [label.split()[0] for label in labels]
        + ["total", "cards", "standees", "rank"]
    )
    body = []
    for r in sorted(rows, key=lambda r: r["rank"]):
        mark = "*" if r["player"] in table["winners"] else " "
        body.append(
            [mark + r["player"], r["colour"], str(r["clients_vp"])]
            + [str(r["objectives"][o]) for o in labels]
            + [str(r["total"]), str(r["clients"]), str(r["standees"]), str(r["rank"])]
        )
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    lines = ["  ".join(x.ljust(w) for x, w in zip(line, widths)).rstrip() for line in [head] + body]
    legend = [f"{label}" for label in labels]
    winners = table["winners"]
    verdict = (
        f"winner: {winners[0]}" if len(winners) == 1 else f"shared victory: {', '.join(winners)}"
    )
    return "\n".join(
        lines
        + ["", "clients = VP of the client cards won; #id = VP from that objective card:"]
        + ["  " + x for x in legend]
        + [
            "",
            verdict + " (ties: most VP, then most client cards, then most standees on their tiles)",
        ]
    )


def run(args: argparse.Namespace) -> int:
    """Print the table; a bad file is a one-line error naming the field (exit 2)."""
    from companion.cli import UsageError
    from companion.config import load
    from companion.games import referee_from_config
    from companion.games.carrossel import GameDataError, StateError, final_scores, table_from_json

    if (args.state is None) == (args.events is None):
        raise UsageError("score: give either STATE.json or --events FILE")
    config = load(args.config)
    try:
        referee = referee_from_config(args.game, config)
    except GameDataError as exc:
        raise UsageError(str(exc)) from None
    if args.state is not None:
        try:
            with open(args.state, encoding="utf-8") as f:
                doc = json.load(f)
        except OSError as exc:
            raise UsageError(f"{args.state}: {exc.strerror}") from None
        except json.JSONDecodeError as exc:
            raise UsageError(
                f"{args.state}: not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
            ) from None
        except UnicodeDecodeError:
            raise UsageError(f"{args.state}: not UTF-8 text") from None
        try:
            state = table_from_json(referee.data, doc, args.state)
        except StateError as exc:
            raise UsageError(str(exc)) from None
    else:
        from companion.events import InvalidObservation

        state = referee.initial_state()
        try:
            with open(args.events, encoding="utf-8") as f:
                lines = f.readlines()
        except OSError as exc:
            raise UsageError(f"--events {args.events}: {exc.strerror}") from None
        for number, raw in enumerate(lines, start=1):
            text = raw.strip()
            if not text or text.startswith("#"):
                continue
            try:
                obs = referee.vocabulary.observation(json.loads(text))
            except (ValueError, TypeError) as exc:
                raise UsageError(f"--events {args.events}: line {number}: {exc}") from None
            state, calls = referee.apply(state, obs)
            for call in calls:
                if isinstance(call, InvalidObservation):
                    print(f"companion score: line {number}: {call.reason}", file=sys.stderr)
        if state.phase == "waiting":
            raise UsageError(f"--events {args.events}: no game_start, nothing to score")
        if state.phase != "over":
            print(
                f"companion score: the game is not over (round {state.round}, phase {state.phase}); scoring the table as it stands",
                file=sys.stderr,
            )
    table = final_scores(referee.data, state)
    if args.json:
        print(json.dumps(table, indent=2))
    else:
        print(format_table(table))
    return 0
