"""companion status: the running service's answer on its entry socket, in words; when none
runs, "not running", the journal's last game with its scores, and exit status 3."""

from __future__ import annotations

import argparse
import json
import socket
import threading
from pathlib import Path

import pytest

from companion.commands import status
from companion.journal import Journal

DEMO = Path(__file__).resolve().parents[1] / "docs" / "examples" / "carrousel-demo.jsonl"


def _status(journal: Path, timeout: float = 2.0, as_json: bool = False) -> tuple[int, list[str]]:
    lines: list[str] = []
    rc = status.run(argparse.Namespace(journal=str(journal), timeout=timeout, json=as_json, config=None),
                    out=lines.append)
    return rc, lines


class StatusServer:
    """A test double of the service's side of the protocol: one JSON line in, one out."""

    def __init__(self, path: Path, reply: dict | None, answer: bool = True):
        self.path, self.reply, self.answer = path, reply, answer
        self.requests: list[dict] = []
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen(1)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        with conn:
            data = b""
            while not data.endswith(b"\n"):
                chunk = conn.recv(4096)
                if not chunk:
                    return
                data += chunk
            self.requests.append(json.loads(data))
            if self.answer:
                conn.sendall((json.dumps(self.reply) + "\n").encode())
            else:
                conn.recv(1)  # hold the line open until the client gives up

    def close(self) -> None:
        self.sock.close()
        self.thread.join(timeout=5)


RUNNING = {
    "ok": True,
    "status": {
        "game": "carrousel", "session": 4, "table": "hardware", "t": 123.45, "over": False,
        "summary": {"phase": "playing", "scores": {"Ana": 3, "Ben": 5}, "winner": None},
        "parts": {"camera": {"state": "ok", "detail": "picamera2 imx708"},
                  "pins": {"state": "ok", "detail": ""},
                  "audio": {"state": "lost", "detail": "aplay failed: no such device"}},
    },
}


def test_a_running_service_in_words(tmp_path):
    journal = tmp_path / "journal.db"
    server = StatusServer(tmp_path / "journal.sock", RUNNING)
    try:
        rc, lines = _status(journal)
    finally:
        server.close()
    assert server.requests == [{"control": "status"}]
    assert rc == 0
    assert lines == [
        "carousel-companion: running, Carrousel on a real table",
        "session 4, at 123.5 s, phase playing",
        "scores: Ana 3, Ben 5",
        "  camera: ok (picamera2 imx708)",
        "  pins: ok",
        "  audio: lost (aplay failed: no such device)",
    ]


def test_json_output_is_the_services_status(tmp_path):
    server = StatusServer(tmp_path / "journal.sock", RUNNING)
    try:
        rc, lines = _status(tmp_path / "journal.db", as_json=True)
    finally:
        server.close()
    assert rc == 0 and json.loads("\n".join(lines)) == RUNNING["status"]


def test_a_game_over_names_the_winner(tmp_path):
    reply = {"ok": True, "status": {**RUNNING["status"], "over": True, "table": "sim",
                                    "summary": {"phase": "over", "scores": {"Ana": 10, "Ben": 5}, "winner": "Ana"},
                                    "parts": {}}}
    server = StatusServer(tmp_path / "journal.sock", reply)
    try:
        rc, lines = _status(tmp_path / "journal.db")
    finally:
        server.close()
    assert rc == 0
    assert lines == ["carousel-companion: running, Carrousel on the simulated table",
                     "session 4, at 123.5 s, phase over (game over)", "scores: Ana 10, Ben 5", "winner Ana"]


def test_a_service_that_does_not_answer(tmp_path):
    server = StatusServer(tmp_path / "journal.sock", None, answer=False)
    try:
        rc, lines = _status(tmp_path / "journal.db", timeout=0.2)
    finally:
        server.close()
    assert rc == 1
    assert lines == [f"carousel-companion: not answering: {tmp_path}/journal.sock: the service did not "
                     "answer within 0.2 s; see journalctl -u carousel-companion"]


def test_a_refusal_is_reported(tmp_path):
    server = StatusServer(tmp_path / "journal.sock", {"ok": False, "error": "unknown control 'status'"})
    try:
        rc, lines = _status(tmp_path / "journal.db")
    finally:
        server.close()
    assert rc == 1 and lines == ["carousel-companion: the service refused the status request: unknown control 'status'"]


