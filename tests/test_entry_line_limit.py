"""The entry socket and standard input take lines of at most 16 KiB (the web page's largest
body): a longer line is refused in one line without being held whole, and a bad value is
quoted back by its first characters only."""

from __future__ import annotations

import io
import json
import logging
import socket

import pytest

from companion.clock import ManualClock
from companion.events import InvalidObservation, shown
from companion.games.carrossel import CarrosselReferee
from companion.sources.entries import MAX_LINE, EntryServer, request
from companion.web.app import MAX_BODY


@pytest.fixture
def server(tmp_path, monkeypatch):
    """An entry server bound to a Carrossel vocabulary with no service behind it: an accepted
    entry's reply waits ``REPLY_TIMEOUT_S`` for calls that never come (shortened here), then
    says it is pending."""
    from companion.sources import entries

    monkeypatch.setattr(entries, "REPLY_TIMEOUT_S", 0.2)
    srv = EntryServer(tmp_path / "journal.sock")
    srv.open()
    got = []
    srv.bind("carrossel", CarrosselReferee().vocabulary, got.append, ManualClock(2.0))
    yield srv, got
    srv.close()


def _send(path, data: bytes) -> list[dict]:
    """Send ``data`` and read every reply line until the server has answered them all."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)  # a loaded machine: the replies come after REPLY_TIMEOUT_S, far under this
    s.connect(str(path))
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
    out = b""
    while chunk := s.recv(65536):
        out += chunk
    s.close()
    return [json.loads(line) for line in out.splitlines()]


def test_the_socket_takes_the_web_pages_cap():
    assert MAX_LINE == MAX_BODY == 16 * 1024


def test_a_long_line_with_its_newline_is_refused_and_the_next_line_still_read(server):
    srv, got = server
    long_entry = json.dumps({"type": "play", "player": "A" * 100_000, "slot": 1, "animals": ["fish"]}).encode()
    good = json.dumps({"type": "play", "player": "Ana", "slot": 1, "animals": ["fish"]}).encode()
    replies = _send(srv.path, long_entry + b"\n" + good + b"\n")
    assert len(replies) == 2
    assert replies[0]["ok"] is False and f"longer than {MAX_LINE} bytes" in replies[0]["error"]
    assert "AAAA" not in replies[0]["error"]
    assert len(got) == 1 and got[0].player == "Ana"  # the long one never reached the referee


def test_a_line_just_over_the_cap_is_refused_and_one_at_the_cap_read(server):
    srv, got = server
    head = b'{"type": "play", "player": "Ana", "slot": 1, "animals": ["fish"], "x": "'
    at_cap = head + b"y" * (MAX_LINE - len(head) - 2) + b'"}'
    assert len(at_cap) == MAX_LINE
    over = head + b"y" * (MAX_LINE - len(head) - 1) + b'"}'
    first, second = _send(srv.path, at_cap + b"\n" + over + b"\n")
    assert "unknown field" in first["error"]  # read and judged: the unknown field named
    assert "longer than" in second["error"] and got == []


def test_the_client_refuses_to_send_a_line_over_the_cap(server):
    srv, got = server
    with pytest.raises(ValueError, match=f"at most {MAX_LINE} bytes"):
        request(srv.path, {"type": "play", "player": "A" * 100_000, "slot": 1, "animals": ["fish"]})
    assert got == []


def test_a_long_bad_value_is_quoted_by_its_first_characters():
    name = "B" * 5000
    assert shown(name) == f"'{'B' * 40}…' (5000 characters)"
    assert shown("Ana") == "'Ana'"
    obs = CarrosselReferee().vocabulary.observation({"type": "play", "t": 1.0, "player": name, "slot": 1,
                                                     "animals": ["fish"]})
    call = InvalidObservation.rejecting(obs, f"player: unknown player {name!r} (players: Ana, Ben)")
    assert call.reason == f"player: unknown player '{'B' * 40}…' (5000 characters) (players: Ana, Ben)"


def test_an_unknown_long_type_or_field_is_not_echoed_whole(server):
    srv, _ = server
    reply = srv.handle(json.dumps({"type": "Z" * 5000}))
    assert "(5000 characters)" in reply["error"] and len(reply["error"]) < 400
    reply = srv.handle(json.dumps({"type": "play", "player": "Ana", "slot": 1, "animals": ["fish"], "q" * 5000: 1}))
    assert "(5000 characters)" in reply["error"] and len(reply["error"]) < 400


def test_standard_input_refuses_a_long_line_once_and_reads_on(tmp_path, capsys, caplog):
    lines = io.StringIO(json.dumps({"type": "play", "player": "A" * 100_000, "slot": 1, "animals": ["fish"]})
                        + "\nnope\n" + json.dumps({"type": "play", "player": "Ana", "slot": 1, "animals": ["fish"]})
                        + "\n")
    srv = EntryServer(tmp_path / "j.sock", stdin=lines)
    got = []
    srv.bind("carrossel", CarrosselReferee().vocabulary, got.append, ManualClock(3.0))
    with caplog.at_level(logging.WARNING, logger="companion.entries"):
        srv._read_stdin()
    assert [o.player for o in got] == ["Ana"]
    err = capsys.readouterr().err.splitlines()
    assert err == [f"companion: standard input line 1: line longer than {MAX_LINE} bytes: refused unread",
                   "companion: standard input line 2: not JSON: Expecting value at column 1 "
                   '(one JSON object a line, e.g. {"type": "claim", "player": "Cleo"})']
    # each bad line is said once: the line above, not a log warning as well
    assert not [r for r in caplog.records if "refused" in r.getMessage()]


def test_companion_enter_quotes_a_long_bad_argument_short(capsys):
    from companion.cli import main

    assert main(["enter", "carrossel", "play", "X" * 5000]) == 2
    err = capsys.readouterr().err
    assert "(5000 characters): expected NAME=VALUE" in err and len(err) < 200
    assert main(["enter", "G" * 5000, "play", "player=Ana"]) == 2
    err = capsys.readouterr().err
    assert "(5000 characters): expected a game" in err and len(err) < 300


def test_standard_input_takes_a_line_at_the_cap(tmp_path, capsys):
    head = '{"type": "play", "player": "Ana", "slot": 1, "animals": ["fish"], "x": "'
    at_cap = head + "y" * (MAX_LINE - len(head) - 2) + '"}'
    srv = EntryServer(tmp_path / "j.sock", stdin=io.StringIO(at_cap + "\n" + at_cap[:-2] + 'yy"}\n'))
    srv.bind("carrossel", CarrosselReferee().vocabulary, [].append, ManualClock(3.0))
    srv._read_stdin()
    err = capsys.readouterr().err.splitlines()
    assert "line 1: play: unknown field 'x'" in err[0]  # read and judged
    assert err[1] == f"companion: standard input line 2: line longer than {MAX_LINE} bytes: refused unread"
