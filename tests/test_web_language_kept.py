"""A language chosen on the game page survives a restart: the game's journal session keeps it
(``page_language`` in its table settings) and `companion run` shows the page in it again; a new
game after it keeps it too. Real SQLite journal, the page's own /api/control."""

from __future__ import annotations

import threading
from types import SimpleNamespace

from starlette.testclient import TestClient

from companion.clock import ManualClock
from companion.commands.run import _keep_page_language, _NextGame, _page_language_kept, _wait_next_game
from companion.games import referee_for
from companion.journal import Journal
from companion.service import Service, open_session
from companion.sources.entries import EntryServer
from companion.web import WebAnnouncer
from companion.web.app import make_app
from companion.web.hub import Hub

TOKEN = "t" * 24
OK = {"x-companion-token": TOKEN, "content-type": "application/json"}


def _game(journal, hub):
    referee = referee_for("carrousel")
    opened = open_session(referee, journal, {}, {"players": ["Ana", "Ben"]})
    web = WebAnnouncer(hub, "carrousel", ["Ana", "Ben"])
    service = Service(referee, ManualClock(), journal=journal, session=opened.session, announcers=[web])
    web.attach(service)
    return service


def test_a_language_chosen_on_the_page_is_kept_by_the_journal_and_shown_after_a_restart(tmp_path):
    path = str(tmp_path / "journal.db")
    hub = Hub(language="en")
    with Journal(path) as journal:
        service = _game(journal, hub)
        with TestClient(make_app(hub, EntryServer(tmp_path / "j.sock"), token=TOKEN),
                        base_url="http://127.0.0.1") as client:
            r = client.post("/api/control", json={"language": "fr"}, headers=OK)
        assert r.status_code == 200 and hub.language == "fr"
        service.run(until=0.0, stop_when_over=False)  # the note is written on the loop's thread
        assert journal.session(service.session).table["page_language"] == "fr"
    after = Hub(language="en")  # the power came back: a new process, the configured language
    with Journal(path, readonly=True) as journal:
        _page_language_kept(SimpleNamespace(hub=after), journal)
    assert after.language == "fr"


def test_a_new_game_keeps_the_language_chosen_before_it(tmp_path):
    path = str(tmp_path / "journal.db")
    hub = Hub(language="en")
    hub.language = hub.chosen_language = "pt-BR"  # chosen during an earlier game of this process
    with Journal(path) as journal:
        service = _game(journal, hub)
        service.run(until=0.0, stop_when_over=False)
        assert journal.session(service.session).table["page_language"] == "pt-BR"


def test_without_a_choice_the_configured_language_stays(tmp_path):
    path = str(tmp_path / "journal.db")
    with Journal(path) as journal:
        service = _game(journal, Hub(language="en"))
        service.run(until=0.0, stop_when_over=False)
        assert "page_language" not in journal.session(service.session).table
    hub = Hub(language="fr")
    with Journal(path, readonly=True) as journal:
        _page_language_kept(SimpleNamespace(hub=hub), journal)
    assert hub.language == "fr" and hub.chosen_language is None


def test_a_language_chosen_between_games_survives_a_restart_before_the_next_game(tmp_path):
    """The game is over and the service waits for the next one: the page's choice then has no
    game session to go to; the wait keeps it in the last session, so the power coming back
    before the next game shows the page in it."""
    path = str(tmp_path / "journal.db")
    hub = Hub(language="en")
    with Journal(path) as journal:
        service = _game(journal, hub)
        service.run(until=0.0, stop_when_over=False)
        web = SimpleNamespace(hub=hub)
        hub.on_language = None  # between games: no game's service takes the note
        with TestClient(make_app(hub, EntryServer(tmp_path / "j.sock"), token=TOKEN),
                        base_url="http://127.0.0.1") as client:
            r = client.post("/api/control", json={"language": "pt-BR"}, headers=OK)
        assert r.status_code == 200 and hub.chosen_language == "pt-BR"
        nxt = _NextGame(lambda: True)
        stopping = threading.Event()
        stopping.set()  # the power goes: the wait ends without a next game
        nxt.event.set()
        notifier = SimpleNamespace(status=lambda line: None, watchdog_period_s=0, watchdog=lambda: None)
        _wait_next_game(nxt, {"pins": {"claim_buttons": [5]}, "service": {"pin_factory": "mock"}}, "sim",
                        "carrousel", notifier, stopping, keep=lambda: _keep_page_language(web, journal))
    after = Hub(language="en")
    with Journal(path, readonly=True) as journal:
        assert journal.sessions()[-1].table["page_language"] == "pt-BR"
        _page_language_kept(SimpleNamespace(hub=after), journal)
    assert after.language == "pt-BR"
