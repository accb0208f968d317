"""The camera as a source of Carrossel observations: the board's turns and, once revealed, the plays.

Frames (from any :mod:`companion.vision.frames` source, the simulated camera included) go through
the :class:`~companion.vision.carrossel.CarrosselReader`; its readings become observations only
once stable for ``settle_s`` seconds (the same settle-time stabiliser as Carrousel's camera):

* **board_turned**: the round board's angle has stayed within ``still_deg`` for ``settle_s``
  and is at least ``turn_min_deg`` from the last angle reported. The reader's angle is degrees
  counter-clockwise seen from above (the table description's); the referee's is clockwise from
  setup: the first angle at rest is taken as the angle the referee expects then (0 at setup,
  the nominal angle of a resumed game), and later ones are ``(zero - angle) mod 360``.
* **play**: with a :class:`CarrosselWatch` (which follows the referee's state), a tile of a
  player's colour stable on a cell the referee holds free, in that player's sector(s), while the
  referee waits for that player's play, is that player's play: its slot number and animal (two
  tiles with two players, in the order of the player's sectors). A play with an ability (Jump,
  Recover, Single ticket, Remove clients) cannot be seen: it is entered by hand. A player's play
  is sent at most once a round: not when the referee holds one (journaled), nor while one of
  that player's plays from any source is on its way to the referee (taken in by the service,
  not yet applied: :meth:`CarrosselWatch.arrived`), nor again after the camera sent one that the
  referee took (a board read again after a restart, a new frame, a tile read otherwise later).
* **checks**: a play entered by hand and the play read for the same player in the same round
  are compared, and the board as read is compared with the referee's board; a disagreement is
  told to the table (:class:`PlayDisagrees`, :class:`BoardDisagrees`), never taken silently.

Only the four-sector side (2 and 4 players) has the camera's cell geometry; with 3 players the
camera gives the board's turns only.

Problems are reported through ``on_status(text)`` once per change (``"camera lost: ..."``,
``"centre marker not seen: ..."``, ``"camera: end of frames"``, ``"board visible"``).
Nothing here raises once started.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from companion.clock import Clock
from companion.events import Call, Observation, event_type
from companion.health import state_key
from companion.sources import Emit
from companion.sources.carrousel_camera import ScheduledCamera
from companion.sources.reading_thread import ReadingThread
from companion.vision.colour import UNKNOWN, Stabiliser
from companion.vision.frames import CameraLost, FrameSource, FrameSourceError, open_frame_source

__all__ = ["CarrosselCameraSource", "CarrosselWatch", "AngleSettle", "PlayDisagrees", "BoardDisagrees",
           "ScheduledCarrosselCamera", "carrossel_camera_from_config"]

log = logging.getLogger(__name__)


@event_type("play_disagrees")
@dataclasses.dataclass(frozen=True, slots=True)
class PlayDisagrees(Call):
    """A call of the service: a play entered by hand and the play the camera read differ.

    Attributes:
        player: whose play.
        entered_slot, entered_animals, entered_ability: the play entered (ability: a client id or None).
        read_slot, read_animals: the play read from the board.
        kept: which one the referee holds (``"entered"`` or ``"read"``: the first to arrive).
    """

    player: str = ""
    entered_slot: int = 0
    entered_animals: tuple[str, ...] = ()
    entered_ability: int | None = None
    read_slot: int = 0
    read_animals: tuple[str, ...] = ()
    kept: str = ""


@event_type("board_disagrees")
@dataclasses.dataclass(frozen=True, slots=True)
class BoardDisagrees(Call):
    """A call of the service: the camera sees a cell otherwise than the referee holds it.

    Attributes:
        cell: the cell (``"A7"``).
        seen_tile: the camera sees a tile there (``seen_colour``, ``seen_animal``), else empty.
        expected_tile: the referee holds a tile there (``expected_colour``, ``expected_animal``).
    """

    cell: str = ""
    seen_tile: bool = False
    seen_colour: str = ""
    seen_animal: str = ""
    expected_tile: bool = False
    expected_colour: str = ""
    expected_animal: str = ""


def _cell_fields(prefix: str, form: Any) -> dict[str, Any]:
    tile = isinstance(form, tuple)
    return {f"{prefix}_tile": tile, f"{prefix}_colour": form[0] if tile else "", f"{prefix}_animal": form[1] if tile else ""}


class AngleSettle:
    """Passes an angle on once it has stayed within ``still_deg`` for ``settle_s`` seconds.

    Args:
        settle_s: seconds the angle must stay still.
        still_deg: how far (degrees) readings of a board at rest may wander.

    ``update(t, angle_deg)`` returns the mean angle (degrees, 0-360) the first time the readings
    have been still for ``settle_s``, then None until the board moves and settles again;
    ``moving()`` forgets the candidate (the board was not seen).
    """

    def __init__(self, settle_s: float, still_deg: float = 1.5):
        if settle_s < 0 or still_deg <= 0:
            raise ValueError(f"settle_s must be >= 0 and still_deg > 0, got {settle_s}, {still_deg}")
        self.settle_s, self.still_deg = float(settle_s), float(still_deg)
        self._first: float | None = None
        self._since = 0.0
        self._sum = 0.0
        self._n = 0
        self._done = False

    def update(self, t: float, angle_deg: float) -> float | None:
        """Feed a reading at ``t`` (s); returns the settled angle once."""
        if self._first is None or abs(_wrap(angle_deg - self._first)) > self.still_deg:
            self._first, self._since, self._sum, self._n, self._done = angle_deg, t, 0.0, 0, False
        self._sum += _wrap(angle_deg - self._first)
        self._n += 1
        if not self._done and t - self._since >= self.settle_s:
            self._done = True
            return (self._first + self._sum / self._n) % 360.0
        return None

    def moving(self) -> None:
        """The board was not read (a hand over the marker, the board turning): start again."""
        self._first = None


def _wrap(d: float) -> float:
    return (d + 180.0) % 360.0 - 180.0


class CarrosselWatch:
    """Follows the referee's state to turn the board as read into plays and to check the two.

    The service tells it every applied observation (:meth:`applied`, as an observer); it applies
    each to its own copy of the referee's state (the engine is pure, so the copy is exact). The
    service also tells it every observation it takes in (:meth:`arrived`), before the jitter
    buffer delays it: a play on its way is one the camera must not send again.

    Args:
        referee: a :class:`~companion.games.carrossel.CarrosselReferee` of the same data.
        state: the state to start from (a resumed game's), or None for a new game.
        tell: ``tell(call)`` tells the table a service call (``Service.tell``), or None.
        check_s: how long (s) the board as read must disagree with the referee's before it is told.
    """

    def __init__(self, referee: Any, state: Any = None, tell: Callable[[Call], None] | None = None,
                 check_s: float = 3.0):
        self.referee = referee
        self.state = state if state is not None else referee.initial_state()
        self.tell = tell
        self.check_s = check_s
        self._lock = threading.Lock()
        self._mine: list[Observation] = []  # the plays this watch made (by identity)
        self._read: dict[tuple[int, str], Any] = {}  # (round, player) -> the play read
        self._tried: set[tuple[int, str, int, tuple[str, ...]]] = set()
        self._sent: set[tuple[int, str]] = set()  # (round, player): the camera's play sent, not refused
        self._coming: list[Observation] = []  # plays taken in by the service, not yet applied
        self._disagree: dict[tuple[str, Any, Any], float] = {}
        self._told: set[tuple[str, Any, Any]] = set()
        self.disagreements: list[Call] = []
        self.note = ""

    # ---------------------------------------------------------------- the referee's side
    def applied(self, obs: Observation, calls: Sequence[Call]) -> None:
        """An observation the service applied (any source), with the referee's calls."""
        with self._lock:
            mine = any(o is obs for o in self._mine)
            if obs.TYPE == "play":
                self._forget_coming(obs)
            st = self.state
            if obs.t < st.last_t:
                obs = dataclasses.replace(obs, t=st.last_t)
            before = st
            self.state, _ = self.referee.apply(st, obs)
            if mine and obs.TYPE == "play" and any(c.TYPE in ("illegal_play", "invalid_observation") for c in calls):
                # refused (the table was told): a tile read otherwise later may be sent; the same play never again
                self._sent.discard((before.round, obs.player))  # type: ignore[attr-defined]
            if obs.TYPE == "play" and not mine:
                read = self._read.get((before.round, obs.player))  # type: ignore[attr-defined]
                if read is not None and (read.slot, read.animals, read.ability) != (
                        obs.slot, tuple(obs.animals), obs.ability):  # type: ignore[attr-defined]
                    self._say(PlayDisagrees(
                        t=obs.t, player=obs.player, entered_slot=obs.slot,  # type: ignore[attr-defined]
                        entered_animals=tuple(obs.animals), entered_ability=obs.ability,  # type: ignore[attr-defined]
                        read_slot=read.slot, read_animals=tuple(read.animals),
                        kept="entered" if any(c.TYPE in ("play_received", "revealed") for c in calls) else "read"))

    def arrived(self, obs: Observation) -> None:
        """An observation the service took in (any source; the loop's thread), before it is
        applied: a play on its way keeps the camera from sending that player's play again
        until it is applied (:meth:`applied`)."""
        if obs.TYPE != "play":
            return
        with self._lock:
            self._coming.append(obs)

    def _forget_coming(self, obs: Observation) -> None:
        """The play ``obs`` is applied: no longer on its way (the same object, else an equal
        one: a play re-read from the journal after a restart)."""
        for i, o in enumerate(self._coming):
            if o is obs:
                del self._coming[i]
                return
        for i, o in enumerate(self._coming):
            if o == obs:
                del self._coming[i]
                return

    def _say(self, call: Call) -> None:
        self.disagreements.append(call)
        log.warning("camera check: %s", call.to_json())
        if self.tell is not None:
            self.tell(call)

    def expected_angle_deg(self) -> float:
        """The board's angle (degrees clockwise from setup) the referee expects now."""
        with self._lock:
            from companion.games.carrossel import nominal_angle

            return nominal_angle(self.referee.data, self.state) if self.state.players else 0.0

    # ---------------------------------------------------------------- the camera's side
    def board(self, t: float, seen: Mapping[str, Any]) -> list[Observation]:
        """The board as read (cell -> ``(colour, animal)`` or ``"empty"``; cells not read are
        absent) at ``t`` (s): the plays it shows, and the disagreements it tells."""
        from companion.games.carrossel import PlayObserved, player_sectors

        with self._lock:
            st = self.state
            data = self.referee.data
            if not st.players or st.phase in ("waiting", "over"):
                return []
            if st.side != "four":
                self.note = "3 players: the camera reads the board's turns only (the plays are entered)"
                return []
            side = data.boards[st.side]
            names = side.cell_names
            held = {names[i]: (tile[0], tile[1]) if tile is not None else "empty" for i, tile in enumerate(st.tiles)}
            out: list[Observation] = []
            new: dict[str, list[tuple[str, tuple[str, str]]]] = {}
            for cell, form in seen.items():
                if cell not in held:
                    continue
                if form != "empty" and held[cell] == "empty":
                    new.setdefault(form[0], []).append((cell, form))
            if st.phase == "play":
                played = {p.player for p in st.plays}  # the referee holds their plays
                played |= {o.player for o in self._coming}  # type: ignore[attr-defined]  # on their way
                played |= {name for r, name in self._sent if r == st.round}  # the camera sent them
                sectors = player_sectors(data, st)
                n = 2 if len(st.players) == 2 else 1
                for p in st.players:
                    if p.name in played:
                        continue
                    tiles = new.get(p.colour, [])
                    mine = sorted((c for c in tiles if c[0][0] in sectors[p.name]),
                                  key=lambda c: sectors[p.name].index(c[0][0]))
                    if len(tiles) != n or len(mine) != n or len({int(c[0][1:]) for c in mine}) != 1:
                        continue  # not (yet) one play's tiles: wait (two slot numbers: a Jump, entered)
                    slot = int(mine[0][0][1:])
                    animals = tuple(c[1][1] for c in mine)
                    key = (st.round, p.name, slot, animals)
                    if key in self._tried:
                        continue
                    self._tried.add(key)
                    self._sent.add((st.round, p.name))
                    play = PlayObserved(t=t, player=p.name, slot=slot, animals=animals)
                    self._mine.append(play)
                    self._read[(st.round, p.name)] = play
                    out.append(play)
            self._check(t, seen, held, st.phase)
            return out

    def _check(self, t: float, seen: Mapping[str, Any], held: Mapping[str, Any], phase: str) -> None:
        now = set()
        for cell, form in seen.items():
            want = held.get(cell)
            if want is None or form == want:
                continue
            if phase == "play" and want == "empty":
                continue  # a tile being played: the play is read, or entered
            key = (cell, form, want)
            now.add(key)
            since = self._disagree.setdefault(key, t)
            if t - since >= self.check_s and key not in self._told:
                self._told.add(key)
                self._say(BoardDisagrees(t=t, cell=cell, **_cell_fields("seen", form), **_cell_fields("expected", want)))
        for key in list(self._disagree):
            if key not in now:
                del self._disagree[key]


class CarrosselCameraSource(ReadingThread):
    """A :class:`companion.sources.Source` that watches the Carrossel table.

    Args:
        frames: a frame source, or its spec (``"picamera2"``, ``"opencv:0"``, ``"opencv:FILE"``,
            ``"folder:PATH"``; see :func:`~companion.vision.frames.open_frame_source`).
        reader: the :class:`~companion.vision.carrossel.CarrosselReader` (default: the
            calibration files).
        watch: the :class:`CarrosselWatch` that follows the referee (plays and checks), or None
            (the board's turns only).
        settle_s: seconds a reading must stay the same before it is reported.
        still_deg: how far (degrees) the angle of a board at rest may wander between frames.
        turn_min_deg: a settled angle at least this far (degrees) from the last one reported is
            a turn of the board.
        frame_period_s: at most one frame per this many seconds (0 = as fast as frames come).
        on_status: called with a short text when the camera's state changes.
        on_rest: ``on_rest(t, angle_deg)`` with each settled angle (degrees CCW), e.g. for the
            encoder's zero (:class:`companion.rotation.camera_zero.CameraZero`), or None.
        expected_deg: the referee's angle (degrees clockwise from setup) when the first angle
            settles; default the watch's (0 without one).
        report_turns: emit ``board_turned`` (False when an encoder reports the turns and the
            camera only gives it its zero through ``on_rest``).
        on_frame: ``on_frame(t)`` after every frame read (e.g. ``CameraZero.frame``), or None.

    Raises:
        ValueError: bad settle or angle figures, a bad calibration file (naming it).
        FrameSourceError: the camera cannot be opened.
    """

    LABEL = "carrossel camera"

    def __init__(self, frames: FrameSource | str, reader: Any = None, watch: CarrosselWatch | None = None,
                 settle_s: float = 0.5, still_deg: float = 1.5, turn_min_deg: float = 10.0,
                 frame_period_s: float = 0.0, on_status: Callable[[str], None] | None = None,
                 on_rest: Callable[[float, float], Any] | None = None, expected_deg: float | None = None,
                 report_turns: bool = True, on_frame: Callable[[float], Any] | None = None):
        from companion.vision.carrossel import CarrosselReader

        if turn_min_deg <= still_deg:
            raise ValueError(f"turn_min_deg ({turn_min_deg}) must exceed still_deg ({still_deg})")
        self.reader = reader if reader is not None else CarrosselReader()
        self.frames = open_frame_source(frames) if isinstance(frames, str) else frames
        self.watch = watch
        self.settle_s = settle_s
        self.turn_min_deg = turn_min_deg
        self.frame_period_s = frame_period_s
        self.on_status = on_status
        self.on_rest = on_rest
        self.expected_deg = expected_deg
        self.report_turns = report_turns
        self.on_frame = on_frame
        self._angle = AngleSettle(settle_s, still_deg)
        self._slots = {n: Stabiliser[Any](settle_s) for n in self.reader.geometry.cell_names}
        self.board: dict[str, Any] = {}  # cell -> the stable (colour, animal) or "empty"
        self.zero_ccw: float | None = None
        self.rest_ccw: float | None = None  # the last angle at rest (degrees CCW)
        self._reported_ccw: float | None = None
        self.status = ""
        self.frames_read = 0
        #: ``(t_s, frame H x W x 3 uint8 BGR, CarrosselReading)`` of the last frame read, or None
        #: (the web page's camera view draws it when a page asks; the frame as read, no copy).
        self.latest: tuple[float, Any, Any] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _set_status(self, text: str) -> None:
        if text != self.status:
            if state_key(text) != state_key(self.status):  # once per state, not per figure
                log.info("carrossel camera: %s", text)
            self.status = text
            if self.on_status is not None:
                self.on_status(text)

    def referee_angle(self, ccw_deg: float) -> float:
        """A reader's angle (degrees CCW) as the referee's (degrees clockwise from setup);
        the first call fixes the zero."""
        if self.zero_ccw is None:
            expected = self.expected_deg
            if expected is None:
                expected = self.watch.expected_angle_deg() if self.watch is not None else 0.0
            self.zero_ccw = (ccw_deg + expected) % 360.0  # clockwise = minus counter-clockwise
        return round((self.zero_ccw - ccw_deg) % 360.0, 3)

    def resume_zero(self, zero_ccw: float) -> None:
        """A resumed game: ``zero_ccw`` (degrees CCW) is the reader's angle of the board at
        setup, kept from before the restart. The board is expected at the referee's angle
        (``expected_deg``, else the watch's); a first angle at rest elsewhere (the board turned
        while the companion was down) is reported as a turn, not taken as the expected angle."""
        expected = self.expected_deg
        if expected is None:
            expected = self.watch.expected_angle_deg() if self.watch is not None else 0.0
        self.zero_ccw = float(zero_ccw) % 360.0
        self._reported_ccw = (self.zero_ccw - expected) % 360.0  # where the board should stand

    def step(self, t: float) -> list[Observation] | None:
        """Read one frame at session time ``t`` (seconds) and return the observations it
        completes; None when the frames have ended or the camera is lost."""
        from companion.games.carrossel import BoardTurned

        try:
            frame = self.frames.read()
        except (CameraLost, FrameSourceError) as exc:
            self._set_status(str(exc) if str(exc).startswith("camera lost") else f"camera lost: {exc}")
            return None
        if frame is None:
            self._set_status("camera: end of frames")
            return None
        self.frames_read += 1
        reading = self.reader.read(frame.image, stream=True, t=t)
        self.latest = (t, frame.image, reading)  # one tuple, so a page never sees a mixed pair
        if self.on_frame is not None:
            self.on_frame(t)
        out: list[Observation] = []
        if reading.status != "ok" or reading.board_angle_deg is None:
            self._set_status(reading.status)
            self._angle.moving()
            return out
        if not self.status or not self.status.startswith("board visible"):
            self._set_status("board visible")
        rest = self._angle.update(t, reading.board_angle_deg)
        if rest is not None:
            self.rest_ccw = rest
            if self.on_rest is not None:
                self.on_rest(t, rest)
            if self._reported_ccw is None:
                self.referee_angle(rest)
                self._reported_ccw = rest
                self._reset_slots()
            elif abs(_wrap(rest - self._reported_ccw)) >= self.turn_min_deg:
                if self.report_turns:
                    out.append(BoardTurned(t=t, angle_deg=self.referee_angle(rest)))
                self._reported_ccw = rest
                self._reset_slots()  # the cells moved: read them afresh
        if self.rest_ccw is None or abs(_wrap(reading.board_angle_deg - self.rest_ccw)) > self._angle.still_deg:
            return out  # turning: the cells are not where they were
        for name, s in reading.slots.items():
            form: Any = s.label if s.label != "tile" else (s.colour, s.animal)
            if form == UNKNOWN:
                continue  # an unread cell says nothing; the last stable reading stands
            done = self._slots[name].update(t, form)
            if done is not None:
                self.board[name] = done
        if self.watch is not None:
            out.extend(self.watch.board(t, dict(self.board)))
        return out

    def _reset_slots(self) -> None:
        self.board.clear()
        for s in self._slots.values():
            s.reset()

    def start(self, emit: Emit, clock: Clock) -> None:
        """Read frames on a thread and ``emit`` observations (times from ``clock``;
        :meth:`~companion.sources.reading_thread.ReadingThread.start_paced`)."""
        self.start_paced(emit, clock, "carrossel-camera")


class ScheduledCarrosselCamera(ScheduledCamera):
    """A :class:`CarrosselCameraSource` driven by the service loop instead of its own thread:
    one frame every ``period_s`` seconds of session time (the simulated camera, whose frames are
    rendered on demand, so that a simulated game is the same at any speed); the loop of
    :class:`~companion.sources.carrousel_camera.ScheduledCamera`, with the source's ``latest``
    and ``reader`` for the web page.

    Args:
        source: the camera source.
        period_s: session seconds between frames.
        start_t: session time (s) of the first frame.
    """

    @property
    def latest(self) -> Any:
        """The source's ``latest`` (the shared camera contract)."""
        return self.source.latest

    @property
    def reader(self) -> Any:
        """The source's reader."""
        return self.source.reader


def carrossel_camera_from_config(config: Any, frames: FrameSource | str, watch: CarrosselWatch | None = None,
                                 on_status: Callable[[str], None] | None = None,
                                 clock: Callable[[], float] | None = None, **kwargs: Any) -> CarrosselCameraSource:
    """Build the Carrossel camera source from the configuration.

    Args:
        config: the loaded configuration (``[camera]``: ``settle_s``, ``frame_period_s``,
            ``redetect_every``, ``intrinsics``, ``width``, ``height``, ``warmup_s``; the
            calibration folder for ``carrossel-board.toml`` and ``carrossel-letters.json``).
        frames: a frame source or its spec (``picamera2``, ``opencv:0``, ``opencv:FILE``...).
        watch, on_status, kwargs: see :class:`CarrosselCameraSource`.
        clock: timestamps of a real camera's frames (default ``time.monotonic``).

    Raises:
        ValueError: a bad spec or calibration file (naming it).
        FrameSourceError: the camera cannot be opened.
    """
    import time

    from companion.calibration_dir import optional_calibration
    from companion.vision.calibration import load_lens
    from companion.vision.carrossel import CarrosselGeometry, CarrosselReader, LetterTemplates
    from companion.vision.registration import Registrar

    cam = config["camera"]
    geometry = CarrosselGeometry.load(config=config)
    intrinsics = optional_calibration(cam["intrinsics"], "camera.json", config, key="[camera] intrinsics")
    lens = load_lens(intrinsics) if intrinsics is not None else None
    reader = CarrosselReader(geometry, LetterTemplates.load(config=config),
                             Registrar(geometry.markers, geometry.dictionary, redetect_every=cam["redetect_every"],
                                       lens=lens, layout_only=True))
    if isinstance(frames, str):
        spec = "picamera2" if frames == "auto" else frames
        options: dict[str, Any] = {"clock": clock or time.monotonic}
        if spec == "picamera2":
            options.update(size=(cam["width"], cam["height"]), warmup_s=cam["warmup_s"])
        elif spec.startswith("opencv:") and spec[7:].isdigit():
            options.update(size=(cam["width"], cam["height"]))
        frames = open_frame_source(spec, **options)
    return CarrosselCameraSource(frames, reader=reader, watch=watch, settle_s=cam["settle_s"],
                                 frame_period_s=cam["frame_period_s"], on_status=on_status, **kwargs)
