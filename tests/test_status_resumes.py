"""`companion status` (no service running) names the game a start without --game resumes: the
journal's newest unfinished game with entries, whatever [service] game says; the others resume
with `companion run --game GAME`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from companion.commands import status
from companion.games import referee_for
from companion.journal import Journal

DEMO = Path(__file__).resolve().parents[1] / "docs" / "examples" / "carrousel-demo.jsonl"


def _played(journal: Journal, game: str, lines: list[dict]) -> int:
    referee = referee_for(game)
    state = referee.initial_state()
    session = journal.start_session(game, {})
    for obj in lines:
        obs = referee.vocabulary.observation(obj)
        state, calls = referee.apply(state, obs)
        journal.append_step(session, obs, calls)
    return session


def test_the_newest_unfinished_game_is_the_one_the_service_resumes(tmp_path):
    path = tmp_path / "journal.db"
    with Journal(path, checkpoint_s=None) as j:
        _played(j, "carrousel", [json.loads(x) for x in DEMO.read_text().splitlines()])
        _played(j, "monsieur-carrousel", [{"type": "game_start", "t": 0.0, "players": ["Zoe", "Yann"]}])
    lines: list[str] = []
    rc = status.run(argparse.Namespace(journal=str(path), timeout=0.5, json=False, config=None), out=lines.append)
    assert rc == 3
    assert lines[1].startswith(f"last game in {path}: session 2, Monsieur Carrousel, started ")
    assert lines[1].endswith(" UTC, unfinished: it resumes when the service starts")  # not [service] game's
    assert lines[-1].startswith("unfinished Carrousel game: session 1, started ")
    assert lines[-1].endswith("; it resumes with companion run --game carrousel")
    state = status.journal_state(path, "carrousel")
    assert {u["game"]: u["resumes"] for u in state["unfinished"]} == {
        "carrousel": "it resumes with companion run --game carrousel",
        "monsieur-carrousel": "it resumes when the service starts"}
