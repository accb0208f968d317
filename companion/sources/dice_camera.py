"""The camera over the dice tray as a source of Carnival ``roll`` observations.

Frames (from any :mod:`companion.vision.frames` source: picamera2, ``opencv:0``,
``opencv:FILE``, ``folder:PATH``) go through three stages, all in the pure per-frame
:meth:`DiceCameraSource.step` (time arrives with the frame; no clock, no thread):

1. **Motion gate.** The tray's region, grey and shrunk to :data:`THUMB_PX` px, is compared with
   the frame the dice were last seen still in. A difference above ``motion_level`` (grey levels,
   0-255, on the shrunk image) is motion: dice tumbling, a hand in the tray. Nothing is read
   while the tray moves, and the settle time starts again.
2. **Reading.** Once the tray is still, the :class:`~companion.readers.dice.DiceReader` reads it
   (on the tray's region only) at once, and again at least ``settle_s / 2`` later while the
   settle time runs; the other still frames reuse the last reading (the gate says they show the
   same tray), so a reading is never waited for once the settle time is up (on a Pi one reading
   costs several frame periods).
3. **Settling.** A :class:`~companion.readers.dice.RollSettler` reports the three values once
   they have read the same for ``settle_s``, the still period counting from the first frame of
   the still tray: two readings agree and the tray did not move for ``settle_s``.

What comes out, from the calls it is told as an announcer (:meth:`DiceCameraSource.announce`):
the engine says whose turn it is and what step it is in (``turn``, ``rolled``, the summary's
``player`` and ``step``). A roll is expected in the active player's step ``choose`` (Fluxo do
Jogo 3, option 2) and again in ``assign`` (a re-read replaces the roll until two dice are
placed; docs/carnival.md, ruling 6). Only then does a settled tray become a
:class:`~companion.games.carnival.Roll` for the active player; at any other time the dice are
ignored (put on the tableau, pushed aside). A roll is three dice lying flat and still with
nothing over the tray: a hand over the felt (:func:`~companion.readers.dice_cover.tray_cover`,
asked on every reading) hides dice, so such a tray is no roll whatever the dice read, and the
table is told (:class:`HandOverTray`, "a hand is over the tray"). Three
dice with one read as ``"unknown"`` are still sent (the referee answers ``dice_unreadable``), and
``on_status`` says so; a tray of three where a die does not lie flat (``cocked``), or of any other
count, is no roll: the table is told what is wrong by a call of the dice camera itself
(:class:`DiceCocked`, "a die is cocked: roll it again"; :class:`DiceCount`, "I see four dice"),
given to ``on_call`` (the service's ``tell``: announced like a referee's call, not journaled),
and ``on_status`` says it in words.

Parts: a frame source that raises (unplugged, hung beyond its restarts) is reported once with
``on_part(False, detail)``; the source keeps trying every ``retry_s`` seconds (re-opening the
camera when given ``reopen``) and reports ``on_part(True, detail)`` when frames come back. A video
file or an image folder that has no more frames calls ``on_end(summary)`` once, e.g.
``"dice.avi: 240 frames, 3 rolls"``, and the source stops.

The tray: ``[dice] tray`` in the configuration (a pixel box; the die size then from ``[dice]
die_px_min/max``), or else the calibration file written by ``companion calibrate tray IMAGE
--corners ... --size-mm AxB`` (:data:`TRAY_FILE` in the calibration folder,
:mod:`companion.calibration_dir`): the tray's geometry
(:class:`~companion.readers.dice_tray.TrayGeometry`), from which the reader knows a die's size and
shape in pixels everywhere in the tray, scaled to the camera's frame size when it has the same
shape (a higher resolution gives more pixels per die). When the dice would be too small to read
in part of the tray, ``on_status`` says so at the start; when they are too small everywhere, the
start stops with that line. (picamera2's ScalerCrop of the tray's region alone is not built: a
higher resolution is asked for through ``[camera] width/height``.) Or else the whole frame. A tray outside the camera's frame is a
``ValueError`` of one line naming where the tray came from and the fix.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from companion.clock import Clock
from companion.events import Call, Observation, event_type
from companion.games.carnival import Roll
from companion.readers.dice import COCKED, UNKNOWN, DiceReader, DieReading, RollSettler
from companion.readers.dice_cover import CoverCheck, TrayCover
from companion.readers.dice_tray import MIN_FACE_PX, TrayGeometry, TrayGeometryError
from companion.sources import Emit
from companion.sources.reading_thread import ReadingThread
from companion.vision.frames import (
    Frame,
    FrameSource,
    FrameSourceError,
    open_frame_source,
)

__all__ = [
    "DiceCameraSource",
    "DiceCocked",
    "DiceCount",
    "HandOverTray",
    "tray_call",
    "dice_source_from_config",
    "TRAY_COMMAND",
    "TRAY_FILE",
    "THUMB_PX",
    "MOTION_LEVEL",
    "load_tray",
    "load_tray_geometry",
    "tray_toml",
    "dice_status",
]

log = logging.getLogger(__name__)

#: The tray calibration's file name in the calibration folder (``[calibration] dir``), where
#: ``companion calibrate tray`` writes the tray's box.
TRAY_FILE = Path("dice-tray.toml")
#: The command that writes :data:`TRAY_FILE`, as the messages that ask for it say it.
TRAY_COMMAND = 'companion calibrate tray IMAGE --corners "X,Y;X,Y;X,Y;X,Y" --size-mm AxB'
#: Longer side (px) of the shrunk grey tray the motion gate compares.
THUMB_PX = 80
#: Default motion threshold: largest grey-level change (0-255) of one pixel of the shrunk tray
#: that still counts as "still" (JPEG and sensor noise stay well below; a die moving by a
#: fraction of its side changes its pixels by several tens).
MOTION_LEVEL = 12.0
#: Dice in a Carnival roll (Fluxo do Jogo 3.2).
DICE = 3
#: The engine's steps in which a ``roll`` is taken (CarnivalReferee._roll: "choose", "assign").
ROLL_STEPS = ("choose", "assign")

_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def dice_status(readings: Sequence[DieReading], dice: int = DICE, covered: bool = False) -> str:
    """What is wrong with a settled tray, in words for the table; "" when it holds ``dice``
    readable dice or nothing at all.

    Args:
        readings: the reader's readings of one still tray.
        dice: dice in a roll.
        covered: a hand is over the tray (:func:`~companion.readers.dice_cover.tray_cover`).

    Returns:
        ``"a hand is over the tray: take it away"``, ``"I see four dice: roll three dice"``, ``"a
        die is cocked: roll it again"``, ``"a die cannot be read: roll it again"``, or "".
    """
    if covered:
        return "a hand is over the tray: take it away"
    n = len(readings)
    if n == 0:
        return ""
    cocked = sum(1 for r in readings if r.value == COCKED)
    if n == dice and cocked:
        return "a die is cocked: roll it again" if cocked == 1 else f"{_WORDS[cocked]} dice are cocked: roll them again"
    if n == dice:
        unread = sum(1 for r in readings if r.value == UNKNOWN)
        if not unread:
            return ""
        return "a die cannot be read: roll it again" if unread == 1 else f"{_WORDS[unread]} dice cannot be read: roll them again"
    word = _WORDS[n] if n < len(_WORDS) else str(n)
    return f"I see {word} {'die' if n == 1 else 'dice'}: roll {_WORDS[dice]} dice"


@event_type("dice_cocked")
@dataclasses.dataclass(frozen=True, slots=True)
class DiceCocked(Call):
    """A call of the dice camera: the tray holds the roll's dice but one or more does not lie
    flat (leaning on the wall or another die); the player rolls again. Not a referee's call
    (no rule changes), not journaled.

    Attributes:
        player: whose roll it is.
        count: how many dice are cocked (1 or more).
        several: ``count > 1`` (chooses the catalogue's sentence).
    """

    player: str = ""
    count: int = 1
    several: bool = False


@event_type("hand_over_tray")
@dataclasses.dataclass(frozen=True, slots=True)
class HandOverTray(Call):
    """A call of the dice camera: a hand (skin) is over the still tray, so dice may be hidden;
    the tray is no roll until it is taken away. Not a referee's call, not journaled.

    Attributes:
        player: whose roll it is.
    """

    player: str = ""


@event_type("dice_count")
@dataclasses.dataclass(frozen=True, slots=True)
class DiceCount(Call):
    """A call of the dice camera: the still tray holds another number of dice than a roll's.

    Attributes:
        player: whose roll it is.
        seen: dice seen in the tray (1 or more).
        needed: dice in a roll (Carnival: 3).
        one: ``seen == 1`` (chooses the catalogue's sentence).
    """

    player: str = ""
    seen: int = 0
    needed: int = DICE
    one: bool = False


def tray_call(t: float, player: str, readings: Sequence[DieReading], dice: int = DICE,
              covered: bool = False) -> Call | None:
    """The call that tells the table why a settled tray is no roll, or None when it is one
    (``dice`` dice, none cocked, nothing over the tray; unreadable dice go on to the referee) or
    empty.

    Args:
        t: session time (s). player: whose roll it is. readings: the tray's readings.
        dice: dice in a roll.
        covered: a hand is over the tray: :class:`HandOverTray` whatever the dice read.
    """
    if covered:
        return HandOverTray(t=t, player=player)
    n = len(readings)
    if n == 0:
        return None
    if n != dice:
        return DiceCount(t=t, player=player, seen=n, needed=dice, one=n == 1)
    cocked = sum(1 for r in readings if r.value == COCKED)
    if cocked:
        return DiceCocked(t=t, player=player, count=cocked, several=cocked > 1)
    return None


# ---------------------------------------------------------------------------- the tray file


def load_tray(path: str | Path) -> tuple[tuple[int, int, int, int], tuple[int, int] | None]:
    """The tray's box from a calibration file written by ``companion calibrate tray``.

    The file (TOML)::

        box = [90, 140, 545, 495]     # x0, y0, x1, y1: pixels of the camera frame
        image_size = [640, 640]       # width, height of the frame it was drawn on
        image = "tray.jpg"            # the photo it was drawn on (for the record)

    Args:
        path: the file.

    Returns:
        ``(box, image_size)``: box ``(x0, y0, x1, y1)`` whole pixels; image size ``(width,
        height)`` px, or None when the file does not say.

    Raises:
        ValueError: the file is missing, not TOML, or its ``box`` / ``image_size`` is ill-formed
            (the message names the file, the field and the fix).
    """
    p = Path(path)
    try:
        doc = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{p}: no such file (companion calibrate tray IMAGE --corners ... --size-mm AxB writes it)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{p}: cannot read the tray calibration ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{p}: not valid TOML ({exc}); write it again with companion calibrate tray") from None
    box = doc.get("box")
    if not (isinstance(box, list) and len(box) == 4 and all(isinstance(v, int) and not isinstance(v, bool) for v in box)
            and 0 <= box[0] < box[2] and 0 <= box[1] < box[3]):
        raise ValueError(f"{p}: box: expected [x0, y0, x1, y1] whole pixels with 0 <= x0 < x1 and 0 <= y0 < y1, "
                         f"got {box!r}")
    size = doc.get("image_size")
    if size is not None and not (isinstance(size, list) and len(size) == 2
                                 and all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in size)):
        raise ValueError(f"{p}: image_size: expected [width, height] in pixels, got {size!r}")
    return (box[0], box[1], box[2], box[3]), ((size[0], size[1]) if size else None)


def tray_toml(box: Sequence[int], image_size: Sequence[int], image: str = "") -> str:
    """The text of a tray calibration file (read back by :func:`load_tray`).

    Args:
        box: ``(x0, y0, x1, y1)`` whole pixels of the tray's floor.
        image_size: ``(width, height)`` px of the frame the box was drawn on.
        image: the photo's file name, recorded in the file.
    """
    x0, y0, x1, y1 = (int(v) for v in box)
    w, h = (int(v) for v in image_size)
    name = str(image).replace("\\", "\\\\").replace('"', '\\"')
    return (
        "# The dice tray's floor in the camera frame (companion calibrate tray).\n"
        "# The dice reader looks only inside box; a frame of another size needs a new calibration.\n"
        f"box = [{x0}, {y0}, {x1}, {y1}]    # x0, y0, x1, y1: pixels\n"
        f"image_size = [{w}, {h}]    # width, height: pixels of the frame it was drawn on\n"
        f'image = "{name}"\n'
    )


# ---------------------------------------------------------------------------- the source


class DiceCameraSource(ReadingThread):
    """A :class:`~companion.sources.Source` (``start``/``stop``) and an
    :class:`~companion.announcers.Announcer` (``announce``/``close``) that turns camera frames
    of the dice tray into Carnival ``roll`` observations.

    Wiring: the camera looks straight down on the dice tray, the whole tray in the frame, lit
    evenly (exposure locked: picamera2 does it after ``[camera] warmup_s``). Give the service
    this object both as a source and as an announcer, so that it hears whose turn it is.

    Args:
        frames: a frame source, or its spec (``"picamera2"``, ``"opencv:0"``,
            ``"opencv:FILE"``, ``"folder:PATH"``; see
            :func:`~companion.vision.frames.open_frame_source`).
        settings: the ``[dice]`` configuration section (``tray`` ``[x0, y0, x1, y1]`` px or
            ``[]``, ``die_px_min`` and ``die_px_max`` px, ``settle_s`` seconds); missing keys take
            the defaults ``[]``, 22, 70, 0.5.
        tray: ``(x0, y0, x1, y1)`` px; overrides ``settings["tray"]`` (the calibration file's).
        tray_from: where the tray came from, for messages (``"[dice] tray"``, a file name).
        reader: a ready :class:`~companion.readers.dice.DiceReader` (its own tray and die size
            are then used); default: one made from ``settings`` with the packaged face model.
        geometry: the tray's calibration (:class:`~companion.readers.dice_tray.TrayGeometry`):
            the reader then takes a die's size from it (``die_px_min/max`` unused).
        frame_period_s: the thread reads at most one frame per this many seconds (0 = as fast
            as frames come).
        motion_level: grey levels (0-255) of change on the shrunk tray above which it moves.
        retry_s: seconds between attempts to get frames again after the camera was lost.
        reopen: makes a new frame source after a loss (a camera that was unplugged); None =
            keep reading the same one.
        on_status: ``on_status(text)`` when a settled tray is not a roll while one is expected
            (:func:`dice_status`), once per change.
        on_part: ``on_part(ok, detail)``: ``False`` once when the frames stop (the source
            raised), ``True`` when they come back.
        on_end: ``on_end(summary)`` once when a video file or folder has no more frames.
        on_call: ``on_call(call)`` with a :class:`DiceCocked` or :class:`DiceCount` when a
            settled tray is no roll while one is expected (:func:`tray_call`), once per tray.

    Raises:
        ValueError: a bad setting (naming it), or the face model cannot be loaded.
        FrameSourceError: the camera cannot be opened (``frames`` given as a spec).

    Example::

        dice = DiceCameraSource("opencv:dice.avi", {"tray": [90, 140, 545, 495]},
                                on_status=print, on_end=print)
        service = Service(CarnivalReferee(), clock, sources=[dice], announcers=[dice, console])
    """

    LABEL = "dice camera"

    def __init__(self, frames: FrameSource | str, settings: Mapping[str, Any] | None = None, *,
                 tray: Sequence[int] | None = None, tray_from: str = "[dice] tray",
                 reader: DiceReader | None = None, geometry: TrayGeometry | None = None,
                 frame_period_s: float = 0.0,
                 motion_level: float = MOTION_LEVEL, retry_s: float = 1.0,
                 reopen: Callable[[], FrameSource] | None = None,
                 on_status: Callable[[str], None] | None = None,
                 on_part: Callable[[bool, str], None] | None = None,
                 on_end: Callable[[str], None] | None = None,
                 on_call: Callable[[Call], None] | None = None):
        s = dict(settings or {})
        settle_s = float(s.get("settle_s", 0.5))
        if not 0 <= settle_s <= 10:
            raise ValueError(f"[dice] settle_s: expected seconds from 0 to 10, got {settle_s}")
        if not motion_level > 0:
            raise ValueError(f"motion_level: expected grey levels > 0, got {motion_level}")
        if reader is None:
            box = tuple(tray) if tray is not None else (tuple(s.get("tray") or ()) or None)
            try:
                reader = DiceReader(tray=box, die_px=(s.get("die_px_min", 22.0), s.get("die_px_max", 70.0)),
                                    geometry=geometry)
            except FileNotFoundError as exc:
                raise ValueError(f"the dice face model: {exc}") from None
            except ValueError as exc:
                raise ValueError(f"{tray_from if 'tray' in str(exc) else '[dice]'}: {exc}") from None
        self.reader = reader
        self.tray_from = tray_from
        self.frames: FrameSource = open_frame_source(frames) if isinstance(frames, str) else frames
        self.settle_s = settle_s
        self.frame_period_s = float(frame_period_s)
        self.motion_level = float(motion_level)
        self.retry_s = float(retry_s)
        self.reopen = reopen
        self.on_status, self.on_part, self.on_end, self.on_call = on_status, on_part, on_end, on_call
        self.settler = RollSettler(settle_s, DICE)
        # counters, for the summary and the views
        self.frames_read = 0
        self.readings_made = 0
        self.rolls = 0
        self.status = ""
        self.last_readings: list[DieReading] = []
        #: what covers the tray at the last reading (:func:`~companion.readers.dice_cover.tray_cover`)
        self.last_cover: TrayCover = TrayCover(False)
        self._cover: CoverCheck | None = None  # made at the first reading (the reader's tray and die size)
        #: ``(t_s, frame H x W x 3 uint8 BGR, [DieReading])`` of the last frame read, or None; the
        #: readings are [] while the tray moves (the web page's camera view draws it when asked).
        self.latest: tuple[float, np.ndarray, list[DieReading]] | None = None
        # what the referee said (announce, from the service's thread)
        self._lock = threading.Lock()
        self._player: str | None = None
        self._step: str | None = None
        self._phase = "waiting"
        self._hands: dict[str, int] = {}
        # the tray between frames
        self._checked_shape: tuple[int, ...] | None = None
        self._still_ref: np.ndarray | None = None  # shrunk tray of the first still frame
        self._still_since: float | None = None  # its time (s); None while moving
        self._still_confirmed = False
        self._last_read_t: float | None = None
        self._tray_key: tuple | None = None
        self._tray_since = 0.0
        self._tray_done = False
        self._pending: Frame | None = None  # a frame read ahead (dice_source_from_config)
        self._ended = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ what the referee says
    def announce(self, call: Call, summary: Mapping[str, Any]) -> None:
        """Learn whose turn it is and whether a roll may be taken, from one referee call and the
        referee's summary after it (``phase``, ``player``, ``step``; without them, from the call
        alone). Called on the service's thread; never blocks."""
        with self._lock:
            if summary and "step" in summary and "player" in summary:
                self._phase = str(summary.get("phase", "playing"))
                self._player = summary.get("player")
                self._step = summary.get("step")
                return
            kind = call.type
            if kind == "turn":
                self._phase, self._player, self._step = "playing", getattr(call, "player", None), getattr(call, "step", None)
                self._hands[str(self._player)] = int(getattr(call, "hand", 0))
            elif kind == "discard_refilled":
                hand = self._hands.get(str(self._player), 0)
                self._step = "discard_down" if hand > 6 else "choose"  # Fluxo do Jogo 1 -> 2 or 3
            elif kind == "discarded":
                self._step = "choose"
            elif kind == "wild_exchanged":
                self._step = "build"
            elif kind == "rolled":
                self._step = "actions" if getattr(call, "triple", False) else "assign"
            elif kind in ("dice_assigned", "action_declared"):
                self._step = "actions"
            elif kind in ("built", "turn_ended"):
                self._step = "build"
            elif kind == "winner":
                self._phase, self._step = "over", None

    def expected(self) -> tuple[str, bool]:
        """``(active player, a roll may be taken now)``; ``("", False)`` before the game."""
        with self._lock:
            ok = self._phase == "playing" and self._player is not None and self._step in ROLL_STEPS
            return (str(self._player) if self._player is not None else "", ok)

    def close(self) -> None:
        """The announcer's end: stops the source (safe to call twice)."""
        self.stop()

    # ------------------------------------------------------------------ one frame
    def check_tray(self, shape: Sequence[int]) -> None:
        """Check that the tray lies inside frames of ``shape`` (``H, W[, 3]``).

        Raises:
            ValueError: one line naming the tray, where it came from, the frame size and the fix.
        """
        tray = self.reader.tray
        if tray is None:
            return
        h, w = int(shape[0]), int(shape[1])
        x0, y0, x1, y1 = tray
        if x1 > w or y1 > h:
            raise ValueError(
                f"the dice tray {list(tray)} ({self.tray_from}) lies outside the {w} x {h} px camera frame: "
                f"calibrate it again on a frame of this camera (companion calibrate tray IMAGE --corners ...) "
                f"or set [dice] tray"
            )

    def _thumb(self, image: np.ndarray) -> np.ndarray:
        import cv2

        tray = self.reader.tray
        roi = image if tray is None else image[tray[1]:tray[3], tray[0]:tray[2]]
        h, w = roi.shape[:2]
        scale = THUMB_PX / max(h, w)
        grey = cv2.cvtColor(roi, cv2.COLOR_BGR2GRAY)
        size = (max(1, int(round(w * scale))), max(1, int(round(h * scale))))
        return cv2.resize(grey, size, interpolation=cv2.INTER_AREA).astype(np.int16)

    def _say(self, text: str) -> None:
        if text and text != self.status:
            log.info("dice: %s", text)
            if self.on_status is not None:
                self.on_status(text)
        self.status = text

    def step(self, t: float, frame: Frame | np.ndarray) -> list[Observation]:
        """One frame at session time ``t`` (seconds): the observations it completes.

        Args:
            t: the frame's session time, seconds (never goes backwards).
            frame: a :class:`~companion.vision.frames.Frame` or its image, ``H x W x 3 uint8``,
                BGR.

        Returns:
            ``[Roll(t, player, dice)]`` when the tray has just settled on three dice while a roll
            is expected; else ``[]``.

        Raises:
            ValueError: the frame is not ``H x W x 3 uint8`` or the tray lies outside it.
        """
        image = frame.image if isinstance(frame, Frame) else frame
        if not (isinstance(image, np.ndarray) and image.ndim == 3 and image.shape[2] == 3 and image.dtype == np.uint8):
            raise ValueError(f"frame: expected an H x W x 3 uint8 BGR image, got {getattr(image, 'shape', type(image).__name__)}")
        if image.shape != self._checked_shape:
            self.check_tray(image.shape)
            self._checked_shape = image.shape
        self.frames_read += 1
        self.latest = (t, image, [])  # the tray moves until shown still below
        thumb = self._thumb(image)
        ref = self._still_ref
        if ref is None or ref.shape != thumb.shape or int(np.abs(thumb - ref).max()) > self.motion_level:
            # The tray moves (or this is the first frame): this frame is the new reference; the
            # still period, if it is one, starts here.
            moved = ref is not None
            self._still_ref, self._still_since, self._still_confirmed = thumb, t, False
            self._last_read_t = None
            if moved:
                self.settler.update(t, [])  # a move is a new throw: the same dice may report again
                self._tray_key, self._tray_done = None, False
            return []
        self.latest = (t, image, self.last_readings)  # still: the last reading is this tray's
        if self._tray_done:
            return []  # settled and still: nothing new to read
        since = self._still_since if self._still_since is not None else t
        if self._last_read_t is None:
            # The first reading of a still tray is stamped with the time the tray became still.
            read_t: float | None = since
        elif t - self._last_read_t >= self.settle_s / 2 and t < self._tray_since + self.settle_s:
            read_t = t  # a second look before the settle time is up: the reader must agree
        else:
            read_t = None  # the tray is as it was read (the motion gate says so)
        if read_t is not None:
            self.last_readings = self.reader.read(image)
            if self._cover is None:
                self._cover = CoverCheck(self.reader.tray, getattr(self.reader, "geometry", None),
                                         getattr(self.reader, "die_px", None))
            self.last_cover = self._cover.check(image)
            self.latest = (t, image, self.last_readings)
            self.readings_made += 1
            self._last_read_t = read_t
        return self._settle(read_t if read_t is not None else t, t, self.last_readings)

    def _settle(self, read_t: float, t: float, readings: list[DieReading]) -> list[Observation]:
        covered = self.last_cover.covered
        key = (covered, len(readings), tuple(sorted(str(r.value) for r in readings)))
        if key != self._tray_key:
            self._tray_key, self._tray_since, self._tray_done = key, read_t, False
        settled = not self._tray_done and read_t - self._tray_since >= self.settle_s
        # a hand over the tray may hide dice: what shows is no roll (the settler starts again)
        values = self.settler.update(read_t, [] if covered else readings)
        player, ok = self.expected()
        out: list[Observation] = []
        if settled:
            self._tray_done = True
            if ok:
                self._say(dice_status(readings, covered=covered))
                call = tray_call(t, player, readings, covered=covered)
                if call is not None:
                    log.info("dice: %s", call.TYPE)
                    if self.on_call is not None:
                        self.on_call(call)
        if values is not None:
            if ok:
                self.rolls += 1
                out.append(Roll(t=t, player=player, dice=tuple(values)))
                log.info("dice: %s rolled %s", player, list(values))
            else:
                log.debug("dice settled on %s but no roll is expected now", list(values))
        return out

    # ------------------------------------------------------------------ Source protocol
    def _part(self, ok: bool, detail: str) -> None:
        log.log(logging.INFO if ok else logging.WARNING, "dice camera: %s", detail)
        if self.on_part is not None:
            self.on_part(ok, detail)

    def _name(self) -> str:
        src = self.frames
        for attr in ("target", "path"):
            v = getattr(src, attr, None)
            if isinstance(v, (str, Path)) and str(v):
                return Path(v).name or str(v)
        return str(getattr(src, "name", "camera"))

    def summary(self) -> str:
        """One line: ``"dice.avi: 240 frames, 3 rolls"``."""
        return (f"{self._name()}: {self.frames_read} frame{'s' if self.frames_read != 1 else ''}, "
                f"{self.rolls} roll{'s' if self.rolls != 1 else ''}")

    def _read(self) -> Frame | None:
        if self._pending is not None:
            frame, self._pending = self._pending, None
            return frame
        return self.frames.read()

    def start(self, emit: Emit, clock: Clock) -> None:
        """Read frames on a thread, stamp them with ``clock``'s session time and ``emit`` the
        rolls. Nothing raises once started: losses go to ``on_part``, the end to ``on_end``."""
        if self._thread is not None:
            return
        self._stop.clear()

        def loop() -> None:
            next_t: float | None = clock.now()
            lost = False
            while not self._stop.is_set():
                next_t = self._pace(clock, next_t)
                if next_t is None:
                    break
                try:
                    frame = self._read()
                except Exception as exc:  # CameraLost, FrameSourceError, a driver's own error
                    if not lost:
                        lost = True
                        text = str(exc) or type(exc).__name__
                        self._part(False, text if text.startswith("camera lost") else f"camera lost: {self._name()}: {text}")
                    if clock.wait(self._stop, clock.now() + self.retry_s):
                        break
                    if self.reopen is not None:
                        try:
                            self.frames.close()
                        except Exception as close_exc:
                            log.debug("dice camera: close: %s", close_exc)
                        try:
                            self.frames = self.reopen()
                        except Exception as open_exc:
                            log.debug("dice camera: reopen: %s", open_exc)
                    continue
                if frame is None:
                    self._finish()
                    break
                if lost:
                    lost = False
                    self._part(True, f"camera back: {self._name()}")
                try:
                    observations = self.step(clock.now(), frame)
                except ValueError as exc:  # a tray outside a frame of a new size
                    self._part(False, str(exc))
                    break
                except Exception as exc:  # a reader bug must not kill the service
                    log.exception("dice reader failed")
                    self._part(False, f"dice reader error: {exc}")
                    break
                for obs in observations:
                    emit(obs)

        self._thread = threading.Thread(target=loop, name="dice-camera", daemon=True)
        self._thread.start()

    def _finish(self) -> None:
        if self._ended:
            return
        self._ended = True
        text = self.summary()
        log.info("dice camera: end of frames: %s", text)
        if self.on_end is not None:
            self.on_end(text)


def _resolve_tray(config: Any, tray_file: str | Path) -> tuple[tuple[int, int, int, int] | None, str,
                                                              tuple[int, int] | None, TrayGeometry | None]:
    """``(box, where it came from, calibrated frame size, geometry)``: ``[dice] tray`` when set
    (a box, no geometry), else the calibration file when it exists (its box and, when it has a
    ``[geometry]``, the tray's geometry), else ``(None, "whole frame", None, None)``."""
    configured = list(config["dice"]["tray"] or [])
    if configured:
        return (configured[0], configured[1], configured[2], configured[3]), "[dice] tray", None, None
    path = Path(tray_file)
    if path.is_file():
        box, size = load_tray(path)
        return box, str(path), size, TrayGeometry.from_toml(path)
    return None, "whole frame", None, None


def load_tray_geometry(path: str | Path, image_size: Sequence[int] | None = None) -> tuple[
        tuple[int, int, int, int], TrayGeometry | None]:
    """The tray calibration of ``path`` for frames of ``image_size`` (default the calibrated size):
    ``(box, geometry or None)``; a geometry is scaled to a frame of the same shape and another
    size (more pixels per die), the box made again from it.

    Raises:
        ValueError: a missing or ill-formed file, frames of another shape (one line naming the
            file and the fix).
    """
    box, size = load_tray(path)
    geometry = TrayGeometry.from_toml(path)
    if image_size is not None:
        w, h = (int(v) for v in image_size)
        if geometry is not None:
            try:
                geometry = geometry.for_size((w, h))
            except TrayGeometryError as exc:
                raise ValueError(f"{path}: {exc}") from None
            box = geometry.roi()
        elif size is not None and tuple(size) != (w, h):
            raise ValueError(
                f"{path}: the tray was drawn on {size[0]} x {size[1]} px frames but the camera gives {w} x {h}: "
                f"calibrate it again on a frame of this camera (companion calibrate tray IMAGE --corners ...)")
    return box, geometry


def dice_source_from_config(config: Any, spec: str | None = None, clock: Callable[[], float] | None = None,
                            on_status: Callable[[str], None] | None = None,
                            on_part: Callable[[bool, str], None] | None = None,
                            on_end: Callable[[str], None] | None = None,
                            tray_file: str | Path | None = None,
                            on_call: Callable[[Call], None] | None = None) -> DiceCameraSource:
    """Build the dice camera from the configuration: ``[camera]`` (``source``, ``width``,
    ``height``, ``warmup_s``, ``frame_period_s``) and ``[dice]`` (``tray``, ``die_px_min``,
    ``die_px_max``, ``settle_s``).

    The camera is opened and its first frame read (kept for the source), so that a tray outside
    the frame stops the start here, with one line.

    Args:
        config: the loaded configuration.
        spec: overrides ``[camera] source`` (``companion run --camera ...``); ``auto`` means
            picamera2. ``sim`` is refused: the simulated camera renders the Carrousel table, not
            dice (the simulated Carnival table is ``companion/sim/carnival.py``).
        clock: timestamps of the frames (default ``time.monotonic``).
        on_status, on_part, on_end, on_call: see :class:`DiceCameraSource`.
        tray_file: the tray calibration, used when ``[dice] tray`` is ``[]`` and the file exists
            (default :data:`TRAY_FILE` in the calibration folder).

    Raises:
        ValueError: a bad spec, tray, tray file or setting, a tray outside the frame, a camera
            that gives no frame (each one line naming it and the fix).
        FrameSourceError: the camera cannot be opened.
    """
    import time

    cam = config["camera"]
    spec = spec or cam["source"]
    if spec == "auto":
        spec = "picamera2"
    if spec.startswith("sim"):
        raise ValueError(
            f"camera {spec!r}: the simulated camera renders the Carrousel table, not a dice tray; give the dice "
            f"camera ([camera] source = picamera2, opencv:0, opencv:FILE or folder:PATH) or play Carnival on the "
            f"simulated table (--table sim)")
    kwargs: dict[str, Any] = {"clock": clock or time.monotonic}
    if spec == "picamera2":
        kwargs.update(size=(cam["width"], cam["height"]), warmup_s=cam["warmup_s"])
    elif spec.startswith("opencv:") and spec[7:].isdigit():
        kwargs.update(size=(cam["width"], cam["height"]))
    if tray_file is None:
        from companion.calibration_dir import calibration_path

        tray_file = calibration_path(TRAY_FILE.name, config)
    box, where, size, geometry = _resolve_tray(config, tray_file)
    if box is None:
        log.warning("dice: no tray calibration (%s): reading the whole frame; "
                    "%s writes it", tray_file, TRAY_COMMAND)

    # A live camera (not a video file or a folder) is opened again after a loss.
    live = spec == "picamera2" or (spec.startswith("opencv:") and not Path(spec[7:]).is_file())

    def reopen() -> FrameSource:
        return open_frame_source(spec, **kwargs)

    frames = reopen()
    try:
        first = frames.read()
        if first is None:
            raise ValueError(f"camera {spec!r}: no frame at all (an empty video file or folder?)")
        h, w = first.image.shape[:2]
        if geometry is not None:
            # The geometry holds for this camera at any size of the same shape: more pixels per
            # die at a higher resolution ([camera] width/height).
            try:
                geometry = geometry.for_size((w, h))
            except TrayGeometryError as exc:
                raise ValueError(f"{where}: {exc}") from None
            box, size = geometry.roi(), (w, h)
            small = geometry.too_small()
            if small and geometry.face_px_range()[1] < MIN_FACE_PX:
                raise ValueError(f"{where}: {small}")
            if small:
                log.warning("dice: %s", small)
                if on_status is not None:
                    on_status(small)
        source = DiceCameraSource(frames, config["dice"], tray=box, tray_from=where, geometry=geometry,
                                  frame_period_s=cam["frame_period_s"], on_status=on_status, on_part=on_part,
                                  on_end=on_end, on_call=on_call, reopen=reopen if live else None)
        if size is not None and tuple(size) != (w, h):
            raise ValueError(
                f"{where}: the tray was drawn on {size[0]} x {size[1]} px frames but the camera gives {w} x {h}: "
                f"calibrate it again on a frame of this camera (companion calibrate tray IMAGE --corners "
                f"\"X,Y;X,Y;X,Y;X,Y\" --size-mm AxB)")
        source.check_tray(first.image.shape)
    except (ValueError, FrameSourceError):
        frames.close()
        raise
    source._pending = first
    return source
