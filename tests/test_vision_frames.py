"""Frame sources: picamera2 (through a stand-in module), OpenCV VideoCapture, image folders."""

from __future__ import annotations

import shutil
import threading
import types
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision.frames import (
    CameraLost,
    FolderSource,
    FrameSourceError,
    OpenCVSource,
    Picamera2Source,
    Watchdog,
    open_frame_source,
)

PHOTOS = Path(__file__).parent / "data" / "carrousel-table" / "images"


class FakePicamera2:
    """Stands in for picamera2.Picamera2: records controls, can hang a capture."""

    instances = 0

    def __init__(self):
        FakePicamera2.instances += 1
        self.controls: list[dict] = []
        self.captures = 0
        self.hang = threading.Event()  # set: the next capture blocks until released
        self.release = threading.Event()
        self.started = 0
        self.stopped = 0
        self.closed = False

    def create_video_configuration(self, main):
        self.config = main
        return {"main": main}

    def configure(self, config):
        pass

    def start(self):
        self.started += 1

    def stop(self):
        self.stopped += 1
        self.release.set()

    def close(self):
        self.closed = True

    def set_controls(self, controls):
        self.controls.append(dict(controls))

    def capture_metadata(self):
        return {"ExposureTime": 12000, "AnalogueGain": 2.5, "ColourGains": [1.8, 1.4], "Lux": 300.0}

    def capture_array(self, stream="main"):
        if self.hang.is_set():
            self.hang.clear()
            self.release.wait(5)
        self.captures += 1
        w, h = self.config["size"]
        return np.full((h, w, 3), self.captures % 256, np.uint8)


def fake_module():
    return types.SimpleNamespace(Picamera2=FakePicamera2)


def test_picamera2_locks_exposure_and_white_balance_from_metadata_and_flushes():
    src = Picamera2Source(size=(64, 48), module=fake_module(), sleep=lambda s: None, flush_frames=3)
    cam = src.camera
    assert cam.config == {"size": (64, 48), "format": "RGB888"}
    assert cam.controls[0] == {"AeEnable": True, "AwbEnable": True}
    assert cam.controls[-1] == {"AeEnable": False, "AwbEnable": False, "ExposureTime": 12000,
                                "AnalogueGain": 2.5, "ColourGains": (1.8, 1.4)}
    assert cam.captures == 3, "the frames queued before the lock are dropped"
    f = src.read()
    assert f.image.shape == (48, 64, 3) and f.image.dtype == np.uint8 and f.index == 0
    assert f.image[0, 0, 0] == 4
    src.relock()
    assert cam.captures == 7
    src.close()
    src.close()
    assert cam.closed and FakePicamera2.instances >= 1


def test_picamera2_watchdog_restarts_a_hung_capture_without_reopening():
    src = Picamera2Source(size=(8, 6), module=fake_module(), sleep=lambda s: None, flush_frames=0, timeout_s=0.2)
    cam = src.camera
    before = FakePicamera2.instances
    cam.hang.set()
    frame = src.read()
    assert frame.image.shape == (6, 8, 3)
    assert cam.stopped == 1 and cam.started == 2, "restarted by stop/start"
    assert FakePicamera2.instances == before, "the camera object is never re-created"
    assert cam.controls[-1]["AeEnable"] is False, "the locked controls are set again"
    src.close()


def test_watchdog_declares_the_camera_lost_after_its_restarts():
    gate = threading.Event()
    wd = Watchdog(lambda: gate.wait(5), lambda: None, timeout_s=0.05, max_restarts=2)
    with pytest.raises(CameraLost, match="camera lost"):
        wd.call()
    gate.set()
    wd.close()


def test_watchdog_turns_a_capture_error_into_camera_lost():
    def broken():
        raise OSError("device unplugged")

    with pytest.raises(CameraLost, match="unplugged"):
        Watchdog(broken, lambda: None).call()


def test_picamera2_missing_is_a_clear_error(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_picamera2(name, *a, **k):
        if name == "picamera2":
            raise ImportError("No module named 'picamera2'")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_picamera2)
    with pytest.raises(FrameSourceError, match="apt install python3-picamera2"):
        Picamera2Source()


def test_opencv_video_file_gives_its_frames_then_ends(tmp_path):
    path = tmp_path / "table.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (64, 48))
    assert writer.isOpened()
    for i in range(5):
        writer.write(np.full((48, 64, 3), 40 * i, np.uint8))
    writer.release()
    t = iter(range(100))
    src = open_frame_source(f"opencv:{path}", clock=lambda: float(next(t)))
    frames = []
    while (f := src.read()) is not None:
        frames.append(f)
    src.close()
    assert len(frames) == 5 and [f.t for f in frames] == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert abs(int(frames[3].image.mean()) - 120) <= 3


def test_opencv_missing_file_and_device_are_clear_errors(tmp_path):
    with pytest.raises(FrameSourceError, match="no such video file"):
        OpenCVSource(str(tmp_path / "none.mp4"))
    with pytest.raises(FrameSourceError, match="cannot open"):
        OpenCVSource(97)


def test_folder_reads_images_in_order_and_skips_corrupt_ones(tmp_path):
    for name in ("carrousel_003.jpg", "carrousel_000.jpg"):
        shutil.copy(PHOTOS / name, tmp_path / name)
    (tmp_path / "carrousel_001.jpg").write_bytes(b"broken")
    (tmp_path / "notes.txt").write_text("not an image")
    src = open_frame_source(f"folder:{tmp_path}")
    names = []
    while (f := src.read()) is not None:
        names.append(f.name)
        assert f.image.shape == (480, 640, 3)
    assert names == ["carrousel_000.jpg", "carrousel_003.jpg"]
    assert src.skipped == [str(tmp_path / "carrousel_001.jpg")]


def test_folder_loops_when_asked(tmp_path):
    shutil.copy(PHOTOS / "carrousel_000.jpg", tmp_path / "a.jpg")
    src = FolderSource(tmp_path, loop=True)
    assert [src.read().index for _ in range(3)] == [0, 1, 2]


def test_folder_errors(tmp_path):
    with pytest.raises(FrameSourceError, match="no such folder"):
        FolderSource(tmp_path / "none")
    with pytest.raises(FrameSourceError, match="no images"):
        FolderSource(tmp_path)


@pytest.mark.parametrize("spec", ["webcam", "opencv:", "folder:", "sim:abc"])
def test_bad_spec_lists_the_forms(spec):
    with pytest.raises(ValueError, match="expected"):
        open_frame_source(spec)
