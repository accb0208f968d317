"""How the running service's game stands: the game, the scores, the phase, each part.

  companion status [--journal FILE] [--json]

The running service answers on its entry socket, beside the journal (journal.db ->
journal.sock; the protocol is in companion/sources/entries.py). When nothing answers there, status says "not running", shows the journal's last
game with its scores (with --json, as one JSON object: "running": false, "reason",
"last_session", "unfinished"), and exits with status 3 (as `systemctl status` does); a service that
does not answer in time exits with 1.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["configure", "run", "scores_in_words", "journal_state", "GAME_NAMES", "NOT_RUNNING"]

#: Exit status when no service answers (systemctl status uses 3 for "not running").
NOT_RUNNING = 3

#: The games' names as players write them.
GAME_NAMES = {
    "carrousel": "Carrousel",
    "monsieur-carrousel": "Monsieur Carrousel",
    "carrossel": "Carrossel",
    "carnival": "Carnival",
}


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``companion status``."""
    from companion.cli import finite_float

    parser.add_argument("--journal", metavar="FILE", help="the service's journal (default: [service] journal)")
    parser.add_argument("--timeout", type=finite_float, default=2.0, metavar="SECONDS",
                        help="how long to wait for the service's answer (default %(default)s)")
    parser.add_argument("--json", action="store_true", help="print the service's status as JSON")


def _pairs(d: Mapping[str, Any]) -> str:
    return ", ".join(f"{name} {value}" for name, value in d.items())


def scores_in_words(game: str, summary: Mapping[str, Any]) -> str:
    """The scores of a referee's summary as a line: ``"scores: Ana 3, Ben 5"`` (Carrousel),
    victory points (Carrossel), complete rides and tickets (Carnival), kids, raindrops and sunbeams (Monsieur
    Carrousel, played together); ``""`` when the summary has none."""
    if isinstance(summary.get("scores"), dict) and summary["scores"]:
        return "scores: " + _pairs(summary["scores"])
    if isinstance(summary.get("vp"), dict) and summary["vp"]:
        return "victory points: " + _pairs(summary["vp"])
    if isinstance(summary.get("complete_rides"), dict) and summary["complete_rides"]:
        return "complete rides: " + _pairs(summary["complete_rides"]) + (
            f"; tickets: {_pairs(summary['tickets'])}" if summary.get("tickets") else "")
    if isinstance(summary.get("tickets"), dict) and summary["tickets"]:
        return "tickets: " + _pairs(summary["tickets"])
    if game == "monsieur-carrousel" and "raindrops" in summary:
        seated = summary.get("seated")
        raindrops = f"raindrops {summary['raindrops']}" + (
            f" of {summary['raindrops_max']}" if summary.get("raindrops_max") else "")
        return ", ".join(x for x in (f"kids seated {seated}" if seated is not None else "", raindrops,
                                     f"sunbeams {summary.get('sunbeams', 0)}") if x)
    return ""


def _result_in_words(summary: Mapping[str, Any]) -> str:
    if summary.get("winner"):
        return f"winner {summary['winner']}"
    result = summary.get("result")
    if isinstance(result, str) and result:
        return f"result: {result.replace('_', ' ')}"
    return ""


def _game_name(game: str) -> str:
    return GAME_NAMES.get(game, game)


def _print_status(status: Mapping[str, Any], out: Callable[[str], None]) -> None:
    game = str(status.get("game", "?"))
    summary = status.get("summary") or {}
    table = {"sim": "the simulated table", "hardware": "a real table"}.get(str(status.get("table")), "a table")
    out(f"carousel-companion: running, {_game_name(game)} on {table}")
    t = status.get("t")
    when = f", at {float(t):.1f} s" if isinstance(t, (int, float)) else ""
    phase = summary.get("phase")
    over = " (game over)" if status.get("over") else (" (paused: `companion enter --resume`)"
                                                       if status.get("paused") else "")
    if "session" not in status and status.get("waiting_for_next_game"):
        out(f"between games: waiting for the next {_game_name(game)} game (a long press (3 s) on button 1, "
            "or `companion enter --new-game [GAME]`)")
        return
    out(f"session {status.get('session', '?')}{when}" + (f", phase {phase}" if phase else "") + over)
    for line in (scores_in_words(game, summary), _result_in_words(summary)):
        if line:
            out(line)
    parts = status.get("parts") or {}
    for name, part in parts.items():
        if isinstance(part, Mapping):
            detail = f" ({part['detail']})" if part.get("detail") else ""
            out(f"  {name}: {part.get('state', '?')}{detail}")


