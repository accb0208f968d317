"""The table's page in a real browser (Debian's headless Chromium, driven by Playwright): on a
simulated Carrousel game played by `companion run`, the calls appear in plain sentences as the
referee makes them, with the scores, the cards and the dead end's countdown."""

from __future__ import annotations

import threading


from tests.real_table import CallTap
from tests.web_page import WebTap, shot, web_config


def _run(argv, rc):
    from companion.cli import main

    rc.append(main(argv))


def test_a_call_of_a_simulated_game_appears_on_the_table_page(tmp_path, monkeypatch, mock_factory, browser):
    config = web_config(tmp_path, sim={"move_time_s": 0.6})
    tap, web = CallTap(monkeypatch), WebTap(monkeypatch)
    rc: list[int] = []
    thread = threading.Thread(target=_run, args=(["run", "--config", str(config), "--table", "sim", "--speed", "4",
                                                  "--new", "--quiet-moves", "--next-game", "exit"], rc), daemon=True)
    thread.start()
    page = browser.new_page(viewport={"width": 1000, "height": 900})
    try:
        url = web.url()
        page.goto(url)
        page.wait_for_selector("#conn:text('live')", timeout=30_000)
        # The next call the referee makes, whatever it is, is shown with its sentence.
        call = tap.next("point", "penalty", "lucky_bird", "dead_end", "illegal_move", timeout=30)
        sentence = page.locator(f"#calls li[data-type='{call.TYPE}']").first
        sentence.wait_for(timeout=30_000)
        from companion.web.announcer import sentence_for

        assert sentence_for(call, "carrousel", "en") in page.inner_text("#calls")
        assert "Carrousel" in page.inner_text("#title")
        players = page.locator("#players .player")
        assert players.count() == 4
        assert page.locator("[data-player='Ana'] .chip").count() == 3  # Ana's card, a symbol on each colour
        assert page.locator("#extra .spaces .chip").count() == 7
        countdown = page.inner_text("#countdown")
        assert countdown.endswith(" s") or countdown == "—"
        service = tap.services[-1]
        service.stop()  # the game stays where it is: the page must show the referee's scores
        thread.join(15)
        scores = service.referee.summary(service.state)["scores"]
        page.wait_for_function("Companion.state && Companion.state.over === false && "
                               f"Companion.state.t >= {service.last_t - 1e-6}", timeout=30_000)
        for player, score in scores.items():
            assert page.inner_text(f"[data-player='{player}'] .score") == str(score)
        shot(page, "web-table")
    finally:
        page.close()
        for service in tap.services:
            service.stop()
        thread.join(15)
    assert rc == [0]
    assert not thread.is_alive()
