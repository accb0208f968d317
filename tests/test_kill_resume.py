"""Killing `companion run` with SIGKILL mid-game loses nothing: a restart with the same
journal resumes the game with the same scores (issue: Journal)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from companion.commands.replay import replay_session
from companion.games import referee_for
from companion.journal import Journal
from companion.service import restore


def companion(tmp_path, *args):
    config = tmp_path / "config.toml"
    config.write_text('[service]\npin_factory = "mock"\n[sim]\nseed = 4\n')
    return subprocess.Popen(
        [sys.executable, "-m", "companion", "--config", str(config), "run", "--speed", "100",
         "--journal", str(tmp_path / "journal.db"), "--quiet-moves", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=os.path.dirname(os.path.dirname(__file__)),
    )


def test_sigkill_mid_game_then_restart_resumes_with_the_same_scores(tmp_path):
    proc = companion(tmp_path, "--new")
    points = 0
    for line in proc.stdout:  # wait for real progress, not for time
        if "scores with" in line:
            points += 1
        if points == 6:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL

    with Journal(tmp_path / "journal.db") as journal:
        session = journal.unfinished("carrousel")
        assert session is not None
        state, last_t, n = restore(referee_for("carrousel"), journal, session.id)
        scores = {p.name: p.score for p in state.players}
    assert sum(scores.values()) >= 4

    proc = companion(tmp_path)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    first = out.splitlines()[0]
    expected = ", ".join(f"{p} {s}" for p, s in scores.items())
    assert first.startswith(f"resumed session {session.id} at t=") and first.endswith(f"scores: {expected}")
    assert "WINNER" in out

    with Journal(tmp_path / "journal.db") as journal:
        s = journal.session(session.id)
        assert s.finished
        assert replay_session(journal, s).identical


def test_resuming_with_other_players_is_refused_with_a_clear_message(tmp_path):
    proc = companion(tmp_path, "--new", "--until", "5")
    proc.communicate(timeout=60)
    assert proc.returncode == 0
    proc = companion(tmp_path, "--players", "Lu,Max")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert "holds an unfinished carrousel game" in err and "--new" in err and "Traceback" not in err


def test_carrossel_and_carnival_play_to_the_end_and_resume(tmp_path):
    """`companion run --game carrossel|carnival`: the simulated table plays a whole game; a
    game stopped half-way resumes from the journal and every call replays exactly."""
    for game in ("carrossel", "carnival"):
        first = companion(tmp_path, "--game", game, "--new", "--until", "60")
        out, err = first.communicate(timeout=120)
        assert first.returncode == 0, err
        again = companion(tmp_path, "--game", game)
        out, err = again.communicate(timeout=120)
        assert again.returncode == 0, err
        assert out.startswith("resumed session")
        assert "winner" in out.lower()
        with Journal(tmp_path / "journal.db") as journal:
            session = [s for s in journal.sessions() if s.game == game][-1]
            assert session.finished
            assert replay_session(journal, session).identical


def test_a_camera_game_stopped_with_a_point_pending_resumes_without_a_stale_card(tmp_path):
    """`--camera sim`: stopped while a claim waits in the jitter buffer (journaled, not yet
    applied; seed 7: Ben presses for red-yellow-green at 3.14 s), the restart applies it and the
    camera is shown the table of after that point from its first frame: no stale card is
    read, nothing is refused, and the journal replays exactly."""
    first = companion(tmp_path, "--camera", "sim", "--seed", "7", "--new", "--until", "3.5")
    out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    with Journal(tmp_path / "journal.db") as journal:
        session = journal.unfinished("carrousel")
        pending = [journal.observation(e, referee_for("carrousel").vocabulary) for e in journal.pending(session.id)]
        state, _, _ = restore(referee_for("carrousel"), journal, session.id)
    assert [o.TYPE for o in pending] == ["claim"]  # the point is decided only after the restart
    assert {p.name: p.score for p in state.players}["Ben"] == 0

    again = companion(tmp_path, "--camera", "sim", "--until", "6")
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    assert out.startswith(f"resumed session {session.id}")
    with Journal(tmp_path / "journal.db") as journal:
        entries = list(journal.entries(session.id))
        calls = [e for e in entries if e.kind == "call"]
        assert [c.type for c in calls if c.type in ("invalid_observation", "illegal_move")] == []
        points = [c for c in calls if c.type == "point"]
        assert points and (points[0].body["player"], points[0].body["card"]) == ("Ben", ["red", "yellow", "green"])
        seen = [e.body["card"] for e in entries if e.kind == "observation" and e.type == "card_seen" and e.t > 3.5]
        assert ["red", "yellow", "green"] not in seen  # the card Ben won is never read again
        assert any(e.kind == "observation" and e.type == "board" and e.t > 3.5 for e in entries)  # play went on
        assert replay_session(journal, journal.session(session.id)).identical
