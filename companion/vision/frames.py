"""Frame sources behind one small interface: picamera2, OpenCV ``VideoCapture`` (device, video
file, URL), a folder of images, and the simulated camera.

Every source gives :class:`Frame` objects (``H x W x 3 uint8`` BGR and a timestamp in
seconds) from ``read()``, returns None at the end of a finite stream (a video file, a folder)
and raises :class:`CameraLost` when a live camera stops delivering (unplugged, hung beyond
its restarts). ``close()`` releases the device and is safe to call twice.

Choose one with a text spec (:func:`open_frame_source`), as in ``companion run --camera``:
``picamera2``, ``opencv:0`` (device index), ``opencv:PATH_OR_URL``, ``folder:PATH`` (each
image once; ``folder:PATH?repeat=N``: each image N times), ``sim`` or ``sim:SEED``.

Sources: Picamera2 manual (Raspberry Pi Ltd, 2023), sections 5.1 (controls: ``AeEnable``,
``AwbEnable``, ``ExposureTime``, ``AnalogueGain``, ``ColourGains``) and 6.1 (``capture_array``,
``capture_metadata``); picamera2 issues 1183 and 958 (re-opening the camera leaks memory: one
long-lived object), 426 and 847 (frames already queued keep the old settings: flush them), 794
(a capture that never returns: restart it); OpenCV ``cv2.VideoCapture``.
"""

from __future__ import annotations

import dataclasses
import importlib
import logging
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import numpy as np

__all__ = [
    "Frame",
    "FrameSource",
    "CameraLost",
    "FrameSourceError",
    "Watchdog",
    "Picamera2Source",
    "OpenCVSource",
    "FolderSource",
    "open_frame_source",
    "check_bgr_frame",
    "IMAGE_SUFFIXES",
]

log = logging.getLogger(__name__)

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp")


@dataclasses.dataclass(frozen=True)
class Frame:
    """One camera frame.

    Attributes:
        image: ``H x W x 3 uint8``, BGR.
        t: capture time, seconds (the source's clock: ``time.monotonic`` unless injected).
        index: 0, 1, 2, ... in the order delivered.
        name: where it came from (a file name for a folder; "" otherwise).
        truth: the simulated camera's ground truth for this frame (None for real cameras).
    """

    image: np.ndarray
    t: float
    index: int
    name: str = ""
    truth: Any = None


class FrameSourceError(Exception):
    """A frame source cannot be opened or used (the message names the device or path).

    Attributes:
        fix: what to do about it when the source knows better than a camera's cable (a video
            file's path, a folder of images), else None.
    """

    def __init__(self, message: str, fix: str | None = None):
        super().__init__(message)
        self.fix = fix


class CameraLost(FrameSourceError):
    """A live camera stopped delivering frames (unplugged, or hung beyond its restarts)."""


class FrameSource(Protocol):
    """Gives frames one at a time."""

    name: str

    def read(self) -> Frame | None:
        """The next frame; None at the end of a finite stream. Raises :class:`CameraLost`."""

    def close(self) -> None:
        """Release the device; safe to call twice."""


def check_bgr_frame(frame: Any) -> np.ndarray:
    """``frame`` when it is an ``H x W x 3 uint8, BGR`` array (what every camera reader reads).

    Raises:
        ValueError: anything else, naming its shape and dtype.
    """
    if not (isinstance(frame, np.ndarray) and frame.ndim == 3 and frame.shape[2] == 3 and frame.dtype == np.uint8):
        raise ValueError(f"expected an H x W x 3 uint8 BGR frame, got "
                         f"{getattr(frame, 'shape', type(frame).__name__)} {getattr(frame, 'dtype', '')}")
    return frame


def _check_image(image: Any, where: str) -> np.ndarray:
    if not (isinstance(image, np.ndarray) and image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3):
        raise FrameSourceError(f"{where}: expected H x W x 3 uint8 BGR frames, got "
                               f"{getattr(image, 'shape', type(image).__name__)}")
    return image


