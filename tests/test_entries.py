"""The entry source: a Unix socket beside the journal (and standard input) taking observations
of the game's vocabulary; every bad line gets one clear answer and nothing else happens."""

from __future__ import annotations

import io
import json
import os
import socket
import stat

import pytest

from companion.clock import ManualClock
from companion.games.carnival import CarnivalReferee
from companion.health import PartMissing
from companion.sources.entries import EntryServer, request, socket_path_for


@pytest.fixture
def server(tmp_path):
    srv = EntryServer(tmp_path / "journal.sock", status=lambda: {"game": "carnival"})
    srv.open()
    got = []
    clock = ManualClock(12.5)
    srv.bind("carnival", CarnivalReferee().vocabulary, got.append, clock)
    yield srv, got
    srv.close()


def raw(path, data: bytes) -> dict:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)  # refusals come at once; a loaded machine may be slow
    s.connect(str(path))
    s.sendall(data)
    reply = b""
    while not reply.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        reply += chunk
    s.close()
    return json.loads(reply)


def test_the_socket_sits_beside_the_journal_and_only_its_user_may_write(tmp_path, server):
    srv, _ = server
    assert socket_path_for(tmp_path / "journal.db") == tmp_path / "journal.sock"
    mode = os.stat(srv.path).st_mode
    assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600


def test_an_entry_is_stamped_with_the_services_clock_and_handed_on(server):
    srv, got = server
    reply = srv.handle(json.dumps({"type": "roll", "player": "Ana", "dice": [1, 2, 3], "t": 999.0}), wait=False)
    assert reply == {"ok": True}
    assert len(got) == 1 and got[0].t == 12.5 and got[0].dice == (1, 2, 3)


def test_the_reply_carries_the_referees_calls(server):
    from companion.events import InvalidObservation

    srv, _ = server
    vocabulary = CarnivalReferee().vocabulary

    def judged(obs):  # the service applies the entry and tells its observers
        srv.applied(obs, [InvalidObservation(t=obs.t, observation={}, reason="not Ana's turn")])

    srv.bind("carnival", vocabulary, judged, ManualClock(3.0))
    reply = request(srv.path, {"type": "roll", "player": "Ana", "dice": [1, 2, 3]})
    assert reply["ok"] and reply["calls"][0]["reason"] == "not Ana's turn"


@pytest.mark.parametrize("line, words", [
    (b"not json\n", "not JSON"),
    (b"[1, 2]\n", "expected a JSON object"),
    (b"\xff\xfe\n", "not UTF-8"),
    (b'{"type": "claim", "player": "Ana"}\n', "unknown observation type 'claim' for carnival"),
    (b'{"type": "tick"}\n', "the service's own observation"),
    (b'{"type": "roll", "player": 3}\n', "roll: field 'player'"),
    (b'{"game": "carrossel", "type": "play"}\n', "referees carnival, not carrossel"),
    (b'{"control": "reboot"}\n', "unknown control 'reboot'"),
    (b'{"control": "new_game"}\n', "does not take a new game"),
    (b'{"game": "carnival", "type": {"a": 1}}\n', "field 'type'"),
    (b'{"type": ["roll"]}\n', "field 'type'"),
    (b'{"game": 3, "type": "roll"}\n', "field 'game'"),
    (b'{"type": "roll", "player": "Ana", "dice": [' + b"9" * 5000 + b']}\n', "not JSON this service reads"),
    (b'{"type": "roll", "dice": ' + b"[" * 8000 + b"]" * 8000 + b'}\n', "not JSON this service reads"),
    (b'{"game": "\\udfff", "type": "roll"}\n', "referees carnival, not"),
])
def test_a_bad_line_gets_one_clear_answer_and_nothing_is_handed_on(server, line, words):
    srv, got = server
    reply = raw(srv.path, line)
    assert reply["ok"] is False and words in reply["error"]
    assert got == []


def test_a_line_too_long_is_refused(server):
    srv, got = server
    reply = raw(srv.path, b"x" * (70 * 1024))
    assert reply["ok"] is False and "longer than" in reply["error"] and got == []


def test_status_is_answered(server):
    srv, _ = server
    assert request(srv.path, {"control": "status"}) == {"ok": True, "status": {"game": "carnival"}}


def test_between_games_entries_are_refused_until_the_next_one(server):
    srv, got = server
    srv.unbind()
    reply = request(srv.path, {"type": "roll", "player": "Ana", "dice": [1, 2, 3]})
    assert not reply["ok"] and "no game is being refereed" in reply["error"] and got == []


def test_a_stale_socket_is_replaced_and_a_live_one_refused(tmp_path, server):
    srv, _ = server
    with pytest.raises(PartMissing, match="another companion service is running"):
        EntryServer(srv.path).open()
    stale = tmp_path / "stale.sock"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(stale))
    s.close()  # a dead service's socket file
    again = EntryServer(stale)
    again.open()
    again.close()
    plain = tmp_path / "plain.sock"
    plain.write_text("mine")
    with pytest.raises(PartMissing, match="not a socket"):
        EntryServer(plain).open()
    assert plain.read_text() == "mine"


def test_no_service_listening_is_one_clear_error(tmp_path):
    with pytest.raises(ConnectionError, match="no companion service is listening"):
        request(tmp_path / "none.sock", {"control": "status"})


def test_standard_input_lines_are_entries_and_bad_ones_named_by_line(tmp_path, capsys):
    lines = io.StringIO('{"type": "roll", "player": "Ana", "dice": [4, 5, 6]}\n\nnope\n'
                        '{"game": "carnival", "type": {"a": 1}}\n{"type": "roll", "player": "Ben", "dice": [1]}\n')
    srv = EntryServer(tmp_path / "j.sock", stdin=lines)
    got = []
    srv.bind("carnival", CarnivalReferee().vocabulary, got.append, ManualClock(3.0))
    srv._read_stdin()
    assert [o.dice for o in got] == [(4, 5, 6), (1,)]  # a bad line never stops the later ones
    err = capsys.readouterr().err
    assert "standard input line 3: not JSON" in err and "line 4: field 'type'" in err


def test_standard_input_lines_wait_for_the_game_to_start(tmp_path):
    import threading

    lines = io.StringIO('{"type": "roll", "player": "Ana", "dice": [4, 5, 6]}\n')
    srv = EntryServer(tmp_path / "j.sock", stdin=lines)
    got = []
    reader = threading.Thread(target=srv._read_stdin, daemon=True)
    reader.start()  # piped in before the game's service takes entries
    reader.join(0.2)
    assert got == [] and reader.is_alive()
    srv.bind("carnival", CarnivalReferee().vocabulary, got.append, ManualClock(3.0))
    reader.join(5)
    assert [o.dice for o in got] == [(4, 5, 6)]
