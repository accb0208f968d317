"""A power blip never loses a game started with `enter --new-game` (or the game page's new
game): a start without --game (the systemd unit's `run --next-game wait`) resumes the journal's
unfinished game whatever its kind, with its players and seed, and says so in one line; an
explicit --game of another kind plays that game and says how the unfinished one resumes."""

from __future__ import annotations

import json
from pathlib import Path

from companion.cli import main
from companion.journal import Journal

DEMO = Path(__file__).resolve().parents[1] / "docs" / "examples" / "carrousel-demo.jsonl"


def _config(tmp_path: Path) -> str:
    config = tmp_path / "companion.toml"
    config.write_text('[web]\nenabled = false\n[service]\npin_factory = "mock"\n[speech]\nenabled = false\n')
    return str(config)


def _run(tmp_path: Path, *extra: str) -> int:
    return main(["--config", _config(tmp_path), "run", "--journal", str(tmp_path / "j.db"), "--speed", "1000",
                 "--quiet-moves", *extra])


def _appliance(tmp_path: Path) -> tuple[str, list[str], str]:
    """The systemd unit's command (`run --next-game wait`, no --game) on this journal, in a
    process of its own: ``(config, argv, working folder)``."""
    import sys

    config = _config(tmp_path)
    command = [sys.executable, "-m", "companion", "--config", config, "run", "--next-game", "wait", "--speed",
               "100", "--quiet-moves", "--journal", str(tmp_path / "j.db")]
    return config, command, str(Path(__file__).resolve().parents[1])


def _finished_carrousel_then_unfinished_monsieur(tmp_path: Path, capsys) -> None:
    """What the appliance leaves when killed: a Carrousel game played to its end (session 1),
    then a Monsieur Carrousel game asked for on the entry socket, half played (session 2)."""
    from companion.games import referee_for

    referee = referee_for("carrousel")
    state = referee.initial_state()
    with Journal(tmp_path / "j.db", checkpoint_s=None) as j:
        session = j.start_session("carrousel", {})
        for line in DEMO.read_text().splitlines():
            obs = referee.vocabulary.observation(json.loads(line))
            state, calls = referee.apply(state, obs)
            j.append_step(session, obs, calls)
        j.finish_session(session, {"phase": "over", "scores": {"Ana": 10, "Ben": 7}, "winner": "Ana"})
    assert _run(tmp_path, "--game", "monsieur-carrousel", "--new", "--players", "Zoe,Yann", "--seed", "5",
                "--until", "5") == 0
    capsys.readouterr()


def test_a_start_without_game_resumes_the_unfinished_game_of_another_kind(tmp_path, capsys):
    _finished_carrousel_then_unfinished_monsieur(tmp_path, capsys)
    # [service] game is carrousel (the default): the unfinished Monsieur Carrousel game wins
    assert _run(tmp_path, "--until", "40") == 0
    out, err = capsys.readouterr()
    said = [x for x in err.splitlines() if "unfinished monsieur-carrousel game" in x]
    assert len(said) == 1 and "session 2" in said[0] and "resuming it" in said[0] and "--new" in said[0], err
    assert out.splitlines()[0].startswith("resumed session 2 at t=")
    assert "Carrousel starts" not in out
    with Journal(tmp_path / "j.db", readonly=True) as j:
        sessions = j.sessions()
        assert [(s.id, s.game) for s in sessions] == [(1, "carrousel"), (2, "monsieur-carrousel")]
        assert sessions[1].table["players"] == ["Zoe", "Yann"] and sessions[1].table["seed"] == 5
        assert max(e.t for e in j.entries(2)) > 5  # it went on playing the same session


def test_players_given_against_the_resumed_game_are_refused_naming_it(tmp_path, capsys):
    _finished_carrousel_then_unfinished_monsieur(tmp_path, capsys)
    assert _run(tmp_path, "--players", "Lu,Max", "--until", "10") == 2
    err = capsys.readouterr().err
    assert "holds an unfinished monsieur-carrousel game (session 2" in err and "Traceback" not in err
    assert _run(tmp_path, "--until", "6") == 0  # the refusal left the journal unlocked


