"""The camera page in a real browser (Debian's headless Chromium driven by Playwright) against
`companion run --game carrousel --camera sim`: the simulated table's rendered frames with the
reader's overlay arrive a few times a second, with what the reader read beside them, and no
frame is encoded while no page looks."""

from __future__ import annotations

import threading

import cv2
import numpy as np

from tests.real_table import CallTap
from tests.web_page import WebTap, shot, web_config


def start_with_camera(tmp_path, monkeypatch, speed=2, **sections):
    """`companion run --game carrousel --table sim --camera sim` with the page on 127.0.0.1:0,
    the calibration folder in ``tmp_path``; returns (call tap, web tap, thread, return codes)."""
    from companion.cli import main

    calibration = {"dir": str(tmp_path / "calibration"), **sections.pop("calibration", {})}
    config = web_config(tmp_path, calibration=calibration, **sections)
    tap, web = CallTap(monkeypatch), WebTap(monkeypatch)
    rc: list[int] = []
    argv = ["run", "--config", str(config), "--game", "carrousel", "--table", "sim", "--camera", "sim",
            "--speed", str(speed), "--new", "--next-game", "exit"]
    thread = threading.Thread(target=lambda: rc.append(main(argv)), daemon=True)
    thread.start()
    return tap, web, thread, rc


def stop(tap, thread, rc):
    for s in tap.services:
        s.stop()
    thread.join(15)
    assert rc == [0]


def test_the_camera_page_shows_the_simulated_frame_with_the_readers_overlay(tmp_path, monkeypatch, mock_factory,
                                                                           browser):
    tap, web, thread, rc = start_with_camera(tmp_path, monkeypatch)
    page = browser.new_page(viewport={"width": 1200, "height": 800})
    try:
        url = web.url()
        tap.next("game_started", timeout=20)
        view = web.pages[-1].hub.camera
        assert view is not None, "the table's camera was not handed to the page"
        source = view.source
        # The referee started from frames the camera read; nobody looked: none was encoded.
        assert source.frames_read > 0 and source.latest is not None and view.encoded == 0
        page.goto(url + "camera")
        page.wait_for_selector("#conn:text('live')")
        page.wait_for_function("document.querySelector('#frame').naturalWidth > 0", timeout=5_000)
        page.wait_for_function("document.querySelectorAll('#regions li[data-label]').length >= 7", timeout=5_000)
        labels = page.eval_on_selector_all("#regions li[data-label]", "els => els.map(e => e.dataset.label)")
        assert set(labels[:7]) <= {"black", "yellow", "blue", "green", "red", "empty", "unknown"}
        assert "t = " in page.inner_text("#status")
        page.wait_for_selector("#board .spaces .chip")
        # The frame the page shows is the camera's latest with the reader's overlay drawn on it.
        jpeg = page.request.get(url + "api/camera.jpg").body()
        shown = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
        t, frame, reading = source.latest
        assert shown.shape == frame.shape == (480, 640, 3)
        assert shown[2:16].mean() < 40 < frame[2:16].mean()  # draw_overlay's status bar
        assert 0 < view.encoded
        shot(page, "web-camera")
    finally:
        page.close()
        stop(tap, thread, rc)
