"""The set-up page in a real browser (Debian's headless Chromium driven by Playwright) against
`companion run --game carrousel --camera sim`: the marker placement check on the live frame names
a covered marker, and the colours are captured by tapping the spaces and cards of a held frame
and written into the calibration folder (as `companion calibrate colours` writes them)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np

from companion.vision.carrousel import CarrouselGeometry
from companion.vision.registration import Registrar
from companion.vision.sim import TableRenderer
from tests.test_web_camera_page import start_with_camera, stop
from tests.web_page import shot

SPACES = ("empty", "black", "yellow", "blue", "green", "red", "empty")
CARDS = {"south": ("black", "yellow", "blue"), "north": ("green", "red", "black")}


def _cover_marker_and_freeze_the_table(view, covered: int) -> None:
    """The simulated camera now shows the table without marker ``covered`` (as if a hand or a
    cup lay on it), the horses on SPACES and the cards CARDS, whatever the simulated players do."""
    frames = view.source.frames
    g = CarrouselGeometry.load()
    frames.renderer = TableRenderer(dataclasses.replace(g, markers={i: c for i, c in g.markers.items() if i != covered}))
    frames.set_table(spaces=SPACES, cards=dict(CARDS))
    frames.set_table = lambda *args, **kwargs: None  # the players' moves no longer show


def _tap(page, frame, reg, point_mm):
    """Tap the held frame (registered by ``reg``) where the board point ``point_mm`` (x, y mm) is."""
    x, y = reg.to_image(np.asarray(point_mm, float).reshape(1, 2))[0]
    held = page.locator("#held")
    held.scroll_into_view_if_needed()
    box = held.bounding_box()
    held.click(position={"x": box["width"] * x / (frame.shape[1] - 1), "y": box["height"] * y / (frame.shape[0] - 1)})


def test_the_marker_check_names_a_covered_marker_and_tapped_colours_are_written(tmp_path, monkeypatch,
                                                                               mock_factory, browser):
    # A frame every 0.25 s of the table: enough for a set-up, and the test's machine stays free.
    tap, web, thread, rc = start_with_camera(tmp_path, monkeypatch, speed=1, camera={"frame_period_s": 0.25})
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    try:
        url = web.url()
        tap.next("game_started", timeout=20)
        view = web.pages[-1].hub.camera
        _cover_marker_and_freeze_the_table(view, covered=3)
        page.goto(url + "setup")
        page.wait_for_selector("#files tr[data-name='carrousel-colours.json'][data-state='shipped default']")
        page.wait_for_selector("#markers li[data-id='3'][data-state='missing']", timeout=30_000)
        assert "marker 3: not seen where it belongs (the bottom-left)" in page.inner_text("#markers")
        assert page.locator("#markers li[data-state='in_place']").count() == 3
        assert "3 of 4 markers in place; marker 3 not seen" in page.inner_text("#marker-summary")
        page.wait_for_function("document.querySelector('#live').naturalWidth > 0")

        page.click("#hold")
        page.wait_for_function("document.querySelector('#held').naturalWidth > 0")
        held_id = int(page.eval_on_selector("#held", "img => new URL(img.src).searchParams.get('id')"))
        frame = view._get(held_id).frame
        g = CarrouselGeometry.load()
        reg = Registrar(g.markers, g.dictionary).register(frame)
        for k, colour in enumerate(SPACES):
            if colour == "empty":
                continue  # a space not said is skipped, as "unknown" in `calibrate colours --truth`
            _tap(page, frame, reg, g.space_centres_mm[k])
            page.wait_for_selector(f"#tapped[data-region='space {k}']:not([hidden])")
            page.select_option("#tapped select[name='colour']", colour)
            page.click("#tapped button")
            page.wait_for_selector(f"#said li[data-space='{k}']")
        for slot in g.cards:
            if slot.seat not in CARDS:
                continue
            _tap(page, frame, reg, slot.disc_centres_mm[1])
            page.wait_for_selector(f"#tapped[data-region='{slot.seat} card']:not([hidden])")
            assert "disc 1: L*" in page.inner_text("#tapped")
            for i, colour in enumerate(CARDS[slot.seat]):
                page.select_option(f"#tapped select[name='disc{i}']", colour)
            page.click("#tapped button")
            page.wait_for_selector(f"#said li[data-card='{slot.seat}']")
        n = int(page.get_attribute("#capture-reply", "data-n") or 0)
        assert page.locator("#heldbox .pin").count() == 7  # what was said, pinned where it was tapped
        page.click("#write")
        page.wait_for_function(f"Number(document.querySelector('#capture-reply').dataset.n) > {n}")
        reply = page.inner_text("#capture-reply")
        assert reply.startswith("written: ") and "horse yellow: L*" in reply, reply
        written = tmp_path / "calibration" / "carrousel-colours.json"
        doc = json.loads(written.read_text())
        assert sorted(doc["horses"]) == sorted(doc["cards"]) == ["black", "blue", "green", "red", "yellow"]
        page.wait_for_selector("#files tr[data-name='carrousel-colours.json'][data-state='yours']")
        page.evaluate("window.scrollTo(0, 0)")
        shot(page, "web-setup")
    finally:
        page.close()
        stop(tap, thread, rc)