class Watchdog:
    """Runs a blocking capture with a time limit; restarts the capture when it hangs.

    Args:
        capture: returns one frame (blocking).
        restart: brings a hung capture back (e.g. stop and start the camera).
        timeout_s: seconds a capture may take.
        max_restarts: consecutive restarts after which the camera is declared lost.

    ``call()`` returns the capture's result or raises :class:`CameraLost`. Captures run on a
    daemon worker thread; a hung one is abandoned (it cannot keep the service from exiting) and
    a fresh worker serves the next call.
    """

    def __init__(self, capture: Callable[[], Any], restart: Callable[[], None],
                 timeout_s: float = 2.0, max_restarts: int = 3):
        self.capture, self.restart = capture, restart
        self.timeout_s, self.max_restarts = float(timeout_s), int(max_restarts)
        self.restarts = 0
        self._start_worker()

    def _start_worker(self) -> None:
        self._requests: queue.Queue[bool] = queue.Queue()
        self._results: queue.Queue[tuple[bool, Any]] = queue.Queue()
        threading.Thread(target=self._work, args=(self._requests, self._results),
                         name="capture", daemon=True).start()

    def _work(self, requests: queue.Queue[bool], results: queue.Queue[tuple[bool, Any]]) -> None:
        while requests.get():
            try:
                results.put((True, self.capture()))
            except Exception as exc:  # handed to the caller
                results.put((False, exc))

    def call(self) -> Any:
        """One capture within the time limit (restarting up to ``max_restarts`` times)."""
        failures = 0
        while True:
            self._requests.put(True)
            try:
                ok, value = self._results.get(timeout=self.timeout_s)
            except queue.Empty:
                failures += 1
                self.restarts += 1
                log.warning("capture hung for %.1f s; restarting the camera (%d)", self.timeout_s, failures)
                self._requests.put(False)  # the hung worker ends if its capture ever returns
                self._start_worker()
                if failures > self.max_restarts:
                    raise CameraLost(f"camera lost: no frame after {failures} restarts") from None
                try:
                    self.restart()
                except Exception as exc:  # the camera itself is gone
                    raise CameraLost(f"camera lost: restart failed: {exc}") from exc
                continue
            if ok:
                return value
            raise CameraLost(f"camera lost: {value}") from value

    def close(self) -> None:
        """Stop the worker thread (a hung capture is abandoned)."""
        self._requests.put(False)


