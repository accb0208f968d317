"""The page's icon and the kids' view at a table playing another game, in a real browser
(Debian's headless Chromium driven by Playwright) against `companion run` on the simulated table."""

from __future__ import annotations

import urllib.request

from tests.web_page import start_sim_run, stop_sim_run


def _start(tmp_path, monkeypatch, game):
    return start_sim_run(tmp_path, monkeypatch, game, 4, speech={"enabled": False})


_stop = stop_sim_run


def test_the_kids_view_of_another_game_says_it_is_for_monsieur_carrousel(tmp_path, monkeypatch, mock_factory,
                                                                         browser):
    """A Carrousel table: /kids shows a sentence naming Monsieur Carrousel and the game played,
    no empty pictures; the page's icon is served (an ICO file, no 404)."""
    tap, web, thread, rc = _start(tmp_path, monkeypatch, "carrousel")
    page = browser.new_page()
    try:
        page.goto(web.url() + "kids")
        page.wait_for_selector("#other-game:not([hidden])", timeout=30_000)
        text = page.inner_text("#other-game")
        assert "for Monsieur Carrousel" in text and "this table plays Carrousel" in text, text
        assert page.get_attribute("#other-game a", "href") == "/"
        assert not page.is_visible(".kids")
        with urllib.request.urlopen(web.url() + "favicon.ico", timeout=30) as r:
            assert r.status == 200 and r.headers["content-type"] == "image/x-icon"
            body = r.read()
        assert body[:4] == b"\x00\x00\x01\x00" and len(body) < 8192  # an ICO, small
        status = page.evaluate("fetch('/favicon.ico').then(r => r.status)")
        assert status == 200
    finally:
        page.close()
        _stop(tap, thread, rc)


def test_the_kids_view_of_monsieur_carrousel_has_no_such_sentence(tmp_path, monkeypatch, mock_factory, browser):
    tap, web, thread, rc = _start(tmp_path, monkeypatch, "monsieur-carrousel")
    page = browser.new_page()
    try:
        page.goto(web.url() + "kids")
        page.wait_for_selector("#conn:text('live')")
        page.wait_for_function("document.querySelector('#die svg') !== null", timeout=30_000)
        assert page.is_visible(".kids") and not page.is_visible("#other-game")
    finally:
        page.close()
        _stop(tap, thread, rc)
