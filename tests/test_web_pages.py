"""The other pages in a real browser (Debian's headless Chromium driven by Playwright) against
`companion run` on the simulated table: the kids' view of Monsieur Carrousel in pictures, the
camera page, the set-up page (each calibration file's state), and the page opened to the LAN:
without the token nothing, with the QR code's address every page, the Pi's screen showing it."""

from __future__ import annotations

from tests.web_page import shot, start_sim_run, stop_sim_run

_start, _stop = start_sim_run, stop_sim_run


def test_the_kids_view_shows_the_die_the_seat_and_the_weather_in_pictures(tmp_path, monkeypatch, mock_factory,
                                                                          browser):
    tap, web, thread, rc = _start(tmp_path, monkeypatch, "monsieur-carrousel", 4,
                                  monsieur_carrousel_sim={"think_s": 0.5},
                                  speech={"enabled": False})
    page = browser.new_page(viewport={"width": 1000, "height": 800})
    try:
        page.goto(web.url() + "kids")
        page.wait_for_selector("#conn:text('live')")
        tap.next("seat_kid", timeout=30)
        # The die's colour and the seat to take, together, as one seat_kid call said them (the game
        # goes on meanwhile: the page shows the latest, which may be a later call than the first).
        page.wait_for_function("document.querySelector('#die') && document.querySelector('#die').dataset.colour && "
                               "document.querySelector('#seat') && document.querySelector('#seat').dataset.seat && "
                               "document.querySelector('#die text') && "
                               "document.querySelector('#die text').textContent !== ''", timeout=30_000)
        shown = page.evaluate("[document.querySelector('#die').dataset.colour, "
                              "document.querySelector('#seat').dataset.seat]")
        tap.next("seat_kid", "weather", "kid_seated", timeout=30)  # the tap hears a call after the page may
        said = [(c.colour, str(c.seat)) for c in tap.calls if c.TYPE == "seat_kid"]
        assert tuple(shown) in said, (shown, said)
        tap.next("weather", timeout=30)
        page.wait_for_function("document.querySelector('#weather') && document.querySelector('#weather').dataset.zone",
                               timeout=30_000)
        zone = page.evaluate("document.querySelector('#weather').dataset.zone")
        assert zone in {c.zone for c in tap.calls if c.TYPE == "weather"}, zone
        shot(page, "web-kids")
        page.goto(web.url())
        page.wait_for_selector("#weather")
        assert "raindrops" in page.inner_text("#weather")
        shot(page, "web-table-monsieur")
    finally:
        page.close()
        _stop(tap, thread, rc)


def test_the_camera_and_set_up_pages_say_what_they_can_show(tmp_path, monkeypatch, mock_factory, browser):
    tap, web, thread, rc = _start(tmp_path, monkeypatch, "carrousel", 2)
    page = browser.new_page(viewport={"width": 1000, "height": 800})
    try:
        tap.next("game_started")
        page.goto(web.url() + "camera")
        page.wait_for_selector("#conn:text('live')")
        assert "No camera frame to show" in page.inner_text("#nocamera")  # said plainly, never a fake frame
        page.wait_for_selector("#board .spaces .chip")
        assert page.locator("#board .chip").count() == 7
        shot(page, "web-camera-none")
        page.goto(web.url() + "setup")
        page.wait_for_selector("#files tr[data-ok]")
        rows = page.inner_text("#files")
        assert "camera geometry" in rows and "camera colours" in rows and "encoder calibration" in rows
        shot(page, "web-setup-none")
        page.goto(web.url() + "screen")
        page.wait_for_selector("#local:not([hidden])")  # local only: nothing to scan
    finally:
        page.close()
        _stop(tap, thread, rc)


def test_opened_to_the_lan_the_page_needs_the_token_from_the_qr_code(tmp_path, monkeypatch, mock_factory, browser):
    tap, web, thread, rc = _start(tmp_path, monkeypatch, "carnival", 5, web={"lan": True, "listen": "127.0.0.1:0"})
    context = browser.new_context(viewport={"width": 420, "height": 900})
    page = context.new_page()
    try:
        url = web.url()
        token = web.token
        assert (tmp_path / "journal.web-token").read_text().strip() == token
        response = page.goto(url)
        assert response.status == 401 and "token is needed" in page.inner_text("body")
        page.goto(url + "screen")  # the Pi's own screen (a local client): the QR code of the address
        page.wait_for_selector("#qr:not([hidden])")
        page.wait_for_function("document.querySelector('#qr').complete && document.querySelector('#qr').naturalWidth > 100")
        shot(page, "web-screen")
        page.goto(f"{url}?token={token}")  # what the QR code opens: the token becomes a cookie
        assert page.url == url
        page.wait_for_selector("#conn:text('live')")
        tap.next("game_started")
        page.wait_for_selector("#title:text('Carnival')")
        page.wait_for_selector("#players .player table")
        shot(page, "web-table-carnival")
    finally:
        context.close()
        _stop(tap, thread, rc)
