"""The camera as a source of Carrousel observations.

Frames (from any :mod:`companion.vision.frames` source) go through the
:class:`~companion.vision.carrousel.CarrouselReader`; the board reading and each player's card
are passed through a settle-time :class:`~companion.vision.colour.Stabiliser` and become

* ``board`` observations (the 7 spaces) when the reading has been the same, with every space
  read, for ``settle_s`` seconds;
* ``card_seen`` observations (player, card) when a player's card has been read the same for
  ``settle_s`` seconds.

Problems are reported through ``on_status(text)``, once per change: ``"camera lost: ..."``,
``"board not visible: ..."``, ``"camera: end of frames"`` and ``"board visible"`` when it comes
back. The service loop passes them on to the announcers. Nothing here raises once started.

Light: a camera with exposure locked (picamera2) sees the board darker or brighter when the
room's light changes. When the board's white stays more than ``relight_ratio`` times brighter
or darker than when the exposure was locked for ``settle_s``, the source asks the camera to
lock again (``frames.relock()``: automatic exposure, lock, flush the stale frames) and reports
``"light changed: exposure locked again"``.

Seats: player 1 sits at the first seat of ``seats``, player 2 at the second, and so on
(default for 2 players: south, north; 3: south, east, north; 4: south, east, north, west).
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from companion.clock import Clock
from companion.events import Observation
from companion.games.carrousel import Board, CardSeen
from companion.sources import Emit
from companion.sources.reading_thread import ReadingThread
from companion.vision.colour import UNKNOWN, Stabiliser
from companion.vision.frames import (
    CameraLost,
    FrameSource,
    FrameSourceError,
    open_frame_source,
)

__all__ = ["CarrouselCameraSource", "ScheduledCamera", "camera_source_from_config", "default_seats"]

log = logging.getLogger(__name__)


def default_seats(n_players: int) -> tuple[str, ...]:
    """The seats of 1-4 players in seat order (players facing each other when two)."""
    return {1: ("south",), 2: ("south", "north"), 3: ("south", "east", "north")}.get(
        n_players, ("south", "east", "north", "west"))[:max(n_players, 0)]


def _seen_twice(triples: dict[str, tuple[str, ...] | None]) -> dict[tuple[str, ...], tuple[str, ...]]:
    """The cards one frame reads at two places or more, each with the players' places
    (``{card: ("Ben's", "Cleo's")}``): the deck holds every card once (DESIGN.md: the 60
    ordered triples), so such a reading is not a card of either place."""
    places: dict[tuple[str, ...], list[str]] = {}
    for player, triple in triples.items():
        if triple is not None:
            places.setdefault(triple, []).append(f"{player}'s")
    return {triple: tuple(where) for triple, where in places.items() if len(where) > 1}


class CarrouselCameraSource(ReadingThread):
    """A :class:`companion.sources.Source` that watches the Carrousel table.

    Args:
        frames: a frame source, or its spec (``"picamera2"``, ``"opencv:0"``,
            ``"folder:PATH"``, ``"sim"``; see :func:`~companion.vision.frames.open_frame_source`).
        players: player names in seat order (for ``card_seen``); none = cards are not reported.
        seats: the seat of each player (default :func:`default_seats`).
        reader: the :class:`~companion.vision.carrousel.CarrouselReader` (default: the
            calibration files in ``calibration/``).
        settle_s: seconds a reading must stay the same before it is reported.
        frame_period_s: at most one frame per this many seconds (0 = as fast as frames come).
        on_status: called with a short text when the camera's state changes.
        emit_partial: also report stable board readings with unknown spaces.
        relight_ratio: light change (ratio of the board's white) that makes a camera with a
            ``relock()`` method lock its exposure again.
        stamp_first_seen: stamp each ``board`` with the time the reading first appeared
            (for the service's jitter buffer) instead of the time it settled.

    Raises:
        ValueError: a bad spec or seat, or a bad calibration file (naming it).
        FrameSourceError: the camera cannot be opened.
    """

    def __init__(self, frames: FrameSource | str, players: Sequence[str] = (),
                 seats: Sequence[str] | None = None, reader: Any = None, settle_s: float = 0.5,
                 frame_period_s: float = 0.0, on_status: Callable[[str], None] | None = None,
                 emit_partial: bool = False, relight_ratio: float = 1.6, stamp_first_seen: bool = False):
        from companion.vision.carrousel import SEATS, CarrouselReader

        self.players = tuple(players)
        self.stamp_first_seen = stamp_first_seen
        self.seats = tuple(seats) if seats is not None else default_seats(len(self.players))
        if len(self.seats) < len(self.players):
            raise ValueError(f"{len(self.players)} players but only {len(self.seats)} seats")
        for s in self.seats:
            if s not in SEATS:
                raise ValueError(f"seat {s!r}: expected one of {', '.join(SEATS)}")
        self.reader = reader if reader is not None else CarrouselReader()
        self.frames = open_frame_source(frames) if isinstance(frames, str) else frames
        self.settle_s = settle_s
        self.frame_period_s = frame_period_s
        self.on_status = on_status
        self.emit_partial = emit_partial
        self._board = Stabiliser[tuple[str, ...]](settle_s)
        self._cards = {p: Stabiliser[tuple[str, ...]](settle_s) for p in self.players}
        self.status = ""
        self.frames_read = 0
        #: frames captured by :meth:`start`'s capture thread (read or skipped: the newest wins)
        self.frames_captured = 0
        self.relight_ratio = relight_ratio
        self.relocks = 0
        self._light_ref: float | None = None
        self._light_off_since: float | None = None
        self._latest_lock = threading.Lock()
        self._latest: tuple[float, Any, Any] | None = None
        self._latest_taken = False  # latest was read (by a page) since it was set
        self._replaced_taken = False  # the latest replaced last had been read
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._capture_thread: threading.Thread | None = None
        self._buffers: _FrameBuffers | None = None

    @property
    def latest(self) -> tuple[float, Any, Any] | None:
        """``(t_s, frame H x W x 3 uint8 BGR, CarrouselReading)`` of the last frame read, or None
        (the web page's camera view draws it when a page asks; the frame as read, no copy). A
        frame taken from here is kept whole until a second newer frame is shown (see
        :meth:`start`); set on the reading thread."""
        with self._latest_lock:
            self._latest_taken = True
            return self._latest

    @latest.setter
    def latest(self, value: tuple[float, Any, Any] | None) -> None:
        with self._latest_lock:
            self._replaced_taken = self._latest_taken
            self._latest, self._latest_taken = value, False

    @property
    def frame_arrays(self) -> int:
        """How many arrays of a frame's size :meth:`start`'s capture has had decoded so far (each
        reused after; 0 for a frame source that gives its own arrays, such as picamera2)."""
        return self._buffers.allocated if self._buffers is not None else 0

    def prime(self, spaces: Sequence[str] | None, cards: dict[str, Sequence[str]]) -> None:
        """Take ``spaces`` (7 labels) and ``cards`` (``{player: (first, second, third)}``) as
        already reported: a game resumed from the journal, whose referee knows them. A frame
        showing the same is then quiet; only a change is reported, after ``settle_s`` as usual
        (no ``card_seen`` of a card the referee has already moved on from because a stale
        reading settled after the restart)."""
        def settled(stabiliser: Stabiliser[tuple[str, ...]], value: tuple[str, ...]) -> None:
            stabiliser.reset()
            stabiliser.update(0.0, value)  # seen, and unchanged for the settle time: reported
            stabiliser.update(self.settle_s, value)

        if spaces is not None:
            settled(self._board, tuple(spaces))
        for player, card in cards.items():
            if player in self._cards and card is not None:
                settled(self._cards[player], tuple(card))

    # ------------------------------------------------------------------ one frame
    def step(self, t: float) -> list[Observation] | None:
        """Read one frame at session time ``t`` (seconds) and return the observations it
        completes; None when the frames have ended or the camera is lost."""
        frame = self._capture(None)
        if frame is None:
            return None
        return self.process(t, frame.image)

    def _capture(self, into: Any) -> Any:
        """The next frame (read into the ``H x W x 3 uint8`` array ``into`` when the frame
        source can, see ``read_into``), or None after telling why there is none."""
        try:
            read_into = getattr(self.frames, "read_into", None)
            frame = read_into(into) if into is not None and read_into is not None else self.frames.read()
        except (CameraLost, FrameSourceError) as exc:
            self._set_status(str(exc) if str(exc).startswith("camera lost") else f"camera lost: {exc}")
            return None
        if frame is None:
            self._set_status("camera: end of frames")
        return frame

    def process(self, t: float, image: Any) -> list[Observation]:
        """Read one frame's image (``H x W x 3 uint8`` BGR) taken at session time ``t`` (s) and
        return the observations it completes."""
        self.frames_read += 1
        reading = self.reader.read(image, stream=True, t=t)  # t: a frozen camera is told
        self.latest = (t, image, reading)  # one tuple, so a page never sees a mixed pair
        out: list[Observation] = []
        if reading.status != "ok":
            self._set_status(reading.status)
            return out
        if self.status.startswith(("board not visible", "light changed", "camera frozen", "colour lost")) \
                or not self.status:  # the board read again after any state without a reading
            self._set_status("board visible")
        if self._light_changed(t, reading.white_level):
            return out
        labels = reading.labels
        settled = self._board.update(t, labels)
        if settled is not None and (self.emit_partial or UNKNOWN not in settled):
            # Stamped when the table first looked like this, not when it had settled: with the
            # service's jitter buffer a claim pressed meanwhile is judged on this board.
            out.append(Board(t=self._board.since if self.stamp_first_seen else t, spaces=settled))
        triples = {}
        for player, seat in zip(self.players, self.seats):
            card = reading.cards.get(seat)
            triples[player] = tuple(card.triple) if card is not None and card.triple else None
        twice = _seen_twice(triples)
        if twice != self._twice_said:  # said once when it starts, not for every frame
            self._twice_said = twice
            for triple, where in twice.items():
                log.warning("camera: the card %s is read at %s places; the deck holds it once, so neither "
                            "reading is taken: check those cards", "-".join(triple), " and ".join(where))
        for player, triple in triples.items():
            if triple is None or triple in twice:
                continue  # an unread card (or one read at two places) says nothing; the last stable one stands
            done = self._cards[player].update(t, triple)
            if done is not None:
                out.append(CardSeen(t=t, player=player, card=done))  # type: ignore[arg-type]
        return out

    _twice_said: dict[tuple[str, ...], tuple[str, ...]] = {}  # the cards read twice last said

    def _light_changed(self, t: float, level: float) -> bool:
        """Track the board's white; relock the camera's exposure after a lasting change."""
        relock = getattr(self.frames, "relock", None)
        if relock is None or level <= 0:
            return False
        if self._light_ref is None:
            self._light_ref = level
            return False
        ratio = level / self._light_ref
        if 1 / self.relight_ratio <= ratio <= self.relight_ratio:
            self._light_off_since = None
            return False
        if self._light_off_since is None:
            self._light_off_since = t
        if t - self._light_off_since < self.settle_s:
            return False
        relock()  # automatic exposure, lock again, flush the frames taken before
        self.relocks += 1
        self._light_ref = None
        self._light_off_since = None
        self._set_status("light changed: exposure locked again")
        return True

    # ------------------------------------------------------------------ Source protocol
    def start(self, emit: Emit, clock: Clock) -> None:
        """Capture frames on one thread and read them on another, and ``emit`` observations
        (times from ``clock``: the moment each frame was captured).

        Capture never waits for the reader: the newest frame wins (a frame the reader had no
        time for is dropped, never queued). When the frame source can decode into a given
        array (``read_into``: a video file or an OpenCV device), frames are decoded into a few
        arrays reused in turn (:class:`_FrameBuffers`), so nothing of a frame's size is
        allocated per frame: two while the reader keeps up (the frame being captured and
        :attr:`latest`), four at most while it lags (also the frame it reads and the one waiting
        for it), one more while a page takes frames. A frame taken from :attr:`latest` (a web
        page) is written again only once two newer frames have been shown (the page has the
        reader's whole next frame to copy it); a frame shown that nobody took, and a dropped
        frame, are reused as soon as they are neither latest nor read.
        """
        if self._thread is not None:
            return
        self._stop.clear()
        newest = _NewestFrame()
        buffers = _FrameBuffers() if getattr(self.frames, "read_into", None) is not None else None
        self._buffers = buffers

        def capture() -> None:
            next_t: float | None = clock.now()
            try:
                while not self._stop.is_set():
                    next_t = self._pace(clock, next_t)
                    if next_t is None:
                        break
                    frame = self._capture(None if buffers is None else buffers.take())
                    if frame is None:
                        break
                    self.frames_captured += 1
                    dropped = newest.put((clock.now(), frame.image))
                    if dropped is not None and buffers is not None:
                        buffers.free(dropped[1])  # never shown: reused at once
            finally:
                newest.close()

        def read() -> None:
            while True:
                item = newest.take()
                if item is None or self._stop.is_set():
                    break
                t, image = item
                try:
                    observations = self.process(t, image)
                except Exception as exc:  # a reader bug must not kill the service
                    log.exception("camera reader failed")
                    self._set_status(f"camera lost: reader error: {exc}")
                    self._stop.set()
                    break
                if buffers is not None:
                    buffers.shown(image, kept=self._replaced_taken)  # latest now
                for obs in observations:
                    emit(obs)

        self._capture_thread = threading.Thread(target=capture, name="carrousel-capture", daemon=True)
        self._thread = threading.Thread(target=read, name="carrousel-camera", daemon=True)
        self._capture_thread.start()
        self._thread.start()


class _NewestFrame:
    """A slot holding the newest captured frame for the reader (one item, never a queue).

    ``put(item)`` replaces the waiting item and returns it (None if there was none); ``take()``
    waits for an item and returns it, or None once :meth:`close` was called and none waits.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._item: Any = None
        self._closed = False

    def put(self, item: Any) -> Any:
        """Offer the newest item; returns the one it replaced (never read), or None."""
        with self._cond:
            old, self._item = self._item, item
            self._cond.notify()
            return old

    def take(self) -> Any:
        """The newest item (waits for one); None when closed and empty."""
        with self._cond:
            while self._item is None and not self._closed:
                self._cond.wait()
            item, self._item = self._item, None
            return item

    def close(self) -> None:
        """No more items: a waiting :meth:`take` returns what is left, then None."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()


class _FrameBuffers:
    """The arrays a capture thread decodes frames into, reused: five of a frame's size at most.

    An array is free when no one reads it: a dropped frame's at once (:meth:`free`); a frame
    shown as ``latest`` once a newer one is shown, or, when a page took it from ``latest``, once
    a second newer one is shown (:meth:`shown`). :meth:`take` gives the capture the array freed
    longest ago, or None when none is free (the frame source then allocates one: at most five
    exist, since the others are ``latest``, the one kept for a page, the frame being read and
    the one waiting for the reader). Shared by the capture and reading threads (one lock).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._free: collections.deque[Any] = collections.deque()
        self._latest: Any = None
        self._kept: Any = None
        #: how many times :meth:`take` found no free array (the frame source allocated one)
        self.allocated = 0

    def take(self) -> Any:
        """The free array to decode the next frame into, or None (let the frame source
        allocate one)."""
        with self._lock:
            if self._free:
                return self._free.popleft()
            self.allocated += 1
            return None

    def free(self, image: Any) -> None:
        """``image`` is no longer read by anyone (a dropped frame's): reusable at once."""
        with self._lock:
            self._free.append(image)

    def shown(self, image: Any, kept: bool) -> None:
        """``image`` is ``latest`` now. The frame it replaced is kept until the next call when
        ``kept`` (a page took it from ``latest``), else free; the one kept before is free."""
        with self._lock:
            if image is self._latest:
                return
            if self._kept is not None:
                self._free.append(self._kept)
                self._kept = None
            if self._latest is not None:
                if kept:
                    self._kept = self._latest
                else:
                    self._free.append(self._latest)
            self._latest = image


class ScheduledCamera:
    """A :class:`CarrouselCameraSource` driven by the service loop instead of its own thread:
    one frame every ``period_s`` seconds of session time (the simulated camera, whose frames
    are rendered on demand, so that a simulated game is the same at any speed).

    Args:
        source: the camera source (its frames are read by :meth:`advance`); any source with
            ``step(t) -> list | None`` and ``frames`` (the Carrossel one too).
        period_s: session seconds between frames.
        start_t: session time (s) of the first frame.
    """

    def __init__(self, source: CarrouselCameraSource, period_s: float = 0.1, start_t: float = 0.0):
        self.source = source
        self.period_s = period_s
        self._next: float | None = start_t
        self._emit: Emit | None = None

    def start(self, emit: Emit, clock: Clock) -> None:
        """Begin: observations go to ``emit``."""
        self._emit = emit

    def stop(self) -> None:
        """No more frames; closes the camera."""
        self._next = None
        self.source.frames.close()

    def next_time(self) -> float | None:
        """Session time (s) of the next frame, or None once the camera has ended."""
        return self._next

    def advance(self, t: float) -> None:
        """Read the frame due at or before ``t`` (s) and emit what it completes."""
        if self._next is None or self._next > t:
            return
        observations = self.source.step(self._next)
        if observations is None:
            self._next = None
            return
        for obs in observations:
            if self._emit is not None:
                self._emit(obs)
        self._next = round(self._next + self.period_s, 6)


def camera_source_from_config(config: Any, players: Sequence[str], spec: str | None = None,
                              on_status: Callable[[str], None] | None = None,
                              clock: Callable[[], float] | None = None) -> CarrouselCameraSource:
    """Build the camera source from the ``[camera]`` configuration section.

    Args:
        config: the loaded configuration (``config["camera"]`` is read).
        players: player names in seat order.
        spec: overrides ``[camera] source`` (``companion run --camera ...``).
        on_status: see :class:`CarrouselCameraSource`.
        clock: timestamps of the frames (default ``time.monotonic``).

    Raises:
        ValueError: a bad spec or calibration file (naming it).
        FrameSourceError: the camera cannot be opened.
    """
    import time

    from companion.calibration_dir import explicit_or_calibration, optional_calibration
    from companion.vision.calibration import load_lens
    from companion.vision.carrousel import (
        CarrouselGeometry,
        CarrouselReader,
        load_references,
    )
    from companion.vision.frames import open_frame_source
    from companion.vision.registration import Registrar

    cam = config["camera"]
    geometry = CarrouselGeometry.load(explicit_or_calibration(cam["geometry"], "carrousel-board.json", config,
                                                              key="[camera] geometry"))
    intrinsics = optional_calibration(cam["intrinsics"], "camera.json", config, key="[camera] intrinsics")
    lens = load_lens(intrinsics) if intrinsics is not None else None
    reader = CarrouselReader(geometry, load_references(explicit_or_calibration(cam["colours"], "carrousel-colours.json", config,
                                                                                      key="[camera] colours")),
                             Registrar(geometry.markers, geometry.dictionary, redetect_every=cam["redetect_every"],
                                       lens=lens))
    spec = spec or cam["source"]
    if spec == "auto":
        spec = "picamera2"  # a real table's camera; the simulated one is asked for by name
    kwargs: dict[str, Any] = {"clock": clock or time.monotonic}
    if spec == "picamera2":
        kwargs.update(size=(cam["width"], cam["height"]), warmup_s=cam["warmup_s"])
    elif spec.startswith("opencv:") and not spec[7:].isdigit():
        pass
    elif spec.startswith("opencv:"):
        kwargs.update(size=(cam["width"], cam["height"]))
    frames = open_frame_source(spec, **kwargs)
    return CarrouselCameraSource(frames, players=players, seats=cam["seats"] or None, reader=reader,
                                 settle_s=cam["settle_s"], frame_period_s=cam["frame_period_s"], on_status=on_status)
