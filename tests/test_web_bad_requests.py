"""Requests an attacker sends to the web page: each is a 4xx with one sentence, never a 500
with a traceback (deep nesting, a 5000-digit number, unhashable card colours, a body cut short)."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest
from starlette.testclient import TestClient

from companion.sources.entries import EntryServer
from companion.web.app import make_app
from companion.web.hub import Hub

TOKEN = "t" * 24
OK = {"x-companion-token": TOKEN, "content-type": "application/json"}


@pytest.fixture
def client(tmp_path):
    hub = Hub()
    entries = EntryServer(tmp_path / "journal.sock")  # not opened: no game, every entry refused in words
    with TestClient(make_app(hub, entries, token=TOKEN), base_url="http://127.0.0.1",
                    raise_server_exceptions=False) as c:
        yield c


@pytest.mark.parametrize("body, words", [
    ("[" * 8000 + "]" * 8000, "not JSON this service reads"),
    ('{"type": "board", "n": ' + "7" * 5000 + "}", "not JSON this service reads"),
    (b'{"type": "\xff"}', "not UTF-8"),
    ("{", "not JSON"),
])
def test_a_body_the_service_cannot_read_is_400_in_one_sentence(client, body, words):
    for route in ("/api/entry", "/api/control", "/api/setup/colours"):
        r = client.post(route, content=body, headers=OK)
        if route == "/api/setup/colours" and r.status_code == 404:  # no camera: refused before the body
            continue
        assert r.status_code == 400, (route, r.status_code, r.text[:200])
        assert words in r.text and "\n" not in r.text.strip() and len(r.text) < 300


def test_the_entry_socket_and_the_page_refuse_deep_nesting_alike(tmp_path):
    reply = EntryServer(tmp_path / "j.sock").handle("[" * 8000 + "]" * 8000)
    assert reply["ok"] is False and "not JSON this service reads" in reply["error"]


def test_a_client_that_disconnects_mid_body_is_one_info_line(tmp_path, caplog):
    app = make_app(Hub(), EntryServer(tmp_path / "j.sock"), token=TOKEN)
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
             "scheme": "http", "path": "/api/entry", "raw_path": b"/api/entry", "query_string": b"",
             "root_path": "", "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8080),
             "headers": [(b"host", b"127.0.0.1:8080"), (b"x-companion-token", TOKEN.encode()),
                         (b"content-type", b"application/json"), (b"content-length", b"100")]}
    messages = [{"type": "http.request", "body": b'{"type": "bo', "more_body": True}, {"type": "http.disconnect"}]
    sent = []

    async def receive():
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    with caplog.at_level(logging.DEBUG):
        asyncio.run(app(scope, receive, send))  # raises nothing
    assert not any(r.levelno >= logging.ERROR for r in caplog.records)
    assert not any(r.exc_info for r in caplog.records)
    lines = [r.getMessage() for r in caplog.records if "disconnected" in r.getMessage()]
    assert lines == ["web: a client disconnected before sending all of its POST /api/entry body"]


def test_card_colours_that_are_not_words_are_refused_in_words(tmp_path):
    from test_web_camera import (
        CARDS,
        SPACES,
        CameraView,
        Source,
        _client,
        _config,
        _frame,
    )

    client, token = _client(CameraView(Source(_frame(cards=CARDS)), _config(tmp_path)))
    ok = {"x-companion-token": token}
    held = client.post("/api/setup/hold", headers=ok).json()
    for cards in ({"south": [["a"], ["b"], ["c"]]}, {"south": [{"x": 1}, 2, None]}):
        r = client.post("/api/setup/colours", headers=ok,
                        json={"views": [{"id": held["id"], "spaces": list(SPACES), "cards": cards}]})
        assert r.status_code == 200 and r.json()["ok"] is False
        assert r.json()["error"].startswith("the frame: card 'south': expected a seat among")
    for bad_id in (1e999, -1e999):
        r = client.post("/api/setup/sample", headers=ok, content=json.dumps({"id": bad_id, "x": 0.5, "y": 0.5}))
        assert r.json() == {"ok": False, "error": f"frame {bad_id!r}: expected the number the page got "
                                                  "when it held a frame"}
    r = client.post("/api/setup/sample", headers=ok, json={"id": held["id"], "x": 10 ** 400, "y": 0.5})
    assert r.json()["ok"] is False and "expected fractions" in r.json()["error"]
