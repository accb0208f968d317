"""The web page's server against bad input, over real HTTP (uvicorn on 127.0.0.1:0): the token
on the LAN and for every changing request, a foreign Host, a huge or malformed body, a forged
entry, a game that does not exist, 50 browsers streaming at once, browsers that go away
mid-stream. The service keeps refereeing and every entry accepted is in the journal."""

from __future__ import annotations

import json
import os
import socket
import threading
import time

import httpx
import pytest

from companion.clock import MonotonicClock
from companion.games import referee_for
from companion.journal import Journal
from companion.service import Service, open_session
from companion.sources.entries import EntryServer
from companion.web import Hub, WebAnnouncer, WebServer
from companion.web.app import MAX_BODY, make_app
from companion.web.hub import MAX_CLIENTS
from companion.web.security import HEADER, load_token, token_path_for
from companion.web.server import bind

TOKEN = "t0ken-for-the-tests-0123456789"


class Table:
    """A Carrossel service fed only by the entry source, with the page's server in front of it."""

    def __init__(self, tmp_path, lan: bool):
        self.referee = referee_for("carrossel")
        self.journal = Journal(str(tmp_path / "journal.db"))
        opened = open_session(self.referee, self.journal, {}, {"players": ["Ana", "Ben"]}, True)
        self.session = opened.session
        self.entries = EntryServer(tmp_path / "journal.sock")
        source = self.entries.source("carrossel", self.referee.vocabulary)
        self.hub = Hub()
        web = WebAnnouncer(self.hub, "carrossel", ["Ana", "Ben"], "hardware")
        self.service = Service(self.referee, MonotonicClock(), journal=self.journal, session=self.session,
                               sources=[source], observers=[source], announcers=[web])
        web.attach(self.service)
        self.thread = threading.Thread(target=self.service.run, kwargs={"stop_when_over": False}, daemon=True)
        self.thread.start()
        assert self.entries.bound.wait(5)
        app = make_app(self.hub, self.entries, token=TOKEN, lan=lan, lan_url="http://192.0.2.1:8080/" if lan else None)
        self.server = WebServer(app, bind("127.0.0.1", 0), self.hub)
        self.server.start()
        self.url = self.server.url.rstrip("/")
        self.port = self.server.port

    def close(self):
        self.server.stop()
        self.service.stop()
        self.thread.join(5)
        self.entries.close()
        self.journal.close()

    def observations(self):
        return [e for e in self.journal.entries(self.session) if e.kind == "observation"]


@pytest.fixture
def local(tmp_path):
    t = Table(tmp_path, lan=False)
    yield t
    t.close()


@pytest.fixture
def lan(tmp_path):
    t = Table(tmp_path, lan=True)
    yield t
    t.close()


def test_local_pages_are_free_to_read_but_a_change_needs_the_token(local):
    with httpx.Client(base_url=local.url) as http:
        assert http.get("/").status_code == 200
        assert "text/html" in http.get("/entries").headers["content-type"]
        session = http.get("/api/session").json()
        assert session["token"] == TOKEN and session["game"] == "carrossel"
        r = http.post("/api/entry", json={"type": "game_start", "players": ["Ana", "Ben"], "seed": 7})
        assert r.status_code == 403 and HEADER in r.text
        r = http.post("/api/entry", json={"type": "game_start", "players": ["Ana", "Ben"], "seed": 7},
                      headers={HEADER: "wrong"})
        assert r.status_code == 403
        r = http.post("/api/entry", json={"type": "game_start", "players": ["Ana", "Ben"], "seed": 7},
                      headers={HEADER: TOKEN})
        assert r.status_code == 200 and r.json()["ok"], r.text
        assert any("Carrossel starts" in s for s in r.json()["sentences"])
        # A web site reaching the page by another name (DNS rebinding) is refused.
        r = http.get("/api/session", headers={"host": "evil.example:8080"})
        assert r.status_code == 403 and "local only" in r.text
    assert [e.type for e in local.observations()] == ["game_start"]


