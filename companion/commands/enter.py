"""Tell the running service what no sensor sees: an entry, sent to its entry socket.

An entry is an observation of the game's vocabulary (docs/vocabulary.md), written as its type
and fields ``name=value``: a value is read as JSON when it parses (numbers, true/false, null,
["a","b"]), a value with commas as a list, anything else as text; one value for a field that
holds a list is that list of one (``animals=fish``). The service stamps it with
its own clock, checks it with the referee and answers with the calls it caused, printed here in
sentences. Exit status 1 when the entry did not count: the referee rejected it
(``invalid_observation``, or a play the rules forbid: Carrossel's ``illegal_play``, "play
again"), or the service refused it (e.g. for another game than the one refereed); 0 when it
was taken; 2 for a mistake on the command line or no service listening.

Examples:
  companion enter carrossel play player=Ana slot=9 animals=swan,fish
  companion enter carrossel choose player=Ben option=2
  companion enter carnival game_start players=Ana,Ben discard=ferris_wheel:lights,carousel:seats
  companion enter monsieur-carrousel answer value=yes
  companion enter --json '{"type": "claim", "player": "Ana"}' carrousel
  companion enter --new-game carnival       # between games: start the next one
  companion enter --new-game carrousel --players Zoé,Yann,Xavi
  companion enter --pause                   # the game waits (deadlines, simulated players)
  companion enter --resume
  companion enter --status
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["configure", "run", "parse_fields", "REJECTIONS"]

#: Calls that answer an entry the referee did not take (the state is unchanged; the player
#: enters again): exit status 1, as a refusal by the service.
REJECTIONS = frozenset({"invalid_observation", "illegal_play"})


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``companion enter``."""
    parser.add_argument("game", nargs="?", help="the game the entry is for (checked by the service)")
    parser.add_argument("type", nargs="?", help="the observation type, e.g. play, roll, answer")
    parser.add_argument("fields", nargs="*", metavar="NAME=VALUE", help="the observation's fields")
    parser.add_argument("--json", metavar="OBJECT", help="the observation as one JSON object instead")
    parser.add_argument("--new-game", nargs="?", const="", metavar="GAME", help="start the next game (between games)")
    parser.add_argument("--players", metavar="NAMES", help="with --new-game: comma-separated names (checked as "
                        "`companion run --players`)")
    parser.add_argument("--pause", action="store_true", help="pause the game: its deadlines and the simulated "
                        "players wait until --resume")
    parser.add_argument("--resume", action="store_true", help="resume the paused game")
    parser.add_argument("--status", action="store_true", help="print the service's status as JSON")
    parser.add_argument("--journal", help="the service's journal (default: [service] journal); the socket is beside it")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for the answer (default %(default)s)")


def parse_fields(pairs: list[str]) -> dict[str, Any]:
    """``["player=Ana", "slot=9", "animals=swan,fish"]`` -> ``{"player": "Ana", "slot": 9,
    "animals": ["swan", "fish"]}``.

    Raises:
        companion.cli.UsageError: a pair without ``=``, or a field given twice.
    """
    from companion.cli import UsageError
    from companion.events import shown

    out: dict[str, Any] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name:
            raise UsageError(f"{shown(pair)}: expected NAME=VALUE")
        if name in out:
            raise UsageError(f"field {shown(name)} given twice")
        out[name] = _value(text)
    return out


def _as_listed(game: str, kind: str, fields: dict[str, Any]) -> dict[str, Any]:
    """One value given for a field that holds a list (``animals=fish``) becomes that list."""
    import typing

    from companion.games import GAMES, referee_for

    if game not in GAMES:
        return fields
    cls = referee_for(game).vocabulary.observations.get(kind)
    if cls is None:
        return fields
    hints = typing.get_type_hints(cls)
    out = dict(fields)
    for name, value in fields.items():
        hint = hints.get(name)
        kinds = {typing.get_origin(h) for h in (hint, *typing.get_args(hint))} if hint is not None else set()
        if kinds & {tuple, list} and not isinstance(value, list) and value is not None:
            out[name] = [value]
    return out


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    if "," in text:
        return [_value(part) for part in text.split(",")]
    return text