class Picamera2Source:
    """The Raspberry Pi camera through picamera2 (imported when opened, only on a Pi).

    One camera object lives as long as the source (re-opening leaks memory). After
    ``warmup_s`` of automatic exposure and white balance, the measured ``ExposureTime``,
    ``AnalogueGain`` and ``ColourGains`` are set as fixed controls, so the colours the reader
    was calibrated with stay put; the frames already queued with the old settings are flushed.
    Call :meth:`relock` after the room's light changed.

    Args:
        size: (width, height) of the frames, pixels.
        warmup_s: seconds of automatic exposure before locking.
        flush_frames: frames dropped after the controls change.
        timeout_s: a capture that takes longer is restarted (watchdog).
        module: the ``picamera2`` module (tests pass a stand-in); default: import it.
        clock: seconds for timestamps (default ``time.monotonic``).
        sleep: waits during warm-up (default ``time.sleep``; tests pass a no-op).

    Raises:
        FrameSourceError: picamera2 is not installed or no camera is connected.
    """

    name = "picamera2"

    def __init__(self, size: tuple[int, int] = (640, 480), warmup_s: float = 1.0, flush_frames: int = 4,
                 timeout_s: float = 2.0, module: Any = None, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        if module is None:
            try:
                module = importlib.import_module("picamera2")
            except ImportError as exc:
                raise FrameSourceError(
                    "picamera2 is not installed (on Raspberry Pi OS: sudo apt install python3-picamera2)") from exc
        try:
            self.camera = module.Picamera2()
            config = self.camera.create_video_configuration(main={"size": tuple(size), "format": "RGB888"})
            self.camera.configure(config)
            self.camera.start()
        except Exception as exc:
            raise FrameSourceError(f"picamera2: cannot open the camera: {exc}") from exc
        self.size, self.warmup_s, self.flush_frames = tuple(size), warmup_s, flush_frames
        self.clock, self.sleep = clock, sleep
        self.locked_controls: dict[str, Any] = {}
        self._index = 0
        self._closed = False
        self.watchdog = Watchdog(lambda: self.camera.capture_array("main"), self._restart, timeout_s)
        self.relock()

    def _restart(self) -> None:
        self.camera.stop()
        self.camera.start()
        if self.locked_controls:
            self.camera.set_controls(self.locked_controls)

    def relock(self) -> dict[str, Any]:
        """Let exposure and white balance settle automatically, then lock them at the measured
        values and flush the stale frames. Returns the controls set."""
        self.camera.set_controls({"AeEnable": True, "AwbEnable": True})
        self.sleep(self.warmup_s)
        md = self.camera.capture_metadata()
        controls = {"AeEnable": False, "AwbEnable": False}
        for key in ("ExposureTime", "AnalogueGain", "ColourGains"):
            if key in md:
                controls[key] = tuple(md[key]) if key == "ColourGains" else md[key]
        self.camera.set_controls(controls)
        self.locked_controls = controls
        self.flush()
        return controls

    def flush(self) -> None:
        """Drop the frames captured before the last change of controls."""
        for _ in range(self.flush_frames):
            self.watchdog.call()

    def read(self) -> Frame:
        """The next frame (``H x W x 3 uint8`` BGR: picamera2's RGB888 is stored B, G, R)."""
        image = _check_image(self.watchdog.call(), "picamera2")
        frame = Frame(np.ascontiguousarray(image[:, :, :3]), self.clock(), self._index)
        self._index += 1
        return frame

    def close(self) -> None:
        """Stop and close the camera; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self.watchdog.close()
        try:
            self.camera.stop()
            self.camera.close()
        except Exception as exc:  # closing a camera that is already gone
            log.warning("picamera2: close: %s", exc)


class OpenCVSource:
    """OpenCV ``VideoCapture``: a device index, a video file or a stream URL.

    Args:
        target: device index (int) or a path / URL (str).
        size: (width, height) to ask a device for, or None.
        max_failures: consecutive failed reads of a live camera before :class:`CameraLost`.
        clock: seconds for timestamps (default ``time.monotonic``).

    A video file ends with ``read() -> None``; a device or URL that stops delivering raises
    :class:`CameraLost`.

    Raises:
        FrameSourceError: the device, file or URL cannot be opened.
    """

    def __init__(self, target: int | str, size: tuple[int, int] | None = None, max_failures: int = 5,
                 clock: Callable[[], float] = time.monotonic):
        import cv2

        self.target = target
        self.name = f"opencv:{target}"
        self.is_file = isinstance(target, str) and Path(target).is_file()
        if isinstance(target, str) and "://" not in target and not self.is_file:
            where = Path(target)
            if where.is_dir():
                what = "a directory, not a video file"
            elif where.exists():
                what = "not a video file (a device or special file)"
            else:
                what = "no such video file"
            raise FrameSourceError(f"{target}: {what}",
                                   fix="check the video file's path in --camera opencv:FILE or [camera] source "
                                   "(opencv:0 for a USB webcam, picamera2 for the Pi camera)")
        self.cap = cv2.VideoCapture(target)
        if not self.cap.isOpened():
            raise FrameSourceError(f"{self.name}: cannot open (not connected, busy or not a video)",
                                   fix="give a video file OpenCV can decode (an .mp4 or .avi, H.264 or MJPEG)"
                                   if self.is_file else None)
        if size is not None and not self.is_file:
            self.cap.set(cv2.CAP_PROP_FRAME_WIDTH, size[0])
            self.cap.set(cv2.CAP_PROP_FRAME_HEIGHT, size[1])
        self.max_failures, self.clock = max_failures, clock
        self._index = 0

    def read(self) -> Frame | None:
        """The next frame (a new array), None at the end of a file; raises :class:`CameraLost`."""
        return self.read_into(None)

    def read_into(self, image: np.ndarray | None) -> Frame | None:
        """The next frame decoded into ``image`` (an ``H x W x 3 uint8`` array of the frame's
        size, reused: no allocation; another size or None: a new array), None at the end of a
        file; raises :class:`CameraLost`."""
        failures = 0
        while True:
            ok, image = self.cap.read(image) if image is not None else self.cap.read()
            if ok and image is not None:
                if image.ndim == 2:
                    import cv2

                    image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
                frame = Frame(_check_image(image, self.name), self.clock(), self._index)
                self._index += 1
                return frame
            if self.is_file:
                return None
            failures += 1
            if failures >= self.max_failures:
                raise CameraLost(f"camera lost: {self.name} gave no frame {failures} times in a row")

    def close(self) -> None:
        """Release the capture; safe to call twice."""
        self.cap.release()


class FolderSource:
    """The images of a folder in name order, as frames (for replaying a recorded table).

    Args:
        path: the folder.
        loop: start again after the last image instead of ending.
        repeat: deliver each image this many times (a still table held before the camera, so
            that a reading can settle).
        clock: seconds for timestamps (default ``time.monotonic``).

    An image that cannot be decoded, or larger than :data:`companion.vision.images.MAX_PIXELS`
    (checked in its header before decoding), is skipped with a warning (listed in :attr:`skipped`).

    Raises:
        FrameSourceError: the folder does not exist or holds no image.
    """

    def __init__(self, path: str | Path, loop: bool = False, repeat: int = 1,
                 clock: Callable[[], float] = time.monotonic):
        self.path = Path(path)
        self.name = f"folder:{self.path}"
        if not self.path.is_dir():
            raise FrameSourceError(f"{self.path}: no such folder", fix="check the folder's path")
        self.files = sorted(p for p in self.path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        if not self.files:
            raise FrameSourceError(f"{self.path}: no images ({', '.join(IMAGE_SUFFIXES)})",
                                   fix="put the frames there as image files")
        self.loop, self.clock = loop, clock
        self.repeat = max(1, int(repeat))
        self._held: Frame | None = None
        self._held_left = 0
        self.skipped: list[str] = []
        self._next = 0
        self._index = 0

    def read(self) -> Frame | None:
        """The next decodable image within the pixel limit, or None after the last one (unless
        looping)."""
        from companion.vision.images import ImageError, read_image

        if self._held is not None and self._held_left > 0:
            self._held_left -= 1
            frame = dataclasses.replace(self._held, t=self.clock(), index=self._index)
            self._index += 1
            return frame
        tried = 0
        while tried < len(self.files):
            if self._next >= len(self.files):
                if not self.loop:
                    return None
                self._next = 0
            path = self.files[self._next]
            self._next += 1
            tried += 1
            try:  # the size from the header first: a pixel limit before decoding
                image = read_image(path)
            except ImageError as exc:
                image = None
                if str(path) not in self.skipped:
                    log.warning("%s; skipped", exc)
                    self.skipped.append(str(path))
            if image is None:
                continue
            frame = Frame(image, self.clock(), self._index, name=path.name)
            self._held, self._held_left = frame, self.repeat - 1
            self._index += 1
            return frame
        return None

    def close(self) -> None:
        """Nothing to release."""


def open_frame_source(spec: str, **kwargs: Any) -> FrameSource:
    """Open a frame source from its text spec.

    Args:
        spec: ``picamera2``, ``opencv:INDEX``, ``opencv:PATH_OR_URL``, ``folder:PATH``, ``sim``
            or ``sim:SEED``.
        kwargs: passed to the source's constructor (e.g. ``clock``).

    Raises:
        ValueError: a spec of none of these forms (the message lists them).
        FrameSourceError: the source cannot be opened.
    """
    kind, _, arg = spec.partition(":")
    if kind == "picamera2" and not arg:
        return Picamera2Source(**kwargs)
    if kind == "opencv" and arg:
        return OpenCVSource(int(arg) if arg.isdigit() else arg, **kwargs)
    if kind == "folder" and arg:
        path, _, rep = arg.partition("?repeat=")
        if rep and not rep.isdigit():
            raise ValueError(f"camera {spec!r}: expected folder:PATH or folder:PATH?repeat=N")
        repeat = kwargs.pop("repeat", 1)
        return FolderSource(path, repeat=int(rep) if rep else repeat, **kwargs)
    if kind == "sim":
        if arg and not arg.lstrip("-").isdigit():
            raise ValueError(f"camera {spec!r}: expected sim or sim:SEED (an integer)")
        from companion.vision.sim import SimulatedCamera

        return SimulatedCamera(seed=int(arg) if arg else 0, **kwargs)
    raise ValueError(f"camera {spec!r}: expected picamera2, opencv:INDEX, opencv:PATH_OR_URL, "
                     f"folder:PATH, sim or sim:SEED")