def test_on_the_lan_every_request_needs_the_token(lan):
    with httpx.Client(base_url=lan.url, headers={"host": "192.0.2.1:8080"}) as http:
        for path in ("/", "/entries", "/api/session", "/api/events", "/static/common.js", "/api/status"):
            r = http.get(path)
            assert r.status_code == 401, path
            assert "token" in r.text
        assert http.get("/", params={"token": "not-it"}).status_code == 401
        r = http.get("/entries", params={"token": TOKEN})  # the QR code's address
        assert r.status_code == 303 and r.headers["location"] == "/entries"
        assert "HttpOnly" in r.headers["set-cookie"] and "SameSite=Strict" in r.headers["set-cookie"]
        cookies = {"cookie": f"companion_token={TOKEN}"}
        assert http.get("/entries", headers=cookies).status_code == 200
        assert http.get("/api/session", headers=cookies).json()["token"] == TOKEN
        # The cookie alone changes nothing (another site's form would carry it): the header is needed.
        r = http.post("/api/entry", headers=cookies, json={"type": "game_start", "players": ["Ana", "Ben"]})
        assert r.status_code == 403
        r = http.post("/api/entry", headers={HEADER: TOKEN}, json={"type": "game_start", "players": ["Ana", "Ben"]})
        assert r.status_code == 200 and r.json()["ok"]
        # The QR code is for the Pi's own screen (a loopback client; the test's client is one).
        r = http.get("/api/qr.svg", headers=cookies)
        assert r.status_code == 200 and r.text.lstrip().startswith("<svg")


def test_bad_bodies_forged_entries_and_unknown_games_get_clear_answers(local):
    h = {HEADER: TOKEN}
    with httpx.Client(base_url=local.url, headers=h) as http:
        r = http.post("/api/entry", content=b"{" + b" " * (MAX_BODY + 10) + b"}", headers={"content-type": "application/json"})
        assert r.status_code == 413
        r = http.post("/api/entry", content=b"{not json")
        assert r.status_code == 400 and "not JSON" in r.text
        r = http.post("/api/entry", content=b"[1, 2]")
        assert r.status_code == 400 and "JSON object" in r.text
        r = http.post("/api/entry", content=b"\xff\xfe")
        assert r.status_code == 400
        assert http.post("/api/entry", json={"type": "game_start", "players": ["Ana", "Ben"], "seed": 7}).json()["ok"]
        # A player who does not exist: the referee refuses it in words, journaled, the game goes on.
        r = http.post("/api/entry", json={"type": "play", "player": "Mallory", "slot": 3, "animals": ["fox"]}).json()
        assert r["ok"] and r["calls"][0]["type"] == "invalid_observation"
        assert "Mallory" in " ".join(r["sentences"])
        # A game that does not exist, a type the game does not know, a field of the wrong type.
        r = http.post("/api/entry", json={"game": "chess", "type": "move"}).json()
        assert not r["ok"] and "carrossel, not chess" in r["sentences"][0]
        r = http.post("/api/entry", json={"type": "board"}).json()
        assert not r["ok"] and "unknown observation type 'board'" in r["error"]
        r = http.post("/api/entry", json={"type": "play", "player": "Ana", "slot": "nine", "animals": ["fox"]}).json()
        assert not r["ok"] and "slot" in r["error"]
        r = http.post("/api/entry", json={"type": "tick"}).json()
        assert not r["ok"]
        r = http.post("/api/control", json={"control": "new_game", "game": "chess"})
        assert r.status_code == 400 and not r.json()["ok"] and r.json()["sentences"] == [r.json()["error"]]
        r = http.post("/api/control", json={"language": "tlh"})
        assert r.status_code == 400 and "unknown language" in r.text
        assert http.get("/static/../../../etc/passwd").status_code == 404
        assert http.get("/static/%2e%2e/app.py").status_code == 404
    assert [e.type for e in local.observations()] == ["game_start", "play"]  # refusals before the referee: none
    assert not local.service._stop.is_set() and local.thread.is_alive()


