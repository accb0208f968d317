"""A language chosen on the game page survives a restart: the game's journal session keeps it
(``page_language`` in its table settings) and `companion run` shows the page in it again; a new
game after it keeps it too. Real SQLite journal, the page's own /api/control."""

from __future__ import annotations

from types import SimpleNamespace

from starlette.testclient import TestClient

from companion.clock import ManualClock
from companion.commands.run import _page_language_kept
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