def run(args: argparse.Namespace) -> int:
    """Send the entry (or control request) and print the answer."""
    from companion.cli import UsageError
    from companion.config import load
    from companion.sources.entries import request, socket_path_for

    config = load(args.config)
    path = socket_path_for(args.journal or config["service"]["journal"])
    if args.players is not None and args.new_game is None:
        raise UsageError("--players goes with --new-game (the players of the next game)")
    if args.pause and args.resume:
        raise UsageError("--pause or --resume, not both")
    if args.status:
        obj: dict[str, Any] = {"control": "status"}
    elif args.pause or args.resume:
        obj = {"control": "pause" if args.pause else "resume", "by": "companion enter"}
    elif args.new_game is not None:
        obj = {"control": "new_game", "game": args.new_game or args.game or None}
        if args.players is not None:
            obj["players"] = [p.strip() for p in args.players.split(",")]
    else:
        if args.game is None:
            raise UsageError("expected GAME and an entry: companion enter GAME TYPE NAME=VALUE ... (see --help)")
        if args.json is not None:
            if args.type is not None or args.fields:
                raise UsageError("--json: give the whole observation there, not TYPE and fields too")
            try:
                obj = json.loads(args.json)
            except json.JSONDecodeError as exc:
                raise UsageError(f"--json: not JSON: {exc.msg} at column {exc.colno}") from None
            if not isinstance(obj, dict):
                raise UsageError("--json: expected one JSON object")
        else:
            if args.type is None:
                raise UsageError("expected the observation type after the game (e.g. play, roll, answer)")
            obj = {"type": args.type, **_as_listed(args.game, args.type, parse_fields(args.fields))}
        obj["game"] = args.game
    if args.game is not None:
        from companion.events import shown
        from companion.games import GAMES

        if args.game not in GAMES:
            raise UsageError(f"{shown(args.game)}: expected a game: {', '.join(GAMES)}")
    try:
        reply = request(path, obj, timeout_s=args.timeout)
    except (ConnectionError, TimeoutError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    if not reply.get("ok"):
        print(f"companion: refused: {reply.get('error')}", file=sys.stderr)
        return 1
    if "status" in reply:
        print(json.dumps(reply["status"], indent=2, ensure_ascii=False))
        return 0
    if "queued" in reply:
        print(f"new game: {reply['queued']}")
        return 0
    if reply.get("pending"):
        print("sent; the referee has not answered yet (it judges entries after the camera's settle time)")
        return 0
    refused = False
    for call in reply.get("calls", []):
        refused |= call.get("type") in REJECTIONS
        print(_sentence(call, args.game, config["speech"]["language"]))
    if not reply.get("calls"):
        print("accepted (no call)")
    return 1 if refused else 0


def _sentence(call: dict[str, Any], game: str, language: str) -> str:
    """The call as the console writes it (its catalogue sentence).

    Raises:
        companion.events.EventError: the reply holds a call this game does not know.
    """
    from companion.announcers.console import ConsoleAnnouncer
    from companion.games import referee_for
    from companion.health import PartBack, PartLost

    from companion.pause import SERVICE_CALLS

    from companion.events import InvalidObservation

    service_calls = {"part_lost": PartLost, "part_back": PartBack, **SERVICE_CALLS}
    if game is None:  # --pause / --resume: the service's own calls, or its refusal
        service_calls["invalid_observation"] = InvalidObservation
    cls = service_calls.get(call.get("type", ""))
    obj = cls.from_json(call) if cls is not None else referee_for(game).vocabulary.call(call)
    return ConsoleAnnouncer(game=game, language=language).line(obj)