def test_an_explicit_other_game_is_played_and_the_unfinished_one_stays_resumable(tmp_path, capsys):
    _finished_carrousel_then_unfinished_monsieur(tmp_path, capsys)
    assert _run(tmp_path, "--game", "carrousel", "--until", "5") == 0
    err = capsys.readouterr().err
    said = [x for x in err.splitlines() if "unfinished monsieur-carrousel game of session 2" in x]
    assert len(said) == 1 and "--game monsieur-carrousel` resumes it" in said[0], err
    with Journal(tmp_path / "j.db", readonly=True) as j:
        sessions = {s.id: s for s in j.sessions()}
        assert sessions[2].game == "monsieur-carrousel" and not sessions[2].finished
        assert sessions[3].game == "carrousel" and not sessions[3].finished
    # the newest unfinished game (the Carrousel one just stopped) is the one a plain start resumes
    assert _run(tmp_path, "--until", "8") == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0].startswith("resumed session 3 at t=") and "unfinished" not in err
    # and the Monsieur Carrousel game still resumes by name, exactly where it stopped
    assert _run(tmp_path, "--game", "monsieur-carrousel", "--until", "8") == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0].startswith("resumed session 2 at t=")
    assert "unfinished carrousel game of session 3" in err


def test_new_without_game_starts_the_configured_game_and_names_the_one_left(tmp_path, capsys):
    _finished_carrousel_then_unfinished_monsieur(tmp_path, capsys)
    assert _run(tmp_path, "--new", "--until", "5") == 0
    out, err = capsys.readouterr()
    assert "--new: a carrousel game is played; the unfinished monsieur-carrousel game of session 2" in err
    assert "Carrousel starts" in out
    with Journal(tmp_path / "j.db", readonly=True) as j:
        assert not j.session(2).finished and j.session(3).game == "carrousel"


def test_the_appliance_killed_during_a_game_asked_for_on_the_socket_resumes_that_game(tmp_path):
    """The tester's steps: `run --next-game wait` plays Carrousel and waits; `enter --new-game
    monsieur-carrousel`; kill -9; the same command again resumes Monsieur Carrousel."""
    import signal
    import subprocess

    config, command, root = _appliance(tmp_path)
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=root)
    try:
        for line in proc.stdout:  # wait for progress, not for time
            if line.startswith("game over: a new carrousel game starts"):
                break
        assert main(["--config", config, "enter", "--journal", str(tmp_path / "j.db"), "--new-game",
                     "monsieur-carrousel", "--players", "Zoe,Yann"]) == 0
        for line in proc.stdout:
            if "Zoe" in line:  # the Monsieur Carrousel game is being played
                break
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    with Journal(tmp_path / "j.db", readonly=True) as j:
        assert [(s.game, s.finished) for s in j.sessions()] == [("carrousel", True), ("monsieur-carrousel", False)]
    again = subprocess.run([*command, "--until", "400"], capture_output=True, text=True, cwd=root, timeout=120,
                           check=False)
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[0].startswith("resumed session 2 at t="), again.stdout[:300]
    assert "resuming it (not [service] game carrousel)" in again.stderr
    assert "Carrousel starts" not in again.stdout


def test_the_appliance_restarted_after_a_finished_game_waits_for_the_next_one(tmp_path, capsys):
    """A power blip between games: the restarted `run --next-game wait` waits again (the line
    says how a game starts) and starts no game by itself; `enter --new-game` then starts one."""
    import subprocess

    _finished_carrousel_then_unfinished_monsieur(tmp_path, capsys)
    with Journal(tmp_path / "j.db", checkpoint_s=None) as j:
        j.finish_session(2, {"phase": "over"})  # both games over: the appliance was between games
    config, command, root = _appliance(tmp_path)
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=root)
    try:
        first = proc.stdout.readline()  # the last game played (Monsieur Carrousel), not [service] game
        assert first.startswith("game over: a new monsieur-carrousel game starts with a long press"), first
        banner = proc.stderr.readline()  # the table's line names the game waited for too
        assert banner.startswith("companion: the simulated monsieur-carrousel table"), banner
        with Journal(tmp_path / "j.db", readonly=True) as j:
            assert len(j.sessions()) == 2  # no game started by itself
        capsys.readouterr()
        assert main(["--config", config, "status", "--journal", str(tmp_path / "j.db")]) == 0
        said = capsys.readouterr().out
        assert "between games: waiting for the next Monsieur Carrousel game" in said and "session ?" not in said
        assert main(["--config", config, "enter", "--journal", str(tmp_path / "j.db"), "--new-game",
                     "monsieur-carrousel", "--players", "Zoe,Yann"]) == 0
        for line in proc.stdout:
            if "Zoe" in line:  # the asked-for game is being played
                break
        else:
            raise AssertionError("the requested game never started")
    finally:
        proc.kill()
        proc.wait(timeout=30)
    with Journal(tmp_path / "j.db", readonly=True) as j:
        assert [(s.game, s.finished) for s in j.sessions()][2:] == [("monsieur-carrousel", False)]
