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
    """The same frame again and again (a video of a still table), ``n`` times."""

    name = "still"

    def __init__(self, image, n):
        self.image, self.n, self.i = image, n, 0

    def read(self):
        if self.i >= self.n:
            return None
        self.i += 1
        return Frame(self.image, 0.0, self.i - 1)

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

    src = CarrouselCameraSource(StillFrames(photo, 60), on_status=on_status, settle_s=0)
    caplog.set_level(logging.INFO)
    for _ in range(60):  # 6 s of frames at 10 a second
        if src.step(clock.now()) is None:
            break
        clock.advance(0.1)
    frozen = [r for r in caplog.records if "camera frozen" in r.getMessage()]
    visible = [r for r in caplog.records if "board visible" in r.getMessage()]
    assert len(frozen) == 1, [r.getMessage() for r in frozen[:5]]
    assert len(visible) == 1, [(r.name, r.getMessage()) for r in visible]
    assert frozen[0].name == visible[0].name == "companion.sources"
    assert frozen[0].getMessage().startswith("camera frozen: the same frame for ")  # one "camera" word
    assert visible[0].getMessage() == "camera: board visible"
    # the kit is still told every change (the part's detail stays current): ~30 frozen frames
    assert sum(s.startswith("camera frozen") for s in statuses) > 20
    assert parts.snapshot()["camera"]["detail"] == statuses[-1]
