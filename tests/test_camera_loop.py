"""The camera loop of the Carrousel source: capture on its own thread, the newest frame wins,
frames decoded into a few reused arrays, a frame shown as ``latest`` left whole for a page
copying it (companion/sources/carrousel_camera.py, vision/frames.py)."""

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

    def __init__(self, n: int, hold_until: threading.Event | None = None,
                 gate: threading.Semaphore | None = None):
        self.n, self.i = n, 0
        self.arrays: set[int] = set()
        self.closed = False
        self.hold_until = hold_until  # frame 1 waits for it (the reader has frame 0)
        self.gate = gate  # each frame waits for a permit
        self.written = threading.Condition()  # notified after each frame

    def read(self):
        return self.read_into(None)

    def read_into(self, image):
        if self.i >= self.n:
            return None
        if self.i == 1 and self.hold_until is not None:
            assert self.hold_until.wait(10)
        if self.gate is not None:
            assert self.gate.acquire(timeout=10)
        if image is None:
            image = np.empty((8, 8, 3), np.uint8)
        self.arrays.add(id(image))
        image[:] = self.i % 256
        with self.written:
            self.i += 1
            self.written.notify_all()
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
    # a dropped frame's array is reused at once: the reader's, and two taking turns
    assert len(frames.arrays) == 3 and src.frame_arrays == 3
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
    _t, image, reading = src.latest
    assert int(image[0, 0, 0]) == 199 and reading.status.startswith("board not visible")


class PageReader:
    """Reads nothing. Like a web page, takes ``latest`` as each read begins and keeps it; while
    each frame is read, lets the capture write three more frames (and waits for them, at most
    10 s). Records whether the frame it took at the read before this one is still whole."""

    def __init__(self, frames: CountingFrames):
        self.frames = frames
        self.src: CarrouselCameraSource | None = None
        self.taken: list[tuple[np.ndarray, int]] = []  # (array, value when taken)
        self.whole: list[bool] = []
        self.images: list[np.ndarray] = []

    def read(self, image, stream=False, t=None):
        assert self.src is not None
        self.images.append(image)
        latest = self.src.latest
        if latest is not None:
            self.taken.append((latest[1], int(latest[1][0, 0, 0])))
        frames = self.frames
        with frames.written:
            start = frames.i
            frames.gate.release(3)
            frames.written.wait_for(lambda: frames.i >= min(start + 3, frames.n), timeout=10)
        if len(self.taken) >= 2:  # the frame shown before latest, taken one read ago
            array, value = self.taken[-2]
            self.whole.append(int(array[0, 0, 0]) == value and int(array[-1, -1, -1]) == value)
        return CarrouselReading("board not visible: test")


def test_a_frame_shown_stays_whole_until_two_newer_frames_are_shown():
    frames = CountingFrames(120, gate=threading.Semaphore(1))
    reader = PageReader(frames)
    src = CarrouselCameraSource(frames, reader=reader, settle_s=0)
    reader.src = src
    src.start(lambda obs: None, ManualClock())
    src.join(20)
    src.stop()
    # capture kept writing (three frames a read), yet a page's frame was never written over
    assert len(reader.whole) >= 30 and all(reader.whole)
    # latest, the one shown before it, the one read, and the capture's two taking turns
    assert len(frames.arrays) == 5
    # latest is the frame as read: the very array the reader was given, not a copy
    assert src.latest is not None and src.latest[1] is reader.images[-1]


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


def test_a_frame_nobody_took_is_reused_as_soon_as_a_newer_one_is_shown():
    from companion.sources.carrousel_camera import _FrameBuffers

    a, b, c, d = (np.full((2, 2, 3), v, np.uint8) for v in range(4))
    buffers = _FrameBuffers()
    assert buffers.take() is None and buffers.allocated == 1  # none free yet: the source allocates
    buffers.shown(a, kept=False)
    buffers.shown(b, kept=False)  # nobody took a from latest: free at once
    assert buffers.take() is a
    buffers.shown(c, kept=True)  # a page took b: kept while c is latest
    assert buffers.take() is None
    buffers.shown(d, kept=False)  # d is shown: b is free now, then c (nobody took it)
    assert buffers.take() is b and buffers.take() is c and buffers.take() is None
    buffers.free(a)  # a dropped frame's array
    assert buffers.take() is a


def test_latest_tells_the_loop_a_page_took_the_frame():
    src = CarrouselCameraSource(CountingFrames(1), reader=BlockingReader(), settle_s=0)
    first, second = (0.0, np.zeros((2, 2, 3), np.uint8), None), (0.1, np.ones((2, 2, 3), np.uint8), None)
    src.latest = first
    src.latest = second
    assert src._replaced_taken is False  # nobody read the first
    assert src.latest is second  # a page takes it
    src.latest = first
    assert src._replaced_taken is True