def journal_state(journal_path: Path, service_game: str = "") -> dict[str, Any]:
    """What the journal tells of its games when no service runs (read-only).

    Args:
        journal_path: the journal file.
        service_game: ``[service] game``, the game the service starts with when the journal
            holds no unfinished game with entries (one that does is resumed whatever its game:
            :func:`companion.service.unfinished_game`).

    Returns:
        A JSON-ready dict: ``"journal"`` (the path, str); ``"error"``: None, or a line saying
        why the journal cannot be read or is not there; ``"last_session"``: None, or
        ``{"session": int, "game": str, "started_at": ISO-8601 str, "finished": bool,
        "summary": dict | None, "note": str, "resumes": str | None}`` (``summary``: a
        finished game's result, an unfinished one's scores replayed from its observations;
        ``resumes``: how ``companion run`` resumes it, or that it refuses to, None when
        finished; ``damage``: None, or why it cannot be resumed exactly, the same check
        ``companion run`` makes, :func:`companion.service.resume_damage`); ``"unfinished"``:
        the latest unfinished session of each game ``companion run --game GAME`` would resume,
        as ``{"session", "game", "started_at", "resumes", "damage"}`` dicts, oldest game first.
    """
    from companion.journal import Journal, JournalError

    state: dict[str, Any] = {"journal": str(journal_path), "error": None, "last_session": None, "unfinished": []}
    if not journal_path.exists():
        state["error"] = f"no journal at {journal_path} yet: no game has been played"
        return state
    try:
        with Journal(journal_path, readonly=True) as journal:
            sessions = journal.sessions()
            if not sessions:
                return state
            last = sessions[-1]
            summary: Mapping[str, Any] | None = last.result if isinstance(last.result, dict) else None
            note = ""
            if not last.finished:
                summary, note = _replayed_summary(journal, last)
            resumable: dict[str, Any] = {}
            played: set[str] = set()
            for s in sessions:  # each game's latest unfinished session with entries is the one run resumes
                if s.finished:
                    continue
                has_entries = next(journal.entries(s.id), None) is not None
                if has_entries or s.game not in played:  # an empty one only when none has entries
                    resumable[s.game] = s
                if has_entries:
                    played.add(s.game)
            from companion.service import resume_damage, unfinished_game

            # the check `companion run` makes before it resumes (an empty session is never resumed)
            damage = {s.id: resume_damage(journal, s.id) for s in resumable.values() if s.game in played}

            first = unfinished_game(journal)  # the one a start without --game resumes
            next_id = first.id if first is not None else None
            starts = {s.id for s in resumable.values()
                      if s.id == next_id or (next_id is None and s.game == service_game)}
    except JournalError as exc:
        state["error"] = f"the journal cannot be read: {exc}"
        return state
    state["last_session"] = {
        "session": last.id, "game": last.game, "started_at": last.started_at, "finished": last.finished,
        "summary": dict(summary) if summary else None, "note": note,
        "resumes": None if last.finished else _resumes_when(last.game, last.id in starts, damage.get(last.id, ""),
                                                             journal_path),
        "damage": damage.get(last.id) or None}
    state["unfinished"] = [{"session": s.id, "game": game, "started_at": s.started_at,
                            "resumes": _resumes_when(game, s.id in starts, damage.get(s.id, ""), journal_path),
                            "damage": damage.get(s.id) or None}
                           for game, s in resumable.items()]
    return state


def _when(started_at: str) -> str:
    return started_at.replace('T', ' ').replace('+00:00', ' UTC')


