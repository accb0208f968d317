"""Replay a journaled session: re-apply its observations to a fresh referee and compare the
calls with the ones journaled at the time.

Prints the calls as JSON Lines (or only the verdict with --quiet) and exits 0 when every call
is reproduced exactly, 1 at the first difference (which it shows), or when entries of the
session are lost or damaged (the journal's sequence and checksums tell; then the calls that
remain cannot prove the game whole, and the verdict says how much is gone). It opens the
journal read-only, in a read-only folder too. Without --session the
most recent session is replayed; --list shows them all.

Examples:
  companion replay ~/.local/share/carousel-companion/journal.db
  companion replay journal.db --list
  companion replay --list            (the journal of [service] journal)
  companion replay journal.db --session 3 --quiet
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from typing import Any

from companion.journal import Journal, JournalError, Session

__all__ = ["configure", "run", "replay_session", "ReplayResult"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``companion replay``."""
    parser.add_argument("journal", nargs="?", default=None,
                        help="the SQLite journal file (default: [service] journal)")
    parser.add_argument("--session", type=int, help="session number (default: the latest)")
    parser.add_argument("--list", action="store_true", help="list the sessions and stop")
    parser.add_argument("--quiet", "-q", action="store_true", help="print only the verdict")


class ReplayResult:
    """Outcome of a replay.

    Attributes:
        calls: the calls the referee makes now, in order (JSON dicts).
        journaled: the calls journaled at the time (JSON dicts).
        first_difference: index of the first differing call, or None when identical.
        losses: lines naming entries of the session that are lost or damaged (empty when
            the journal holds it whole).
        waiting: observations that arrived but were not applied yet when the service
            stopped (a resume applies them; a replay has no calls to compare for them).
        end_unchecked: why the end of the session cannot be checked for lost entries (its tail
            file names the entry with another checksum), or None.
    """

    def __init__(self, calls: list[dict[str, Any]], journaled: list[dict[str, Any]],
                 losses: list[str] | None = None, waiting: int = 0):
        self.calls = calls
        self.journaled = journaled
        self.losses = list(losses or [])
        self.waiting = waiting
        self.first_difference: int | None = None
        self.end_unchecked: str | None = None
        for i in range(max(len(calls), len(journaled))):
            a = calls[i] if i < len(calls) else None
            b = journaled[i] if i < len(journaled) else None
            if a != b:
                self.first_difference = i
                break

    @property
    def identical(self) -> bool:
        """True when every journaled call was reproduced, and no other, and nothing of the
        session is lost or damaged."""
        return self.first_difference is None and not self.losses


def replay_session(journal: Journal, session: Session) -> ReplayResult:
    """Re-apply a session's observations to a fresh referee built with its options.

    Raises:
        companion.games.UnknownGame: the session's game is not known to this version.
        companion.journal.JournalError: a journaled observation no longer parses, or the
            file is damaged where the session is.
    """
    from companion.games import referee_for
    from companion.pause import is_pause_or_resume

    referee = referee_for(session.game, **session.options)
    state = referee.initial_state()
    calls: list[dict[str, Any]] = []
    journaled: list[dict[str, Any]] = []
    losses = journal.losses(session.id)  # first: a damaged index found there is then read around
    for entry in journal.entries(session.id):
        if entry.kind == "call":
            journaled.append(entry.body)
            continue
        observation = journal.observation(entry, referee.vocabulary)
        if is_pause_or_resume(observation):
            continue  # the players' pause is the service's: it journals no game call
        state, new_calls = referee.apply(state, observation)
        calls.extend(c.to_json() for c in new_calls)
    result = ReplayResult(calls, journaled, losses, len(journal.pending(session.id)))
    result.end_unchecked = getattr(journal, "end_unchecked", None)
    return result


