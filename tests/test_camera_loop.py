"""The camera loop of the Carrousel source: capture on its own thread, the newest frame wins,
frames decoded into reused arrays (companion/sources/carrousel_camera.py, vision/frames.py)."""

from __future__ import annotations

import threading

import cv2
import numpy as np

from companion.clock import ManualClock
from companion.sources.carrousel_camera import CarrouselCameraSource
from companion.vision.carrousel import CarrouselReading
from companion.vision.frames import Frame, OpenCVSource


class CountingFrames:
    """``n`` frames, each filled with its index, read into the array it is given."""

    name = "counting"

    def __init__(self, n: int, hold_until: threading.Event | None = None):
        self.n, self.i = n, 0
        self.arrays: set[int] = set()
        self.closed = False
        self.hold_until = hold_until  # frame 1 waits for it (the reader has frame 0)

    def read(self):
        return self.read_into(None)

    def read_into(self, image):
        if self.i >= self.n:
            return None
        if self.i == 1 and self.hold_until is not None:
            assert self.hold_until.wait(10)
        if image is None:
            image = np.empty((8, 8, 3), np.uint8)
        self.arrays.add(id(image))
        image[:] = self.i % 256
        self.i += 1
        return Frame(image, 0.0, self.i - 1)

    def close(self):
        self.closed = True


class BlockingReader:
    """Reads nothing; the first read waits until the test lets it go. Records what it saw."""

    def __init__(self):
        self.go = threading.Event()
        self.reading = threading.Event()
        self.seen: list[int] = []
        self.after: list[int] = []

    def read(self, image, stream=False, t=None):
        self.seen.append(int(image[0, 0, 0]))
        if len(self.seen) == 1:
            self.reading.set()
            assert self.go.wait(10)
        self.after.append(int(image[0, 0, 0]))  # the frame was not written over while read
        return CarrouselReading("board not visible: test")


def test_capture_does_not_wait_for_the_reader_and_the_newest_frame_wins():
    reader = BlockingReader()
    frames = CountingFrames(40, hold_until=reader.reading)
    src = CarrouselCameraSource(frames, reader=reader, settle_s=0)
    src.start(lambda obs: None, ManualClock())
    src._capture_thread.join(10)  # every frame captured while the reader is held on frame 0
    assert frames.i == 40 and reader.seen == [0]
    reader.go.set()
    src.join(10)
    src.stop()
    # the frames captured meanwhile were dropped, not queued: the reader's next frame is the last
    assert reader.seen == [0, 39] and reader.after == [0, 39]
    assert len(frames.arrays) <= 5
    assert frames.closed


def test_frames_are_decoded_into_a_few_reused_arrays():
    frames = CountingFrames(200)
    seen: list[int] = []

    class Reader:
        def read(self, image, stream=False, t=None):
            seen.append(int(image[0, 0, 0]))
            return CarrouselReading("board not visible: test")

    src = CarrouselCameraSource(frames, reader=Reader(), settle_s=0)
    src.start(lambda obs: None, ManualClock())
    src.join(20)
    src.stop()
    assert seen and seen == sorted(seen) and seen[-1] == 199  # in order, the newest at the end
    assert len(frames.arrays) <= 5  # not one array per frame
    # the frame shown last (latest) is the last one read, whole
    t, image, reading = src.latest
    assert int(image[0, 0, 0]) == 199 and reading.status.startswith("board not visible")


def test_a_video_file_decodes_into_the_given_array(tmp_path):
    path = tmp_path / "v.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 30, (64, 48))
    for i in range(3):
        writer.write(np.full((48, 64, 3), 40 * (i + 1), np.uint8))
    writer.release()
    plain, reused = OpenCVSource(str(path)), OpenCVSource(str(path))
    buffer = np.empty((48, 64, 3), np.uint8)
    for _ in range(3):
        a, b = plain.read(), reused.read_into(buffer)
        assert b.image is buffer
        assert np.array_equal(a.image, b.image)
    assert plain.read() is None and reused.read_into(buffer) is None
    plain.close()
    reused.close()
