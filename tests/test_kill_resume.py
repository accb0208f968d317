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


def test_the_resumed_simulated_table_shows_the_camera_the_journaled_table_and_nothing_stale():
    """In process, fast: after a point, :meth:`SimulatedCarrouselTable.resume` shows the camera
    the horses and the cards of after it; the camera source, primed with them, reports nothing
    for that table (no ``card_seen`` of a card already won) and still reports a change; a
    service call carrying an older summary does not bring the old card back."""
    from companion.games.carrousel import Board, CardSeen, CarrouselReferee, Claim, GameStart, Position
    from companion.health import PartLost
    from companion.sim.carrousel import SimulatedCarrouselTable, shortest_path
    from companion.sources.carrousel_camera import CarrouselCameraSource
    from companion.vision.sim import SimulatedCamera

    ref = CarrouselReferee()
    start = GameStart(t=0.0, players=("Ana", "Ben"), spaces=Position.from_text(".gbyrk.").spaces, seed=11)
    state, _ = ref.apply(ref.initial_state(), start)
    ana = state.player("Ana").active
    t = 0.0
    for move in shortest_path(state.position.spaces, ana):
        t += 1.0
        state, _ = ref.apply(state, Board(t=t, spaces=state.position.apply(move).spaces))
    before = ref.summary(state)
    state, calls = ref.apply(state, Claim(t=t + 0.5, player="Ana"))
    assert calls[0].TYPE == "point" and ana in state.player("Ana").won
    cards = {p.name: p.active for p in state.players}

    cam = SimulatedCamera(seed=2)
    sim = SimulatedCarrouselTable(("Ana", "Ben"), seed=3, camera=cam, seats=("south", "north"))
    sim.resume(state, t + 1.0)
    assert cam.spaces == state.position.spaces
    assert cam.cards == {"south": cards["Ana"], "north": cards["Ben"]}
    sim.announce(PartLost(t=t + 1.0, part="audio"), before)  # the summary of before the point
    assert cam.cards["south"] == cards["Ana"] != ana

    src = CarrouselCameraSource(cam, players=("Ana", "Ben"), settle_s=0.2)
    src.prime(state.position.spaces, cards)
    seen = [o for k in range(5) for o in src.step(t + 1.0 + 0.1 * k)]
    assert seen == []  # the table the referee knows: nothing to report, nothing stale
    moved = state.position.apply(state.position.legal_moves()[0]).spaces
    cam.set_table(spaces=moved)
    seen = [o for k in range(5, 10) for o in src.step(t + 1.0 + 0.1 * k)]
    assert [o.spaces for o in seen if isinstance(o, Board)] == [moved] and not any(isinstance(o, CardSeen) for o in seen)
    for obs in seen:
        state, calls = ref.apply(state, obs)
        assert all(c.TYPE != "invalid_observation" for c in calls)


def test_a_game_paused_when_it_stopped_resumes_at_the_time_it_was_paused():
    """The clock of a paused game restarts where session time stood (the pause), not 0.5 s on."""
    from companion.service import Opened

    assert Opened(1, True, None, 3.9, 4, {}, paused=True).origin == 3.9
    assert Opened(1, True, None, 3.9, 4, {}, paused=False).origin == 4.4