def _stream(port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
    return s


def _read_until(s: socket.socket, marker: bytes, buf: bytearray) -> None:
    while marker not in buf:
        chunk = s.recv(65536)
        assert chunk, "the stream ended"
        buf += chunk


def _wait_for(predicate, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.02)


def test_fifty_browsers_at_once_and_some_going_away_mid_stream(local):
    streams = [_stream(local.port) for _ in range(50)]
    buffers = [bytearray() for _ in streams]
    for s, b in zip(streams, buffers):
        _read_until(s, b"event: hello", b)
    assert local.hub.clients == 50
    with httpx.Client(base_url=local.url, headers={HEADER: TOKEN}) as http:
        assert http.post("/api/entry", json={"type": "game_start", "players": ["Ana", "Ben"], "seed": 7}).json()["ok"]
        for s, b in zip(streams, buffers):
            _read_until(s, b"Carrossel starts", b)
        for s in streams[:25]:  # half of them go away without a word
            s.close()
        assert http.post("/api/entry", json={"type": "play", "player": "Mallory", "slot": 3, "animals": ["fox"]}).json()["ok"]
        for s, b in zip(streams[25:], buffers[25:]):
            _read_until(s, b"Mallory", b)
        _wait_for(lambda: local.hub.clients == 25)
        # The limit: one stream more than MAX_CLIENTS is told to come back later.
        more = [_stream(local.port) for _ in range(MAX_CLIENTS - 25)]
        extra = _stream(local.port)
        reply = bytearray()
        _read_until(extra, b"\r\n\r\n", reply)
        assert reply.startswith(b"HTTP/1.1 503")
        for s in [*streams[25:], *more, extra]:
            s.close()
        assert http.get("/api/status").status_code == 200  # still serving and refereeing
    assert [e.type for e in local.observations()] == ["game_start", "play"]


def test_a_slow_browser_is_dropped_and_never_holds_up_the_referee(local):
    from companion.web.hub import CLIENT_QUEUE

    s = _stream(local.port)
    buf = bytearray()
    _read_until(s, b"event: hello", buf)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    started = time.monotonic()
    # The browser reads nothing meanwhile: far more than the kernel's socket buffers hold
    # (loopback buffers grow to megabytes), so the hub's queue for it must overflow.
    for i in range(CLIENT_QUEUE * 20):
        local.hub.publish("call", {"type": "filler", "sentence": "x" * 4000, "t": float(i)})
    assert time.monotonic() - started < 2.0  # publishing never waited for the browser
    _wait_for(lambda: local.hub.clients == 0, timeout=30)  # a loaded machine is slow to notice
    s.close()


def test_the_lan_token_is_kept_beside_the_journal_private_and_never_through_a_link(tmp_path):
    journal = tmp_path / "journal.db"
    token = load_token("", True, journal)
    path = token_path_for(journal)
    assert path.name == "journal.web-token" and oct(path.stat().st_mode & 0o777) == "0o600"
    assert load_token("", True, journal) == token  # the same address keeps working after a restart
    assert load_token("my-own-token-1234567", True, journal) == "my-own-token-1234567"
    assert load_token("", False, journal) != token  # local only: a fresh one, nothing written
    path.chmod(0o644)
    with pytest.raises(ValueError, match="readable by other users"):
        load_token("", True, journal)
    path.unlink()
    os.symlink(tmp_path / "elsewhere", path)
    with pytest.raises(ValueError, match="regular file"):
        load_token("", True, journal)


def test_a_page_opened_to_a_non_local_address_without_lan_is_refused(tmp_path):
    from companion.config import validate
    from companion.health import PartMissing
    from companion.web import WebPage

    config = validate({"web": {"listen": "0.0.0.0:8080"}, "service": {"journal": str(tmp_path / "j.db")}})
    page = WebPage(config, tmp_path / "j.db", "sim")
    with pytest.raises(PartMissing, match=r"web page: \[web\] listen = '0.0.0.0:8080' is not a local address.*lan = true"):
        page.start(EntryServer(tmp_path / "j.sock"))
    off = WebPage(validate({"web": {"enabled": False}}), tmp_path / "j.db", "sim")
    assert off.hub is None
    off.start(None)  # nothing to start
    assert off.server is None
    assert json.loads(json.dumps(validate({})["web"]))["listen"] == "127.0.0.1:8080"


def test_a_table_with_camera_frames_serves_them_as_images_and_a_stream(local):
    import cv2
    import numpy as np

    frame = np.zeros((48, 64, 3), np.uint8)
    frame[:, 32:] = (0, 0, 255)
    ok, jpeg = cv2.imencode(".jpg", frame)
    assert ok
    with httpx.Client(base_url=local.url) as http:
        assert http.get("/api/camera.jpg").status_code == 404  # no camera: said so, never a made-up frame
        local.hub.camera = lambda: (jpeg.tobytes(), {"regions": []})
        r = http.get("/api/camera.jpg")
        assert r.status_code == 200 and r.headers["content-type"] == "image/jpeg"
        image = cv2.imdecode(np.frombuffer(r.content, np.uint8), cv2.IMREAD_COLOR)
        assert image.shape == (48, 64, 3) and image[24, 60, 2] > 200
        with http.stream("GET", "/api/camera.mjpg") as stream:
            assert stream.headers["content-type"].startswith("multipart/x-mixed-replace")
            got = b""
            for chunk in stream.iter_bytes():
                got += chunk
                if got.count(b"--frame") >= 2:
                    break
        assert got.startswith(b"--frame\r\ncontent-type: image/jpeg") and jpeg.tobytes() in got