def _result_words(result: dict[str, Any]) -> str:
    """A finished session's result column: the winner(s) and scores (Carrousel, Carrossel,
    Carnival), or a cooperative game's outcome (Monsieur Carrousel: won / lost, sunbeams and
    raindrops)."""
    if result.get("result") in ("won", "lost"):  # Monsieur Carrousel: the whole table plays
        return (f"the table {result['result']}; sunbeams {result.get('sunbeams', 0)}, "
                f"raindrops {result.get('raindrops', 0)}")
    winners = result.get("winners") or ([result["winner"]] if result.get("winner") else [])
    scores = result.get("scores") or result.get("complete_rides") or {}
    words = ", ".join(f"{p} {v}" for p, v in scores.items())
    if winners:
        return f"winner{'s' if len(winners) > 1 else ''} {' and '.join(map(str, winners))}" + (f"; {words}" if words else "")
    return words


def _lines(result: ReplayResult) -> Iterator[str]:
    import json

    for c in result.calls:
        yield json.dumps(c, separators=(",", ":"), ensure_ascii=False)


def run(args: argparse.Namespace) -> int:
    """Run ``companion replay``."""
    import os

    from companion.cli import UsageError

    where = ""
    if args.journal is None:  # the service's own journal, as status, enter and doctor use
        from companion import config as config_mod

        config = config_mod.load(getattr(args, "config", None))
        args.journal = os.path.expanduser(str(config["service"]["journal"]))
        where = " ([service] journal; give the journal file as an argument)"
    if not os.path.exists(args.journal):
        raise UsageError(f"{args.journal}: no such journal file{where}")
    with Journal(args.journal, readonly=True) as journal:
        sessions = journal.sessions()
        if args.list:
            print("session  game                started (UTC)              state       result")
            for s in sessions:
                state = "finished" if s.finished else "unfinished"
                result = _result_words(s.result) if isinstance(s.result, dict) else ""
                print(f"{s.id:>7}  {s.game:<18}  {s.started_at:<25}  {state:<10}  {result}")
            return 0
        if not sessions:
            raise JournalError(f"{args.journal}: the journal has no session")
        session = journal.session(args.session) if args.session is not None else sessions[-1]
        from companion.games import GAMES

        if session.game not in GAMES:  # a salvaged session whose row was lost ('?'), or a newer game
            raise UsageError(f"{args.journal}: session {session.id}'s game is {session.game!r}, not a game this "
                             f"version knows ({', '.join(GAMES)}): it cannot be replayed"
                             + (" (its session row was lost; `companion journal check` names it)"
                                if session.game == "?" else ""))
        result = replay_session(journal, session)
    if not args.quiet:
        for line in _lines(result):
            print(line)
    n = len(result.journaled)
    verdict = sys.stdout if args.quiet else sys.stderr
    if result.losses:
        state = "reproduced exactly" if result.first_difference is None else \
            f"different from call {result.first_difference + 1} on"
        print(f"replay of session {session.id}: NOT whole: {'; '.join(result.losses)}; "
              f"the {n} calls still journaled are {state}, the lost ones cannot be checked "
              f"(`companion journal check {args.journal}`)", file=verdict)
        return 1
    if result.identical:
        waiting = f" ({result.waiting} observations were still waiting to be applied)" if result.waiting else ""
        if not os.path.exists(args.journal + ".tail"):  # a copy of the file alone, or its tail deleted
            waiting += (f" (no {args.journal}.tail: whether entries were lost at the journal's end "
                        "cannot be checked)")
        elif result.end_unchecked:
            waiting += f" ({result.end_unchecked})"
        print(f"replay of session {session.id}: all {n} calls reproduced exactly{waiting}", file=verdict)
        return 0
    i = result.first_difference
    print(
        f"replay of session {session.id}: call {i + 1} differs\n"
        f"  journaled: {result.journaled[i] if i < n else '(none)'}\n"
        f"  replayed:  {result.calls[i] if i < len(result.calls) else '(none)'}",
        file=verdict,
    )
    return 1
