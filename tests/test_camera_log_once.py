"""A camera's state is logged once when it changes, by one logger: a video of still frames at a
real table wrote `camera frozen: the same frame for N s` for every frame, twice (the source's
logger and the kit's), and `camera: board visible` twice."""

from __future__ import annotations

import logging
import types
from pathlib import Path

from companion.clock import ManualClock
from companion.health import Parts, state_key
from companion.sources.carrousel_camera import CarrouselCameraSource
from companion.vision.frames import Frame

PHOTO = Path(__file__).parent / "data" / "carrousel-table" / "images" / "carrousel_027.jpg"


class StillFrames:
    """The same frame again and again (a video of a still table), ``n`` times, then
    ``after`` (other frames: the camera moves again)."""

    name = "still"

    def __init__(self, image, n, after=()):
        self.images = [image] * n + list(after)
        self.i = 0

    def read(self):
        if self.i >= len(self.images):
            return None
        self.i += 1
        return Frame(self.images[self.i - 1], 0.0, self.i - 1)

    def close(self):
        pass


def test_state_key_takes_the_figures_out():
    assert state_key("camera frozen: the same frame for 3.1 s") == state_key("camera frozen: the same frame for 12.0 s")
    assert state_key("board visible") != state_key("camera frozen: the same frame for 3.1 s")


def test_a_still_video_logs_board_visible_and_camera_frozen_once_each(caplog):
    import cv2

    from companion.kits import camera_status

    photo = cv2.imread(str(PHOTO))
    clock = ManualClock()
    parts = Parts(clock=clock.now)
    table = types.SimpleNamespace(parts=parts, on_end=lambda summary: None)
    statuses: list[str] = []
    kit_status = camera_status(table, "opencv:still.avi", lambda: None)

    def on_status(text):
        statuses.append(text)
        kit_status(text)

    import numpy as np

    moving = [np.clip(photo.astype(np.int16) + k, 0, 255).astype(np.uint8) for k in (2, 4)]
    src = CarrouselCameraSource(StillFrames(photo, 60, after=moving), on_status=on_status, settle_s=0)
    caplog.set_level(logging.INFO)
    for _ in range(62):  # 6 s of still frames at 10 a second, then two that differ
        if src.step(clock.now()) is None:
            break
        clock.advance(0.1)
    frozen = [r for r in caplog.records if "camera frozen" in r.getMessage() and r.name != "companion.health"]
    visible = [r for r in caplog.records if "board visible" in r.getMessage() and r.name != "companion.health"]
    assert len(frozen) == 1, [r.getMessage() for r in frozen[:5]]
    # the table is told once that the camera is lost (the parts' one line), and again when it is back
    lost = [r for r in caplog.records if r.name == "companion.health" and "camera lost: camera frozen" in r.getMessage()]
    assert len(lost) == 1
    assert len(visible) == 2, [(r.name, r.getMessage()) for r in visible]  # at the start, and once it moves again
    assert caplog.records.index(visible[0]) < caplog.records.index(frozen[0]) < caplog.records.index(visible[1])
    assert frozen[0].name == visible[0].name == "companion.sources"
    assert frozen[0].getMessage().startswith("camera frozen: the same frame for ")  # one "camera" word
    assert visible[0].getMessage() == "camera: board visible"
    # the kit is still told every change (the part's detail stays current): ~30 frozen frames
    assert sum(s.startswith("camera frozen") for s in statuses) > 20
    assert statuses[-1] == "board visible" and parts.snapshot()["camera"]["detail"] == "board visible"
