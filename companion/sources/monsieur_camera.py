"""The camera as a source of Monsieur Carrousel observations.

Frames (any :mod:`companion.vision.frames` source) go through the
:class:`~companion.vision.monsieur.MonsieurReader`; what it reads passes a settle time before it
becomes an observation of the game's vocabulary (``companion.games.monsieur_carrousel``):

* ``die_rolled``: after a roll was asked (``turn``, ``roll_again``, ``twins_help``), the die
  must leave its rest (picked up, rolling, under a hand, tumbling in sight: no colour, or
  another colour than the one it lay showing, on two frames in a row or more, spanning
  ``settle_s / 2`` at least; a frame of noise is not a roll), then show one top colour for
  ``settle_s``; a die still without a colour ``die_unread_s`` after it left (cocked on an edge,
  out of the board) is ``die_rolled`` ``unknown`` (the referee asks for another roll), once
  until the die is seen again (a die that stays unseen is not asked for again and again). A
  roll is watched only while the referee waits for one (its phase ``roll`` in the calls'
  summary): a roll entered by hand ends the camera's watch.
* ``die_unseen`` (a call told to the table, :class:`DieUnseen`): a roll was asked and
  ``die_stall_s`` of session time later none has been read (the die out of sight: off the
  table, under the roof, in a pocket; a die that never comes to rest in view; a die lying as
  it lay): told once per roll asked, it says what to do (put the die on the board where the
  camera sees it, press the die button, or enter the colour: the web page's entries or
  ``companion enter monsieur-carrousel die_rolled colour=C``); the camera goes on watching, so a
  die then read is the roll. The wait is held while the camera is frozen.
* a frozen camera (the reader's ``"camera frozen: ..."``, the same frame over and over) gives
  nothing: no roll, no seat, no spin is read from a picture that does not change; the state
  goes to ``on_status`` (the kit tells the table once that the camera is lost).
* ``kid_seated``: a seat the game has no kid on reads ``kid`` for ``settle_s`` while a seat
  was asked for (``seat_kid``), the carousel at rest.
* ``seat_unseen`` (a call told to the table, :class:`SeatUnseen`): a seat was asked for and no
  kid has been seen seated ``seat_unseen_s`` after, while the camera cannot read some seats
  (the roof hides them, a hand, the board out of sight: unread for ``settle_s`` in a row, not
  a frame of noise); told once per seat asked, it says how
  to enter the seat (the web page's entries or ``companion enter monsieur-carrousel kid_seated
  seat=N``); the referee goes on waiting.
* ``seats_seen``: once every seat has been read ``kid`` or ``empty`` (a seat hidden now keeps
  its last reading), each change of the set of occupied seats.
* ``spin_started`` / ``spin_stopped`` (with ``spins=True``: no encoder): the roof marker moving
  or lost then still for the settle time (:class:`~companion.rotation.camera_spin.CameraSpinTracker`);
  the full-turn rule is judged on the turns counted when the camera followed the marker;
  when it could not, the kids are asked (:class:`FullTurnAsked`, "did the carousel turn all the
  way round?", answered with YES / NO through :meth:`MonsieurCameraSource.take_answer`), or,
  with nobody to ask, the stop is ``uncertain`` (the referee asks for the spin again).
* with an encoder (``spins=False``) the camera's rests go to ``on_rest(t, angle_deg)``
  (:class:`~companion.rotation.camera_zero.CameraZero`: the encoder's zero and the slip check).

The source listens to the referee's calls (``announce``) to know what is asked, as the kids do.
It keeps ``latest = (t_s, frame, reading)`` of the last frame read (the web page's camera view
draws it with :func:`companion.vision.monsieur.draw_overlay`). Problems are reported through
``on_status(text)`` once per change (``"camera lost: ..."``, ``"board not visible: ..."``,
``"camera: end of frames"``, ``"board visible"``); nothing here raises once started.

Angles: the reader's carousel angle is the disc zero mark's board angle, the convention of the
referee's ``spin_stopped.angle_deg``; :func:`check_same_table` refuses a geometry file and a
layouts file that put the finger or the zones in different places.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable
from typing import Any

from companion.clock import Clock
from companion.events import Call, Observation, event_type
from companion.games.monsieur_carrousel import (
    DieRolled,
    KidSeated,
    SeatsSeen,
    SpinStarted,
    SpinStopped,
)
from companion.rotation.camera_spin import CameraSpinTracker
from companion.sources import Emit
from companion.sources.reading_thread import ReadingThread
from companion.vision.colour import UNKNOWN, Stabiliser
from companion.vision.frames import (
    CameraLost,
    FrameSource,
    FrameSourceError,
    open_frame_source,
)

__all__ = ["DieUnseen", "FullTurnAsked", "MonsieurCameraSource", "SeatUnseen", "check_same_table",
           "geometry_for_layout", "monsieur_camera_from_config"]

log = logging.getLogger(__name__)


@event_type("full_turn_asked")
@dataclasses.dataclass(frozen=True, slots=True)
class FullTurnAsked(Call):
    """A call of the service: the camera lost the roof marker during the spin, so it cannot
    count the turns; the kids are asked whether the carousel turned all the way round (YES/NO).

    Attributes:
        part: the turning part in the players' words (``"carousel"``).
    """

    part: str = "carousel"


@event_type("seat_unseen")
@dataclasses.dataclass(frozen=True, slots=True)
class SeatUnseen(Call):
    """A call of the service: a kid was to be seated, and ``seat_unseen_s`` later the camera
    has seen no kid seated while it cannot read some seats (the roof hides them); the table is
    told to enter the seat itself (the web page's entries, or ``companion enter
    monsieur-carrousel kid_seated seat=N``). Not for the YES/NO buttons.

    Attributes:
        hidden: the seats (the referee's seat numbers, 0-based) the camera cannot read, as
            text (``"3, 4, 5"``).
    """

    hidden: str = ""


@event_type("die_unseen")
@dataclasses.dataclass(frozen=True, slots=True)
class DieUnseen(Call):
    """A call of the service: a roll was asked and ``die_stall_s`` later the camera has read
    none; the table is told what to do: put the die on the board where the camera sees it (and
    let it lie), press the electronic die button, or enter the colour (the web page's entries,
    or ``companion enter monsieur-carrousel die_rolled colour=C``). Told once per roll asked.

    Attributes:
        player: whose roll it is.
        reason: ``"unseen"`` (no colour read for ``die_unread_s`` or more: the die off the
            table, under the roof, in a pocket), ``"moving"`` (it left its rest and is seen,
            never still: tumbling, held, played with) or ``"still"`` (it lies as it lay when
            the roll was asked: no roll seen).
    """

    player: str = ""
    reason: str = "unseen"


def geometry_for_layout(geometry: Any, layout: Any) -> Any:
    """The table's geometry with the seat colours of the disc side in play (``layout``: a
    :class:`~companion.games.monsieur_carrousel.Layout`): the seats' print is the disc's."""
    return dataclasses.replace(geometry, seat_colours=tuple(s.colour for s in layout.seats))


def check_same_table(geometry: Any, table: Any) -> None:
    """The camera's geometry and the referee's table must describe one board.

    Args:
        geometry: the :class:`~companion.vision.monsieur_geometry.MonsieurGeometry`.
        table: the referee's :class:`~companion.games.monsieur_carrousel.TableData`.

    Raises:
        ValueError: the finger or the sun zone differ by more than half a degree, or a seat's
            disc angle differs (the message names both files and the fields).
    """
    def differ(a: float, b: float) -> bool:
        return abs((a - b + 180.0) % 360.0 - 180.0) > 0.5

    board = table.board
    src = getattr(table, "source", "monsieur_carrousel.toml")
    for what, a, b in (("finger_deg", geometry.finger_deg, board.finger_deg),
                       ("sun_from_deg", geometry.sun_from_deg, board.sun_from_deg),
                       ("sun_to_deg", geometry.sun_to_deg, board.sun_to_deg)):
        if differ(a, b):
            raise ValueError(f"monsieur-board.toml has {what} = {a:g} but {src} [board] has {b:g}: the camera and "
                             f"the referee must see one board; make the two files agree")
    for layout in table.layouts.values():
        for s in layout.seats:
            if differ(s.angle_deg, geometry.seat_disc_angle(s.index)):
                raise ValueError(f"{src} layout {layout.name} seat {s.index} is at {s.angle_deg:g} deg on the disc but "
                                 f"monsieur-board.toml puts it at {geometry.seat_disc_angle(s.index):g}: make them agree")


class MonsieurCameraSource(ReadingThread):
    """A :class:`companion.sources.Source` (and an announcer of the referee's calls) that
    watches the Monsieur Carrousel table.

    Args:
        frames: a frame source, or its spec (see :func:`~companion.vision.frames.open_frame_source`).
        reader: the :class:`~companion.vision.monsieur.MonsieurReader`.
        settle_s: seconds a reading must stay the same before it is reported.
        frame_period_s: at most one frame per this many seconds on the reading thread (0 = as
            fast as frames come).
        on_status: called with a short text when the camera's state changes.
        spins: report spins from the camera (no encoder); False: only ``on_rest``.
        ask: ``ask(call)`` tells the table a :class:`FullTurnAsked` question (``Service.tell``);
            None: a spin the camera could not follow stops ``uncertain``.
        on_rest: ``on_rest(t_s, angle_deg)``: the carousel seen at rest (the first time and
            after every spin).
        on_frame: ``on_frame(t_s)`` after every frame read (the camera-zero's timeout).
        die_unread_s: seconds after the die left the camera's sight without a colour read before
            ``die_rolled unknown``.
        spin_tracker: the :class:`CameraSpinTracker` (default: ``settle_s``, 2 degrees still).
        seat_unseen_s: seconds of session time after a seat was asked (``seat_kid``) with no
            kid seen seated, while some seats read unknown, before :class:`SeatUnseen` is told
            through ``ask`` (once per seat asked; nothing with ``ask`` None).
        die_stall_s: seconds of session time after a roll was asked (from the first frame
            after the ask; frozen frames start it again) with no roll read before
            :class:`DieUnseen` is told through ``ask`` (once per roll asked; nothing with
            ``ask`` None).

    Raises:
        ValueError: a bad spec. FrameSourceError: the camera cannot be opened.
    """

    LABEL = "monsieur camera"

    def __init__(self, frames: FrameSource | str, reader: Any, settle_s: float = 0.5, frame_period_s: float = 0.0,
                 on_status: Callable[[str], None] | None = None, spins: bool = True,
                 ask: Callable[[Call], None] | None = None,
                 on_rest: Callable[[float, float], Any] | None = None,
                 on_frame: Callable[[float], Any] | None = None, die_unread_s: float = 4.0,
                 spin_tracker: CameraSpinTracker | None = None, seat_unseen_s: float = 15.0,
                 die_stall_s: float = 15.0):
        self.frames = open_frame_source(frames) if isinstance(frames, str) else frames
        self.reader = reader
        self.settle_s = float(settle_s)
        self.frame_period_s = float(frame_period_s)
        self.on_status = on_status
        self.spins = spins
        self.ask = ask
        self.on_rest = on_rest
        self.on_frame = on_frame
        self.die_unread_s = float(die_unread_s)
        self.seat_unseen_s = float(seat_unseen_s)
        self.die_stall_s = float(die_stall_s)
        self.spin_tracker = spin_tracker or CameraSpinTracker(settle_s=settle_s)
        n = reader.geometry.n_seats
        self._seat_stab = [Stabiliser[str](settle_s) for _ in range(n)]
        self._die_stab = Stabiliser[str](settle_s)
        self.seats_known: list[str] = [UNKNOWN] * n  # the last kid / empty read of each seat
        self.game_seats: set[int] = set()  # seats the referee has a kid on
        self._reported: set[int] = set()  # seats reported kid_seated, not yet confirmed
        self._seat_asked: tuple[int, ...] | None = None
        self._seat_asked_t: float | None = None  # session time of the seat asked (its first frame)
        self._unseen_told = False  # SeatUnseen told for the seat asked
        self._hidden: tuple[int, ...] = ()  # seats unread for settle_s in a row
        self._unread_since: list[float | None] = [None] * n  # since when each seat reads unknown
        self._roll_asked = False
        self._die_left = False
        self._die_unread_since: float | None = None
        self._die_gone_since: float | None = None  # since when the die reads no colour
        self._die_rest: str | None = None  # the colour the die last lay showing (settled)
        self._die_away_since: float | None = None  # since when it reads other than its rest
        self._die_away_frames = 0  # frames in a row other than its rest (no colour, another)
        self._die_seen_t: float | None = None  # session time of the last colour read
        self._unread_told = False  # die_rolled unknown sent; the die not seen since
        self._roll_asked_t = float("-inf")  # session time (s) of the last ask for a roll
        self._roll_player = ""  # whose roll is asked
        self._stall_from: float | None = None  # session time the roll's wait is counted from
        self._stall_told = False  # DieUnseen told for the roll asked
        self._seen_emitted: tuple[int, ...] | None = None
        self._pending_turn: Any = None  # the stop awaiting the kids' answer
        self._rested = False
        self._lock = threading.Lock()
        self.status = ""
        self.frames_read = 0
        #: ``(t_s, frame H x W x 3 uint8 BGR, MonsieurReading)`` of the last frame read, or None
        #: (the web page's camera view draws it when a page asks; the frame as read, no copy).
        self.latest: tuple[float, Any, Any] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ the referee's calls
    def announce(self, call: Call, summary: Any = None) -> None:
        """Hear a call (Announcer protocol): what the game asks for next."""
        kind = call.type
        with self._lock:
            phase = summary.get("phase") if isinstance(summary, dict) else None
            if phase is not None and phase != "roll":
                self._roll_asked = False  # the roll was made (entered by hand) or is not wanted
            if phase is not None and phase != "seat":
                self._seat_asked = None
            if kind == "game_started":
                self.game_seats = set()
                self._reported = set()
            elif kind in ("turn", "roll_again", "twins_help"):
                self._roll_asked = True
                self._roll_asked_t = float(call.t)
                self._roll_player = str(getattr(call, "player", "") or "")
                self._die_left = False
                self._die_unread_since = None
                self._stall_from, self._stall_told = None, False
            elif kind == "seat_kid":
                self._seat_asked = tuple(call.seats)  # type: ignore[attr-defined]
                self._seat_asked_t = None
                self._unseen_told = False
            elif kind == "kid_seated":
                self.game_seats.add(int(call.seat))  # type: ignore[attr-defined]
                self._reported.discard(int(call.seat))  # type: ignore[attr-defined]
                self._seat_asked = None
            elif kind == "wrong_seat":
                self._reported.discard(int(call.seat))  # type: ignore[attr-defined]

    def close(self) -> None:
        """Nothing to release as an announcer (the frames are closed by :meth:`stop`)."""

    def resume(self, state: Any) -> None:
        """Continue a journaled game: the kids the referee has on seats and what its phase
        waits for (a roll, a seat) from the engine's ``state``."""
        with self._lock:
            self.game_seats = {i for i, kid in enumerate(state.seats) if kid is not None}
            self._reported = set()
            self._roll_asked = state.phase == "roll"
            self._roll_player = str(state.player or "") if self._roll_asked else ""
            self._die_left = False
            self._stall_from, self._stall_told = None, False
            self._seat_asked = tuple(state.choices) if state.phase == "seat" else None
            self._seat_asked_t = None
            self._unseen_told = False

    # ------------------------------------------------------------------ one frame
    def step(self, t: float) -> list[Observation] | None:
        """Read one frame at session time ``t`` (s); return the observations it completes, or
        None when the frames have ended or the camera is lost."""
        try:
            frame = self.frames.read()
        except (CameraLost, FrameSourceError) as exc:
            self._set_status(str(exc) if str(exc).startswith("camera lost") else f"camera lost: {exc}")
            return None
        if frame is None:
            self._set_status("camera: end of frames")
            return None
        self.frames_read += 1
        reading = self.reader.read(frame.image, stream=True, t=t)  # t: a frozen camera is told
        self.latest = (t, frame.image, reading)
        if reading.status != "ok":
            self._set_status(reading.status)  # board not visible, colour lost, camera frozen
        elif self.status.startswith(("board not visible", "colour lost", "camera frozen")) or not self.status:
            self._set_status("board visible")
        with self._lock:
            if reading.status.startswith("camera frozen"):
                out = self._frozen()
            else:
                out = self._observe(t, reading)
        if self.on_frame is not None:
            self.on_frame(t)
        return out

    def _frozen(self) -> list[Observation]:
        """A frame of a frozen camera: nothing on the table is known to have changed or to be
        hidden; what was under way waits for the camera to move again (the roll's wait starts
        again then)."""
        self._die_gone_since = None
        self._die_away_since, self._die_away_frames = None, 0
        self._die_unread_since = None
        self._stall_from = None
        self._unread_since = [None] * len(self._unread_since)
        return []

    def _observe(self, t: float, reading: Any) -> list[Observation]:
        out: list[Observation] = []
        out += self._spin(t, reading.carousel_angle_deg)
        ok = reading.status == "ok"
        if ok and reading.carousel_angle_deg is not None and not self.spin_tracker.moving:
            out += self._seats(t, reading.seats)
        out += self._die(t, reading.die if ok else UNKNOWN)
        self._stalled(t)
        self._unseen(t, reading.seats if ok else None)
        return out

    @property
    def roll_watched(self) -> bool:
        """True while the camera waits for a roll the referee asked for (none read yet)."""
        return self._roll_asked

    def _stalled(self, t: float) -> None:
        """Tell the table once when a roll asked for has not been read ``die_stall_s`` after
        (counted from the first frame after the ask)."""
        if not self._roll_asked or self._stall_told:
            return
        if self._stall_from is None:
            self._stall_from = t
            return
        if t - self._stall_from < self.die_stall_s:
            return
        self._stall_told = True
        if not self._die_left:
            reason = "still"  # it lies as it lay at the ask
        elif self._die_seen_t is None or t - self._die_seen_t >= self.die_unread_s:
            reason = "unseen"  # no colour for as long as makes a roll unknown
        else:
            reason = "moving"
        log.info("camera: no roll read %.0f s after it was asked (the die %s)", self.die_stall_s, reason)
        if self.ask is not None:
            self.ask(DieUnseen(t=t, player=self._roll_player, reason=reason))

    def _unseen(self, t: float, seats: tuple[str, ...] | None) -> None:
        """Tell the table once when a seat asked for has not been seen taken ``seat_unseen_s``
        after, while seats are hidden (``seats`` None: the board not read)."""
        n = len(self.seats_known)
        for k in range(n):
            unread = seats is None or seats[k] == UNKNOWN
            if not unread:
                self._unread_since[k] = None
            elif self._unread_since[k] is None:
                self._unread_since[k] = t
        self._hidden = tuple(k for k, since in enumerate(self._unread_since)
                             if since is not None and t - since >= self.settle_s)
        if self._seat_asked is None or self._unseen_told:
            return
        if self._seat_asked_t is None:
            self._seat_asked_t = t
            return
        if t - self._seat_asked_t < self.seat_unseen_s or not self._hidden or self._reported:
            return
        self._unseen_told = True
        hidden = ", ".join(str(k) for k in self._hidden)
        log.info("camera: no kid seen seated %.0f s after the seat was asked; seats %s hidden", self.seat_unseen_s,
                 hidden)
        if self.ask is not None:
            self.ask(SeatUnseen(t=t, hidden=hidden))

    def _spin(self, t: float, angle: float | None) -> list[Observation]:
        tracker = self.spin_tracker
        was_rested = tracker.rest_deg is not None
        events = tracker.feed(t, angle)
        out: list[Observation] = []
        if not was_rested and not events and tracker.rest_deg is not None and not self._rested:
            self._rested = True
            self._rest(t, tracker.rest_deg)  # the first rest: the encoder's zero
        for ev in events:
            if ev.kind == "started":
                if self.spins:
                    out.append(SpinStarted(t=ev.t, angle_deg=round(ev.angle_deg, 3), direction=ev.direction))
                continue
            self._rested = True
            self._rest(ev.t, ev.angle_deg)
            if not self.spins:
                continue
            if ev.followed:
                out.append(SpinStopped(t=ev.t, angle_deg=round(ev.angle_deg, 3), revolutions=round(abs(ev.turns), 4),
                                       direction=ev.direction))
            elif self.ask is not None:
                self._pending_turn = ev
                self.ask(FullTurnAsked(t=ev.t, part="carousel"))
            else:
                out.append(SpinStopped(t=ev.t, angle_deg=round(ev.angle_deg, 3), revolutions=0.0,
                                       direction=ev.direction, uncertain=True,
                                       reason="the camera lost the roof marker during the spin: turns not counted"))
        return out

    def _rest(self, t: float, angle: float) -> None:
        if self.on_rest is not None:
            self.on_rest(t, angle)

    def take_answer(self, answer: Any) -> list[Observation]:
        """The kids' YES/NO: with a full-turn question pending, the answer (journaled, nothing
        for the referee in a spin) and the spin's stop it decides (YES: one full turn at least;
        NO: a short spin); ``both``: asked again. Otherwise the answer alone."""
        with self._lock:
            pending = self._pending_turn
            if pending is None or getattr(answer, "TYPE", "") != "answer":
                return [answer]
            if answer.value == "both":
                if self.ask is not None:
                    self.ask(FullTurnAsked(t=answer.t, part="carousel"))
                return [answer]
            self._pending_turn = None
        yes = answer.value == "yes"
        stop = SpinStopped(t=answer.t, angle_deg=round(pending.angle_deg, 3), revolutions=1.0 if yes else 0.0,
                           direction=pending.direction,
                           reason="turns told by the kids (YES)" if yes else "turns told by the kids (NO)")
        return [answer, stop]

    @property
    def asking(self) -> bool:
        """True while a full-turn question waits for the kids' answer."""
        return self._pending_turn is not None

    def _seats(self, t: float, seats: tuple[str, ...]) -> list[Observation]:
        out: list[Observation] = []
        for k, state in enumerate(seats):
            settled = self._seat_stab[k].update(t, state)
            if settled is None or settled == UNKNOWN:
                continue
            self.seats_known[k] = settled
            if settled == "kid" and k not in self.game_seats and k not in self._reported and self._seat_asked is not None:
                self._reported.add(k)
                out.append(KidSeated(t=t, seat=k))
        if UNKNOWN not in self.seats_known:
            seen = tuple(k for k, s in enumerate(self.seats_known) if s == "kid")
            if seen != self._seen_emitted:
                self._seen_emitted = seen
                out.append(SeatsSeen(t=t, occupied=seen))
        return out

    def _die(self, t: float, die: str) -> list[Observation]:
        colour = die != UNKNOWN
        if colour:
            self._die_gone_since, self._die_seen_t = None, t
            self._unread_told = False  # the die is seen again
        elif self._die_gone_since is None:
            self._die_gone_since = t
        # away from its rest: out of sight, or another top colour than the one it lay showing
        if not colour or (self._die_rest is not None and die != self._die_rest):
            self._die_away_frames += 1
            if self._die_away_since is None:
                self._die_away_since = t
        else:
            self._die_away_since, self._die_away_frames = None, 0
        if (self._roll_asked and not self._die_left and self._die_away_since is not None
                and self._die_away_frames >= 2 and t - self._die_away_since >= self.settle_s / 2):
            self._die_left = True  # picked up, rolling, under a hand, tumbling (not a frame of noise)
            self._die_stab.reset()
        if not self._roll_asked or not self._die_left:
            settled = self._die_stab.update(t, die)
            if settled is not None and settled != UNKNOWN:
                self._die_rest = settled  # it lies there showing that colour: not a roll
                self._die_away_since, self._die_away_frames = None, 0
            return []
        if colour:
            self._die_unread_since = None
        elif self._die_unread_since is None:
            # unread since it went out of sight, or since the roll was asked when it was out of
            # sight before (a kid holding the die while the last turn went on is not a roll read
            # unknown)
            gone = self._die_gone_since if self._die_gone_since is not None else t
            self._die_unread_since = max(gone, self._roll_asked_t)
        settled = self._die_stab.update(t, die)
        if settled is not None and settled != UNKNOWN:
            self._roll_asked = False
            self._die_rest = settled
            return [DieRolled(t=t, colour=settled)]
        if (self._die_unread_since is not None and t - self._die_unread_since >= self.die_unread_s
                and not self._unread_told):
            self._roll_asked = False
            self._unread_told = True
            return [DieRolled(t=t, colour=UNKNOWN)]
        return []

    # ------------------------------------------------------------------ Source protocol
    def start(self, emit: Emit, clock: Clock) -> None:
        """Read frames on a thread and ``emit`` observations (times from ``clock``;
        :meth:`~companion.sources.reading_thread.ReadingThread.start_paced`)."""
        self.start_paced(emit, clock, "monsieur-camera")


def monsieur_camera_from_config(config: Any, table: Any, layout: str, spec: str | None = None,
                                clock: Callable[[], float] | None = None, frames: FrameSource | None = None,
                                **kwargs: Any) -> MonsieurCameraSource:
    """Build the Monsieur Carrousel camera source from the configuration.

    Args:
        config: the loaded configuration (``[camera]``; the geometry ``monsieur-board.toml``
            and the lens ``camera.json`` of the calibration folder).
        table: the referee's :class:`~companion.games.monsieur_carrousel.TableData` (the
            margins, the disc side's seat colours).
        layout: the disc side in play (``"1A"``-``"6B"``).
        spec: overrides ``[camera] source`` (``picamera2``, ``opencv:...``, ``folder:...``).
        clock: timestamps of the frames (default ``time.monotonic``).
        frames: a frame source to use instead of opening ``spec`` (the simulated camera).
        **kwargs: passed to :class:`MonsieurCameraSource` (``on_status``, ``spins``, ``ask``,
            ``on_rest``, ``on_frame``, ``seat_unseen_s``).

    Raises:
        ValueError: a bad geometry or lens file, or geometry and layouts that disagree.
        FrameSourceError: the camera cannot be opened.
    """
    import time

    from companion.calibration_dir import optional_calibration
    from companion.vision.calibration import load_lens
    from companion.vision.monsieur import MonsieurReader
    from companion.vision.monsieur_geometry import MonsieurGeometry
    from companion.vision.registration import Registrar

    cam = config["camera"]
    geometry = MonsieurGeometry.load(config=config)
    check_same_table(geometry, table)
    geometry = geometry_for_layout(geometry, table.layouts[layout])
    intrinsics = optional_calibration(cam["intrinsics"], "camera.json", config, key="[camera] intrinsics")
    lens = load_lens(intrinsics) if intrinsics is not None else None
    reader = MonsieurReader(geometry, table.board.seat_margin_deg, table.board.zone_margin_deg,
                            Registrar(geometry.markers, geometry.dictionary, redetect_every=cam["redetect_every"], lens=lens))
    if frames is None:
        spec = spec or cam["source"]
        if spec == "auto":
            spec = "picamera2"
        options: dict[str, Any] = {"clock": clock or time.monotonic}
        if spec == "picamera2":
            options.update(size=(cam["width"], cam["height"]), warmup_s=cam["warmup_s"])
        elif spec.startswith("opencv:") and spec[7:].isdigit():
            options.update(size=(cam["width"], cam["height"]))
        frames = open_frame_source(spec, **options)
    return MonsieurCameraSource(frames, reader, settle_s=cam["settle_s"], frame_period_s=cam["frame_period_s"], **kwargs)
