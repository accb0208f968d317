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
        # Waits for the page's events (a loaded 2-core machine may take many seconds to get there).
        page.wait_for_selector("#conn:text('live')", timeout=30_000)
        page.wait_for_function("document.querySelector('#frame').naturalWidth > 0", timeout=30_000)
        page.wait_for_function("document.querySelectorAll('#regions li[data-label]').length >= 7", timeout=30_000)
        labels = page.eval_on_selector_all("#regions li[data-label]", "els => els.map(e => e.dataset.label)")
        assert set(labels[:7]) <= {"black", "yellow", "blue", "green", "red", "empty", "unknown"}
        assert "t = " in page.inner_text("#status")
        page.wait_for_selector("#board .spaces .chip", timeout=30_000)
        # The frame the page shows is the camera's latest with the reader's overlay drawn on it.
        jpeg = page.request.get(url + "api/camera.jpg").body()
        shown = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
        _t, frame, _reading = source.latest
        assert shown.shape == frame.shape == (480, 640, 3)
        assert shown[2:16].mean() < 40 < frame[2:16].mean()  # draw_overlay's status bar
        assert 0 < view.encoded
        shot(page, "web-camera")
    finally:
        page.close()
        stop(tap, thread, rc)


def test_a_real_tables_camera_a_video_file_is_shown_with_the_overlay(tmp_path, monkeypatch, mock_factory):
    """`--table hardware` with a video file as the camera (as tests/test_real_tables.py plays it):
    the page's frame is the video's latest frame read, with the reader's overlay."""
    import urllib.request

    from companion.vision.sim import Conditions, SimulatedCamera
    from tests.real_table import Companion

    video = tmp_path / "table.avi"
    camera = SimulatedCamera(seed=11, conditions=Conditions(height_mm=600, tilt_deg=8, azimuth_deg=30, roll_deg=5,
                                                            light=1.0, kelvin=5000, gradient=0.05, vignetting=0.2,
                                                            noise_sigma=1.5, blur_px=0.0, jpeg_quality=0, hands=()))
    camera.set_table(spaces=("empty", "green", "blue", "yellow", "red", "black", "empty"),
                     cards={"south": ("green", "blue", "yellow"), "north": ("blue", "red", "black")})
    image = camera.read().image
    # A live camera's frames differ by its sensor's noise: the very same frame over and over is
    # a frozen camera after 3 s (the reader's frozen_s; the game then waits for it), which a
    # loaded machine reaches before this test looks. So each frame has noise of its own.
    rng = np.random.default_rng(11)
    noisy = [np.clip(image + rng.normal(0, 1.0, image.shape), 0, 255).astype(np.uint8) for _ in range(8)]
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 30, (640, 480))
    # The video's end ends the run (and its page): 50 s at 250 ms a frame, longer than the waits
    # for the server, the game's start (20 s each) and the frame (10 s).
    for k in range(200):
        writer.write(noisy[k % len(noisy)])
    writer.release()
    config = web_config(tmp_path, players={"names": ["Ana", "Ben"]}, calibration={"dir": str(tmp_path / "cal")},
                        camera={"source": f"opencv:{video}", "frame_period_s": 0.25, "settle_s": 0.12})
    tap, web = CallTap(monkeypatch), WebTap(monkeypatch)
    companion = Companion(tap, config, "carrousel")
    try:
        url = web.url(timeout=20)
        tap.next("game_started", timeout=20)  # the game starts from the cards the camera sees
        view = web.pages[-1].hub.camera
        assert view is not None and view.source.frames_read > 0
        with urllib.request.urlopen(url + "api/camera.jpg", timeout=10) as reply:
            shown = cv2.imdecode(np.frombuffer(reply.read(), np.uint8), cv2.IMREAD_COLOR)
        assert shown.shape == (480, 640, 3)
        assert shown[2:16].mean() < 40 < image[2:16].mean()  # draw_overlay's status bar
        # Away from the overlay's drawings the page shows the video's own pixels.
        assert np.abs(shown[300:340, 10:40].astype(int) - image[300:340, 10:40].astype(int)).mean() < 8
        info = view()[1]
        assert info["status"] == "ok" and info["regions"][1]["label"] == "green"
    finally:
        companion.stop()
