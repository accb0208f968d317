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