def test_not_running_and_no_journal(tmp_path):
    rc, lines = _status(tmp_path / "journal.db")
    assert rc == status.NOT_RUNNING == 3
    assert lines[0].startswith(f"carousel-companion: not running ({tmp_path}/journal.sock: no companion service is listening")
    assert lines[1:] == [f"no journal at {tmp_path}/journal.db yet: no game has been played"]


def test_a_stale_socket_file_is_not_running(tmp_path):
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(tmp_path / "journal.sock"))
    stale.close()  # the file stays, nobody listens: what a killed service leaves
    rc, lines = _status(tmp_path / "journal.db")
    assert rc == 3 and "not running" in lines[0] and "Connection refused" in lines[0]


def _journal_demo(path: Path, finish: bool) -> None:
    from companion.games import referee_for

    referee = referee_for("carrousel")
    state = referee.initial_state()
    with Journal(path, checkpoint_s=None) as j:
        session = j.start_session("carrousel", {})
        for line in DEMO.read_text().splitlines():
            obs = referee.vocabulary.observation(json.loads(line))
            state, calls = referee.apply(state, obs)
            j.append_step(session, obs, calls)
        if finish:
            j.finish_session(session, {"phase": "over", "scores": {"Ana": 10, "Ben": 7}, "winner": "Ana"})


def test_not_running_shows_the_last_unfinished_game_with_its_scores(tmp_path):
    journal = tmp_path / "journal.db"
    _journal_demo(journal, finish=False)
    rc, lines = _status(journal)
    assert rc == 3
    assert "not running" in lines[0]
    assert lines[1].startswith(f"last game in {journal}: session 1, Carrousel, started ")
    assert lines[1].endswith(" UTC, unfinished: it resumes when the service starts")
    assert lines[2:] == ["scores: Ana 1, Ben 0"]  # Ana's one point in the demo, Ben penalised with none


def test_not_running_shows_the_last_finished_game(tmp_path):
    journal = tmp_path / "journal.db"
    _journal_demo(journal, finish=True)
    rc, lines = _status(journal)
    assert rc == 3
    assert lines[1].endswith(", finished")
    assert lines[2:] == ["scores: Ana 10, Ben 7", "winner Ana"]


def test_not_running_names_what_each_game_would_resume(tmp_path):
    """The last session is a Carnival game left unfinished; an older Carrousel game is
    unfinished too. `companion run` resumes per game (its latest unfinished session): status
    names both, and which one the service itself ([service] game, Carrousel by default) resumes."""
    journal = tmp_path / "journal.db"
    _journal_demo(journal, finish=False)
    with Journal(journal, checkpoint_s=None) as j:
        j.start_session("carnival", {})
    rc, lines = _status(journal)
    assert rc == 3
    assert lines[1].startswith(f"last game in {journal}: session 2, Carnival, started ")
    assert lines[1].endswith(" UTC, unfinished: it resumes with companion run --game carnival")
    assert lines[-1].startswith("unfinished Carrousel game: session 1, started ")
    assert lines[-1].endswith("; it resumes when the service starts")


@pytest.mark.parametrize("game, summary, words", [
    ("carrossel", {"phase": "play", "vp": {"Ana": 4, "Ben": 2}}, "victory points: Ana 4, Ben 2"),
    ("carnival", {"phase": "turn", "tickets": {"Ana": 1, "Cleo": 3}}, "tickets: Ana 1, Cleo 3"),
    ("carnival", {"phase": "turn", "complete_rides": {"Ana": 2, "Cleo": 0}, "tickets": {"Ana": 1, "Cleo": 3}},
     "complete rides: Ana 2, Cleo 0; tickets: Ana 1, Cleo 3"),
    ("monsieur-carrousel", {"phase": "roll", "seated": 3, "raindrops": 2, "raindrops_max": 8, "sunbeams": 1},
     "kids seated 3, raindrops 2 of 8, sunbeams 1"),
    ("carrousel", {"phase": "waiting", "scores": {}}, ""),
])
def test_scores_in_words(game, summary, words):
    assert status.scores_in_words(game, summary) == words


def test_cli_exit_status_3(tmp_path, capsys):
    from companion.cli import main

    assert main(["status", "--journal", str(tmp_path / "j.db")]) == 3
    out = capsys.readouterr().out
    assert "carousel-companion: not running" in out and "no journal at" in out