def _last_session(journal_path: Path, out: Callable[[str], None], service_game: str = "") -> None:
    """The journal's last game and its scores, and for every game the unfinished session
    ``companion run --game GAME`` would resume (its latest unfinished one; read-only).
    ``service_game``: ``[service] game``, the game the service starts with."""
    state = journal_state(journal_path, service_game)
    if state["error"]:
        out(state["error"])
        return
    last = state["last_session"]
    if last is None:
        out(f"the journal {journal_path} holds no game yet")
        return
    how = "finished" if last["finished"] else f"unfinished: {last['resumes']}"
    out(f"last game in {journal_path}: session {last['session']}, {_game_name(last['game'])}, "
        f"started {_when(last['started_at'])}, {how}")
    if last["summary"]:
        for line in (scores_in_words(last["game"], last["summary"]), _result_in_words(last["summary"])):
            if line:
                out(line)
    if last["note"]:
        out(last["note"])
    for s in state["unfinished"]:
        if s["session"] != last["session"]:
            out(f"unfinished {_game_name(s['game'])} game: session {s['session']}, started "
                f"{_when(s['started_at'])}; {s['resumes']}")


def _resumes_when(game: str, first: bool, damage: str = "", journal_path: Path | None = None) -> str:
    """How an unfinished ``game`` resumes: ``first`` = it is the one a start without ``--game``
    resumes (:func:`companion.service.unfinished_game`, or an empty session of ``[service] game``
    when no game has entries). ``damage``: why it cannot be resumed exactly
    (:func:`companion.service.resume_damage`, the check ``companion run`` makes), ``""`` when
    it can; then the line says that run refuses it, and names the commands that show and copy
    the journal ``journal_path``."""
    if damage:
        where = f" {journal_path}" if journal_path is not None else ""
        return (f"it cannot be resumed exactly: {damage}; `companion run` refuses to resume it "
                f"(`companion run --new` starts a new game); `companion journal check{where}` names the damage, "
                f"`companion journal salvage{where} NEW.db` copies what is intact")
    if first:
        return "it resumes when the service starts"
    return f"it resumes with companion run --game {game}"


def _replayed_summary(journal: Any, session: Any) -> tuple[Mapping[str, Any] | None, str]:
    """An unfinished session's summary, from its observations re-applied to its referee."""
    from companion.events import EventError
    from companion.games import UnknownGame, referee_for
    from companion.journal import JournalError
    from companion.service import restore

    try:
        referee = referee_for(session.game, **session.options)
        state, _, _ = restore(referee, journal, session.id)
    except UnknownGame:
        return None, f"(this version does not know the game {session.game!r})"
    except (JournalError, EventError, TypeError) as exc:
        return None, f"(its entries cannot be replayed: {exc})"
    return dict(referee.summary(state)), ""


def run(args: argparse.Namespace, out: Callable[[str], None] = print) -> int:
    """Run ``companion status``: 0 when the service answered, 3 when none runs, 1 when it
    does not answer in time or refuses."""
    from companion import config as config_mod
    from companion.sources.entries import request, socket_path_for

    config = config_mod.load(getattr(args, "config", None))
    journal = Path(os.path.expanduser(args.journal or config["service"]["journal"]))  # ~nouser stays as given
    sock = socket_path_for(journal)
    try:
        reply = request(sock, {"control": "status"}, timeout_s=args.timeout)
    except ConnectionError as exc:
        if args.json:  # one JSON object, as when the service answers
            state = journal_state(journal, str(config["service"]["game"]))
            out(json.dumps({"running": False, "reason": str(exc), **state}, ensure_ascii=False, indent=2))
            return NOT_RUNNING
        out(f"carousel-companion: not running ({exc})")
        _last_session(journal, out, str(config["service"]["game"]))
        return NOT_RUNNING
    except PermissionError:
        out(f"carousel-companion: {sock} belongs to the service's user: run status as that user "
            "(sudo -u USER companion status)")
        return 1
    except (TimeoutError, ValueError) as exc:
        out(f"carousel-companion: not answering: {exc}; see journalctl -u carousel-companion")
        return 1
    if not reply.get("ok") or not isinstance(reply.get("status"), dict):
        out(f"carousel-companion: the service refused the status request: {reply.get('error', 'no reason given')}")
        return 1
    if args.json:
        out(json.dumps(reply["status"], ensure_ascii=False, indent=2))
    else:
        _print_status(reply["status"], out)
    return 0
