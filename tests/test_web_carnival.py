"""Carnival played to its end at an emulated real table with the web page as the only entry:
the dice camera reads the rolls from a video of a real tray (tests/carnival_tray.py); the deal,
assignments, actions, builds and the end of each turn are typed into the entries page of a real
browser (Debian's headless Chromium driven by Playwright), field by field as a player would."""

from __future__ import annotations


import threading

from tests.carnival_tray import TRAY, game_video
from tests.real_table import CallTap, Companion
from tests.test_real_table_carnival import FRAME_PERIOD_S, GAP_S, LEAD_S, SCRIPT, SETTLE_S, TUMBLE_S, _expected_calls, \
    _plain, _turns
from tests.test_web_entries import enter
from tests.web_page import WebTap, web_config


def _roll_when_let(monkeypatch, gates: dict[int, threading.Event]) -> None:
    """A video file's frame ``i`` of ``gates`` (and those after it) is read only once
    ``gates[i]`` is set; until then each read gives the frame before it again, with a new time."""
    from companion.vision import frames

    read_into = frames.OpenCVSource.read_into

    def gated(source, image):
        gate = gates.get(source._index)
        last = getattr(source, "_last_frame", None)
        if gate is not None and not gate.is_set() and last is not None:
            return frames.Frame(last.copy(), source.clock(), source._index - 1)
        frame = read_into(source, image)
        source._last_frame = None if frame is None else frame.image.copy()
        return frame

    monkeypatch.setattr(frames.OpenCVSource, "read_into", gated)


def test_a_carnival_game_is_played_to_its_end_with_the_page_as_the_only_entry(tmp_path, monkeypatch, mock_factory,
                                                                                browser):
    from companion.events import InvalidObservation

    head, turns = _turns(SCRIPT)
    rolls = [dice for dice, _ in turns]
    # a longer rest than the socket test: a turn typed into the page takes a second or two
    video = game_video(tmp_path / "tray.avi", rolls, fps=1 / FRAME_PERIOD_S, lead_s=LEAD_S + 2.0, tumble_s=TUMBLE_S,
                       rest_s=3.0, gap_s=GAP_S)
    # The players roll once the turn before is entered, as at a table: the video's frames up to a
    # roll's tumble are given, then the last frame again (the still tray) until the test lets that
    # roll come. A loaded machine types slowly into the browser; no roll goes by meanwhile.
    tumbles = [start - max(1, round(TUMBLE_S / FRAME_PERIOD_S)) for start, _count in video.rests]
    rolls_let = [threading.Event() for _ in tumbles]
    _roll_when_let(monkeypatch, dict(zip(tumbles, rolls_let)))
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
        for (dice, entries), let in zip(turns, rolls_let):
            let.set()
            rolled = tap.next("rolled", "dice_unreadable", timeout=30)
            assert rolled.TYPE == "rolled" and tuple(rolled.dice) == dice, rolled.to_json()
            for obs in entries:
                reply = enter(page, obs)
                assert "refused" not in (page.get_attribute("#reply", "class") or ""), (obs, reply)
        winner = tap.next("winner", timeout=30)
        assert companion.join() == 0
    finally:
        page.close()
        companion.stop()
    expected = _expected_calls(SCRIPT)
    assert [_plain(c) for c in tap.calls if not isinstance(c, InvalidObservation)] == expected
    assert _plain(winner) == expected[-1]
