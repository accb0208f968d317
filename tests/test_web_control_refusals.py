"""``/api/control``: every refused control is HTTP 400 with its sentence, a bad game as a bad
control (not a 200 with ok false for one and a 400 for the other)."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from companion.sources.entries import EntryServer
from companion.web.app import make_app
from companion.web.hub import Hub

TOKEN = "t" * 24
OK = {"x-companion-token": TOKEN, "content-type": "application/json"}


@pytest.fixture
def client(tmp_path):
    entries = EntryServer(tmp_path / "journal.sock")  # not opened: the service refuses in words
    with TestClient(make_app(Hub(), entries, token=TOKEN), base_url="http://127.0.0.1",
                    raise_server_exceptions=False) as c:
        yield c


@pytest.mark.parametrize("body, words", [
    ({"control": "new_game", "game": "chess"}, "new_game"),  # this server takes no new game
    ({"control": "new_game", "game": "carrousel", "players": ["Ana", "Ben"]}, "new_game"),
    ({"control": "dance"}, "expected {\"control\": \"new_game\""),
    ({"language": "tlh"}, "unknown language 'tlh'"),
])
def test_a_refused_control_is_400_with_its_sentence(client, body, words):
    r = client.post("/api/control", json=body, headers=OK)
    assert r.status_code == 400, (r.status_code, r.text)
    reply = r.json()
    assert reply["ok"] is False and words in reply["error"] and reply["sentences"] == [reply["error"]]
