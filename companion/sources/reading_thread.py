"""The thread a camera source reads its frames on, and how it is stopped.

A camera source (the Carrousel table's, the dice tray's) reads frames on one thread of its own
so that capture never waits for the service loop. :class:`ReadingThread` is the part they share:
stopping that thread and releasing the frame source, and waiting for the thread to end.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from companion.health import state_key

__all__ = ["ReadingThread"]

log = logging.getLogger("companion.sources")


class ReadingThread:
    """Mixin of a source that reads ``self.frames`` on ``self._thread`` until ``self._stop``.

    The source sets ``self._stop`` (a :class:`threading.Event`), ``self._thread`` (the thread, or
    None) and ``self.frames`` (a frame source with ``close()``); ``LABEL`` names it in the log.
    """

    LABEL = "camera"
    frame_period_s: float = 0.0
    _stop: threading.Event
    _thread: threading.Thread | None
    frames: Any

    def _set_status(self, text: str) -> None:
        """Record the camera's state ``text`` in ``self.status``; when it changes, log it and
        tell ``self.on_status`` (the kit: a camera lost, back, or the end of the frames); the
        log line is written once per state, not again when only a figure in it moved
        (:func:`companion.health.state_key`: "the same frame for 3.1 s", "... 3.2 s")."""
        if text != self.status:  # type: ignore[has-type]
            if state_key(text) != state_key(self.status):  # type: ignore[has-type]
                log.info("%s", text if text.startswith("camera") else f"camera: {text}")
            self.status = text
            if self.on_status is not None:  # type: ignore[attr-defined]
                self.on_status(text)  # type: ignore[attr-defined]

    def _pace(self, clock: Any, next_t: float) -> float | None:
        """Wait on ``clock`` until ``next_t`` (session seconds) when ``self.frame_period_s`` > 0;
        returns the next frame's time (a period later, never in the past), ``next_t`` unchanged
        when unpaced, or None when :meth:`stop` was called meanwhile."""
        if self.frame_period_s <= 0:
            return next_t
        if clock.wait(self._stop, next_t):
            return None
        return max(next_t + self.frame_period_s, clock.now())

    def start_paced(self, emit: Any, clock: Any, name: str) -> None:
        """Start the reading thread ``name``: every ``self.frame_period_s`` seconds of ``clock``
        (0: as fast as frames come) call ``self.step(t) -> list | None`` and ``emit`` each
        observation it returns, until :meth:`stop` or ``step`` returns None (the frames ended).
        A reader that raises is logged once and ends the thread with ``camera lost: reader
        error: ...`` through ``self._set_status``: a reader bug never kills the service."""
        if self._thread is not None:
            return
        self._stop.clear()

        def loop() -> None:
            next_t: float | None = clock.now()
            while not self._stop.is_set():
                next_t = self._pace(clock, next_t)
                if next_t is None:
                    break
                try:
                    observations = self.step(clock.now())  # type: ignore[attr-defined]
                except Exception as exc:  # a reader bug must not kill the service
                    log.exception("%s reader failed", self.LABEL)
                    self._set_status(f"camera lost: reader error: {exc}")
                    break
                if observations is None:
                    break
                for obs in observations:
                    emit(obs)

        self._thread = threading.Thread(target=loop, name=name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop reading and release the camera; safe to call twice (waits up to 5 s for each
        thread: the reading thread and, when the source has one, its capture thread
        ``self._capture_thread``)."""
        self._stop.set()
        for name in ("_capture_thread", "_thread"):
            thread = getattr(self, name, None)
            if thread is not None and thread is not threading.current_thread():
                thread.join(timeout=5)
            setattr(self, name, None)
        try:
            self.frames.close()
        except Exception as exc:  # a camera that fails to close must not stop the service
            log.warning("%s: close: %s", self.LABEL, exc)

    def join(self, timeout: float | None = None) -> None:
        """Wait (``timeout`` seconds, None = as long as it takes) for the reading thread to end:
        the end of the frames, the camera lost, or :meth:`stop`."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
