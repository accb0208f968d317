"""Carnival played to its end at an emulated real table with the web page as the only entry:
the dice camera reads the rolls from a video of a real tray (tests/carnival_tray.py); the deal,
assignments, actions, builds and the end of each turn are typed into the entries page of a real
browser (Debian's headless Chromium driven by Playwright), field by field as a player would."""

from __future__ import annotations


from tests.carnival_tray import TRAY, game_video
from tests.real_table import CallTap, Companion
from tests.test_real_table_carnival import FRAME_PERIOD_S, GAP_S, LEAD_S, SCRIPT, SETTLE_S, TUMBLE_S, _expected_calls, \
    _plain, _turns
from tests.test_web_entries import enter
from tests.web_page import WebTap, web_config


def test_a_carnival_game_is_played_to_its_end_with_the_page_as_the_only_entry(tmp_path, monkeypatch, mock_factory,
                                                                                browser):
    from companion.events import InvalidObservation

    head, turns = _turns(SCRIPT)
    rolls = [dice for dice, _ in turns]
    # a longer rest than the socket test: a turn typed into the page takes a second or two
    video = game_video(tmp_path / "tray.avi", rolls, fps=1 / FRAME_PERIOD_S, lead_s=LEAD_S + 2.0, tumble_s=TUMBLE_S,
                       rest_s=3.0, gap_s=GAP_S)
    config = web_config(tmp_path, players={"names": ["Ana", "Ben"]},
                        camera={"source": f"opencv:{video.path}", "frame_period_s": FRAME_PERIOD_S},
                        dice={"tray": list(TRAY), "settle_s": SETTLE_S},
                        service={"announcers": ["console", "lights", "web"]})
    tap, web = CallTap(monkeypatch), WebTap(monkeypatch)
    companion = Companion(tap, config, "carnival")
    page = browser.new_page(viewport={"width": 420, "height": 900})  # a phone held in one hand
    try:
        companion.wait_bound()
        page.goto(web.url() + "entries")
        page.wait_for_selector("#conn:text('live')")
        for obs in head:
            reply = enter(page, obs)
            assert "refused" not in (page.get_attribute("#reply", "class") or ""), reply
        for dice, entries in turns:
            rolled = tap.next("rolled", "dice_unreadable", timeout=30)
            assert rolled.TYPE == "rolled" and tuple(rolled.dice) == dice, rolled.to_json()
            for obs in entries:
                reply = enter(page, obs)
                assert "refused" not in (page.get_attribute("#reply", "class") or ""), (obs, reply)
        winner = tap.next("winner", timeout=10)
        assert companion.join() == 0
    finally:
        page.close()
        companion.stop()
    expected = _expected_calls(SCRIPT)
    assert [_plain(c) for c in tap.calls if not isinstance(c, InvalidObservation)] == expected
    assert _plain(winner) == expected[-1]
