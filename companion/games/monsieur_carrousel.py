"""Monsieur Carrousel (LOKI/IELLO 2019): the turn engine, for a table of small kids.

Rulebook: ``shared/rules/monsieur-carrousel.txt`` (sections: Contents, Set-Up, Meet the
Characters, Object of the Game, Gameplay, Phase 1: Place Kid Tokens, "What if all of the seats
of the colour shown on the die are already taken?", Phase 2: Weather, Sun zone, "How to complete
a sunbeam fragment", Rain zone, Getting Help from the Twins, End of the Game). Rulings where the
rulebook leaves room: ``DESIGN.md`` (Monsieur Carrousel) and ``docs/monsieur-carrousel.md``.
Seat layouts, die colours and the board's zones are data: ``calibration/monsieur_carrousel.toml``.

The die and the carousel's spin are chance events (OpenSpiel style): they arrive as
observations (``die_rolled``, ``spin_stopped``), and :func:`chance_outcomes` lists what may
come next with its probability, which the simulated table and the tests draw from. What only
the players can judge (the memory guess, whether a sunbeam is complete) arrives through the
kids' YES/NO buttons (``answer``) after a spoken question.

Geometry (degrees, counter-clockwise seen from above): a seat's board angle is its angle on the
disc plus the carousel's angle (``spin_stopped.angle_deg``, from the disc's home mark). The kid
is in the sun when its seat's board angle is inside the sun zone; Monsieur Carrousel's finger
points at the seat whose board angle is nearest ``finger_deg``. A stop within a margin of a zone
boundary or of the line between two seats is "not sure": turn the carousel again.

The engine is pure: time arrives with each observation; it never reads a clock, sleeps, starts
a thread or touches hardware. Bad input gives an ``invalid_observation`` call, never an
exception.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from companion.calibration_dir import calibration_path, shipped_path
from companion.events import Call, InvalidObservation, Observation, Tick, Vocabulary, event_type

__all__ = [
    "DEFAULT_TABLE_FILE",
    "TableError",
    "Seat",
    "Layout",
    "BoardZones",
    "TableData",
    "load_table",
    "seat_board_angle",
    "zone_at",
    "pointed_seat",
    "CHANCE",
    "TERMINAL",
    "MonsieurState",
    "MonsieurCarrouselReferee",
    "chance_outcomes",
    "spin_outcome_probabilities",
    "current_player",
    "expected_observations",
]

#: The seat layouts and board zones shipped in the package (read-only); ``load_table(None)``
#: reads the calibration folder's file when there is one
#: (:func:`companion.calibration_dir.calibration_path`).
DEFAULT_TABLE_FILE = shipped_path("monsieur_carrousel.toml")

#: OpenSpiel's words for "nobody's move: the die or the carousel decides" and "game over".
CHANCE = "chance"
TERMINAL = "terminal"

UNKNOWN = "unknown"


# --------------------------------------------------------------------------- table data


class TableError(ValueError):
    """The layouts file is unreadable or a value in it is wrong; the message names the file,
    the table and the key."""


@dataclasses.dataclass(frozen=True, slots=True)
class Seat:
    """One seat of a seating disc.

    Attributes:
        index: 0-11, counter-clockwise from the disc's home mark.
        colour: one of the die's colours.
        picture: what the seat shows (``lion``, ``crocodile``, ...).
        angle_deg: the seat centre's angle on the disc, degrees counter-clockwise from the home
            mark, in [0, 360).
    """

    index: int
    colour: str
    picture: str
    angle_deg: float


@dataclasses.dataclass(frozen=True, slots=True)
class Layout:
    """One side of a seating disc (Contents: 6 discs, 2 sides each).

    Attributes:
        name: ``"1A"`` ... ``"6B"``.
        difficulty: ``easy``, ``medium`` or ``hard``; ``butterflies``: 1-3 in the middle.
        seats: the 12 seats, index order.
        assumed: the keys of this layout that no public source confirms.
    """

    name: str
    disc: int
    side: str
    difficulty: str
    butterflies: int
    seats: tuple[Seat, ...]
    assumed: tuple[str, ...] = ()

    def seats_of(self, colour: str) -> tuple[int, ...]:
        """Indices of the seats of one colour (2 on every layout)."""
        return tuple(s.index for s in self.seats if s.colour == colour)


@dataclasses.dataclass(frozen=True, slots=True)
class BoardZones:
    """The game board around the carousel (Phase 2: two weather zones; Monsieur Carrousel's
    finger).

    Attributes:
        sun_from_deg, sun_to_deg: the sun zone, counter-clockwise from one to the other, board
            degrees; the rest of the circle is rain.
        finger_deg: where Monsieur Carrousel's finger points, board degrees.
        zone_margin_deg: a kid nearer than this to a zone boundary is "not sure".
        seat_margin_deg: a finger nearer than this to the line between two seats is "not sure".
    """

    sun_from_deg: float
    sun_to_deg: float
    finger_deg: float
    zone_margin_deg: float
    seat_margin_deg: float


@dataclasses.dataclass(frozen=True, slots=True)
class TableData:
    """Everything physical about the game, read from ``calibration/monsieur_carrousel.toml``.

    Attributes:
        kids: the 12 kids' names (Meet the Characters), in the order they are offered.
        twins: the twins' names.
        raindrops: raindrop spaces on the board (8); ``sunbeams``: sunbeams to build (5);
        fragments_per_sunbeam: fragments a sunbeam trough takes (2).
        die_colours: the die's 6 colours, also the seats' colours.
        board: the weather zones and the finger.
        layouts: name -> layout, 12 of them.
        source: the file read.
    """

    kids: tuple[str, ...]
    twins: tuple[str, ...]
    raindrops: int
    sunbeams: int
    fragments_per_sunbeam: int
    die_colours: tuple[str, ...]
    board: BoardZones
    layouts: Mapping[str, Layout]
    source: str = ""


def _get(table: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in table:
        raise TableError(f"{where}: key '{key}' is missing")
    value = table[key]
    if isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
        raise TableError(f"{where}: key '{key}': expected {getattr(kind, '__name__', kind)}, got {value!r}")
    return value


def load_table(path: str | Path | None = None) -> TableData:
    """Read and check the seat layouts and board zones.

    Args:
        path: a TOML file laid out like :data:`DEFAULT_TABLE_FILE`; ``None`` reads
            ``monsieur_carrousel.toml`` of the calibration folder, else :data:`DEFAULT_TABLE_FILE`.

    Raises:
        TableError: a missing file, bad TOML, a missing or wrongly typed key, a layout without
            12 seats of the die's 6 colours twice each, a value outside the ranges above, or a
            table whose values are not all either confirmed (``source``) or ``assumed``.
    """
    p = Path(path) if path else calibration_path("monsieur_carrousel.toml")
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TableError(f"{p}: seat layouts file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise TableError(f"{p}: not valid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TableError(f"{p}: cannot read: {exc}") from None

    def section(name: str) -> Mapping[str, Any]:
        value = data.get(name)
        if not isinstance(value, dict):
            raise TableError(f"{p}: table [{name}] is missing")
        _get(value, "source", str, f"{p}: [{name}]")
        _get(value, "assumed", list, f"{p}: [{name}]")
        return value

    pieces = section("pieces")
    where = f"{p}: [pieces]"
    kids = tuple(_get(pieces, "kids", list, where))
    if len(kids) != 12 or len(set(kids)) != 12 or not all(isinstance(k, str) and k for k in kids):
        raise TableError(f"{where}: key 'kids': expected 12 distinct names, got {list(kids)!r}")
    fragments = _get(pieces, "sunbeam_fragments", int, where)
    per = _get(pieces, "fragments_per_sunbeam", int, where)
    drops = _get(pieces, "raindrops", int, where)
    if per < 1 or fragments < per or fragments % per or drops < 1:
        raise TableError(f"{where}: expected raindrops >= 1 and sunbeam_fragments a multiple of "
                         f"fragments_per_sunbeam, got {drops}, {fragments}, {per}")
    die = section("die")
    colours = tuple(_get(die, "colours", list, f"{p}: [die]"))
    if len(colours) != 6 or len(set(colours)) != 6:
        raise TableError(f"{p}: [die] key 'colours': expected 6 distinct colours, got {list(colours)!r}")
    b = section("board")
    wb = f"{p}: [board]"
    board = BoardZones(
        *(float(_get(b, k, (int, float), wb)) for k in
          ("sun_from_deg", "sun_to_deg", "finger_deg", "zone_margin_deg", "seat_margin_deg"))
    )
    if not (0 <= board.zone_margin_deg < 45 and 0 <= board.seat_margin_deg < 15):
        raise TableError(f"{wb}: expected zone_margin_deg in [0, 45) and seat_margin_deg in [0, 15)")
    layouts: dict[str, Layout] = {}
    raw_layouts = data.get("layout")
    if not isinstance(raw_layouts, list) or not raw_layouts:
        raise TableError(f"{p}: no [[layout]] tables")
    for n, raw in enumerate(raw_layouts, start=1):
        wl = f"{p}: layout {n}"
        name = _get(raw, "name", str, wl)
        wl = f"{p}: layout {name!r}"
        _get(raw, "source", str, wl)
        assumed = tuple(_get(raw, "assumed", list, wl))
        difficulty = _get(raw, "difficulty", str, wl)
        if difficulty not in ("easy", "medium", "hard"):
            raise TableError(f"{wl}: key 'difficulty': expected easy, medium or hard, got {difficulty!r}")
        seats_raw = _get(raw, "seats", list, wl)
        if len(seats_raw) != 12:
            raise TableError(f"{wl}: expected 12 seats, got {len(seats_raw)}")
        seats = []
        for i, s in enumerate(seats_raw):
            ws = f"{wl} seat {i}"
            colour = _get(s, "colour", str, ws)
            if colour not in colours:
                raise TableError(f"{ws}: colour {colour!r} is not a die colour ({', '.join(colours)})")
            angle = float(_get(s, "angle_deg", (int, float), ws))
            if not 0 <= angle < 360:
                raise TableError(f"{ws}: angle_deg: expected degrees in [0, 360), got {angle}")
            seats.append(Seat(i, colour, _get(s, "picture", str, ws), angle))
        for c in colours:
            count = sum(1 for s in seats if s.colour == c)
            if count != 2:
                raise TableError(f"{wl}: expected 2 seats of each colour, {c} has {count}")
        layouts[name] = Layout(
            name, _get(raw, "disc", int, wl), _get(raw, "side", str, wl), difficulty,
            _get(raw, "butterflies", int, wl), tuple(seats), assumed,
        )
    return TableData(
        kids=kids,
        twins=tuple(_get(pieces, "twins", list, where)),
        raindrops=drops,
        sunbeams=fragments // per,
        fragments_per_sunbeam=per,
        die_colours=colours,
        board=board,
        layouts=layouts,
        source=str(p),
    )


# --------------------------------------------------------------------------- geometry


def _norm(angle_deg: float) -> float:
    return angle_deg % 360.0


def _ccw_distance(a: float, b: float) -> float:
    """Degrees from ``a`` counter-clockwise to ``b``, in [0, 360)."""
    return (b - a) % 360.0


def _gap(a: float, b: float) -> float:
    """Shortest angular distance between two angles, degrees in [0, 180]."""
    d = abs(a - b) % 360.0
    return min(d, 360.0 - d)


def seat_board_angle(seat: Seat, carousel_deg: float) -> float:
    """Board angle (degrees, [0, 360)) of a seat when the carousel stands at ``carousel_deg``."""
    return _norm(seat.angle_deg + carousel_deg)


def zone_at(board: BoardZones, board_angle_deg: float) -> Literal["sun", "rain"] | None:
    """The weather zone at a board angle (Phase 2: two zones surround the carousel), or
    ``None`` when the angle is within ``zone_margin_deg`` of a zone boundary ("not sure which
    zone": turn again)."""
    a = _norm(board_angle_deg)
    for edge in (board.sun_from_deg, board.sun_to_deg):
        if _gap(a, edge) < board.zone_margin_deg:
            return None
    sun_width = _ccw_distance(board.sun_from_deg, board.sun_to_deg)
    return "sun" if _ccw_distance(board.sun_from_deg, a) < sun_width else "rain"


def pointed_seat(layout: Layout, board: BoardZones, carousel_deg: float) -> int | None:
    """The seat Monsieur Carrousel's finger points at with the carousel at ``carousel_deg``
    (What if all of the seats ... are already taken?), or ``None`` when the finger is within
    ``seat_margin_deg`` of the line half-way between two seats ("not sure": turn again)."""
    gaps = sorted(
        (_gap(seat_board_angle(s, carousel_deg), board.finger_deg), s.index) for s in layout.seats
    )
    (g1, nearest), (g2, _) = gaps[0], gaps[1]
    # The line between two neighbouring seats lies half-way: (g2 - g1) / 2 from it.
    if (g2 - g1) / 2.0 < board.seat_margin_deg:
        return None
    return nearest


# --------------------------------------------------------------------------- observations


@event_type("game_start")
@dataclasses.dataclass(frozen=True, slots=True)
class GameStart(Observation):
    """The game begins (Set-Up, Gameplay).

    Attributes:
        players: 1 to 6 distinct names in clockwise order, the first player first (the one who
            most recently rode on a carousel).
        layout: the seating disc side in the carousel, ``"1A"`` ... ``"6B"``; null or left
            out = the referee's configured layout.
    """

    players: tuple[str, ...]
    layout: str | None = None


@event_type("die_rolled")
@dataclasses.dataclass(frozen=True, slots=True)
class DieRolled(Observation):
    """The die shows ``colour`` (a die colour), or ``"unknown"`` when the reader saw no
    colour or two (it abstains). Read by the camera in the dice tray or rolled by the
    electronic die button."""

    colour: str


@event_type("kid_seated")
@dataclasses.dataclass(frozen=True, slots=True)
class KidSeated(Observation):
    """A kid token was put on seat ``seat`` (0-11). ``kid``: the kid's name, or null (left
    out) when the reader cannot tell (the engine takes the kid it asked for)."""

    seat: int
    kid: str | None = None


#: Spin direction as the rotation reader writes it (``"ccw"``/``"cw"``) or as a signed turn
#: (+1 counter-clockwise, -1 clockwise); both are accepted.
Direction = Literal["ccw", "cw", 1, -1]


@event_type("spin_started")
@dataclasses.dataclass(frozen=True, slots=True)
class SpinStarted(Observation):
    """The carousel started turning (the rotation reader's message).

    Attributes:
        angle_deg: where it was at rest, degrees counter-clockwise from the disc's home mark.
        direction: ``"ccw"`` / +1 counter-clockwise, ``"cw"`` / -1 clockwise (optional).
    """

    angle_deg: float = 0.0
    direction: Direction = "ccw"


@event_type("spin_stopped")
@dataclasses.dataclass(frozen=True, slots=True)
class SpinStopped(Observation):
    """The carousel came to rest (the rotation reader's message).

    Attributes:
        angle_deg: the carousel's angle at rest, degrees counter-clockwise seen from above,
            from the disc's home mark (index magnet) to the board's reference line; any finite
            value (taken modulo 360).
        revolutions: turns made since the spin started (the sign is ignored).
        direction: ``"ccw"`` / +1 counter-clockwise, ``"cw"`` / -1 clockwise.
        uncertain: the reader cannot trust the angle or the turn (link dropped, no reference
            yet): the engine asks for the spin again instead of guessing.
        reason: why it is uncertain, in words (optional).
    """

    angle_deg: float
    revolutions: float
    direction: Direction = "ccw"
    uncertain: bool = False
    reason: str | None = None


@event_type("answer")
@dataclasses.dataclass(frozen=True, slots=True)
class Answer(Observation):
    """The kids pressed YES or NO; ``"both"`` when both were pressed together."""

    value: Literal["yes", "no", "both"]


@event_type("seats_seen")
@dataclasses.dataclass(frozen=True, slots=True)
class SeatsSeen(Observation):
    """The camera's reading of the carousel: the seats (0-11) with a kid token on them."""

    occupied: tuple[int, ...]


# --------------------------------------------------------------------------- calls


@event_type("game_started")
@dataclasses.dataclass(frozen=True, slots=True)
class GameStarted(Call):
    """The game is set up: players in clockwise order, the layout and its difficulty."""

    players: tuple[str, ...] = ()
    layout: str = ""
    difficulty: str = ""
    raindrops: int = 0


@event_type("turn")
@dataclasses.dataclass(frozen=True, slots=True)
class Turn(Call):
    """``player``'s turn begins: roll the die (Phase 1). ``kids_left``: kids not yet seated."""

    player: str = ""
    number: int = 0
    kids_left: int = 0


@event_type("roll_again")
@dataclasses.dataclass(frozen=True, slots=True)
class RollAgain(Call):
    """The die could not be read (no colour, two colours): roll it again."""

    player: str = ""


@event_type("twins_help")
@dataclasses.dataclass(frozen=True, slots=True)
class TwinsHelp(Call):
    """Getting Help from the Twins: one kid left, the die missed its seat: roll once more."""

    player: str = ""
    colour: str = ""
    twins: tuple[str, ...] = ()


@event_type("seat_kid")
@dataclasses.dataclass(frozen=True, slots=True)
class SeatKid(Call):
    """Put ``kid`` on an empty seat: one of ``seats`` (seat indices), ``colour`` rolled.
    ``seat`` and ``picture`` are the suggested seat (the first of ``seats``). ``pointed``:
    the seat is the one Monsieur Carrousel points at."""

    player: str = ""
    kid: str = ""
    colour: str = ""
    seats: tuple[int, ...] = ()
    seat: int = -1
    picture: str = ""
    pointed: bool = False


@event_type("kid_seated")
@dataclasses.dataclass(frozen=True, slots=True)
class KidOnSeat(Call):
    """``kid`` now sits on ``seat`` (its ``colour`` and ``picture``): "Lulu is on the lion!"."""

    player: str = ""
    kid: str = ""
    seat: int = -1
    colour: str = ""
    picture: str = ""
    seated: int = 0


@event_type("wrong_seat")
@dataclasses.dataclass(frozen=True, slots=True)
class WrongSeat(Call):
    """A kid was put on seat ``seat`` (``seat_colour``, ``picture``; ``taken`` when another kid
    already sits there) instead of an empty seat of ``colour`` (or, ``pointed``, instead of the
    seat Monsieur Carrousel points at): move the kid."""

    player: str = ""
    kid: str = ""
    seat: int = -1
    colour: str = ""
    seat_colour: str = ""
    picture: str = ""
    taken: bool = False
    pointed: bool = False


@event_type("spin")
@dataclasses.dataclass(frozen=True, slots=True)
class Spin(Call):
    """Turn the carousel. ``purpose``: ``weather`` (at least one full turn, watch ``kid``) or
    ``finger`` (all seats of ``colour`` taken: see where Monsieur Carrousel points)."""

    player: str = ""
    purpose: Literal["weather", "finger"] = "weather"
    kid: str = ""
    colour: str = ""


@event_type("spin_again")
@dataclasses.dataclass(frozen=True, slots=True)
class SpinAgain(Call):
    """Turn the carousel again. ``reason``: ``short`` (less than one full turn), ``zone`` (the
    kid stopped on a zone boundary), ``seat`` (the finger is between two seats), ``no_stop``
    (no stop reported within the spin timeout), ``uncertain`` (the rotation reader lost track)."""

    player: str = ""
    reason: Literal["short", "zone", "seat", "no_stop", "uncertain"] = "short"
    revolutions: float = 0.0


@event_type("memory_guess")
@dataclasses.dataclass(frozen=True, slots=True)
class MemoryGuess(Call):
    """Monsieur Carrousel points at ``kid`` on seat ``seat``: the players say which seat the
    kid sits on, lift the token, and press YES (right) or NO (wrong). The prompt must not say
    the ``picture``."""

    player: str = ""
    kid: str = ""
    seat: int = -1
    picture: str = ""


@event_type("guess_judged")
@dataclasses.dataclass(frozen=True, slots=True)
class GuessJudged(Call):
    """The memory guess was ``right`` or not; ``kid`` sits on ``picture``."""

    player: str = ""
    kid: str = ""
    right: bool = False
    picture: str = ""
    colour: str = ""


@event_type("weather")
@dataclasses.dataclass(frozen=True, slots=True)
class Weather(Call):
    """``kid`` stopped in the ``zone`` (``sun`` or ``rain``) (Phase 2)."""

    player: str = ""
    kid: str = ""
    zone: Literal["sun", "rain"] = "sun"


@event_type("sunbeam_fragment")
@dataclasses.dataclass(frozen=True, slots=True)
class SunbeamFragment(Call):
    """Put a sunbeam fragment on the board. ``ask``: the fragment may complete the sunbeam,
    a YES/NO question follows; else it starts a new sunbeam."""

    player: str = ""
    ask: bool = False
    sunbeams: int = 0


@event_type("sunbeam_judged")
@dataclasses.dataclass(frozen=True, slots=True)
class SunbeamJudged(Call):
    """The fragment ``complete``-d the sunbeam (a raindrop comes off when ``raindrop_removed``)
    or not (the fragment goes back beside the board)."""

    player: str = ""
    complete: bool = False
    raindrop_removed: bool = False
    sunbeams: int = 0
    raindrops: int = 0


@event_type("sun_high")
@dataclasses.dataclass(frozen=True, slots=True)
class SunHigh(Call):
    """Every sunbeam is complete: the sun is high, nothing happens."""

    player: str = ""


@event_type("raindrop")
@dataclasses.dataclass(frozen=True, slots=True)
class Raindrop(Call):
    """Put a raindrop on the board; ``raindrops`` now on it, ``left`` before the rain."""

    player: str = ""
    raindrops: int = 0
    left: int = 0


@event_type("answer_again")
@dataclasses.dataclass(frozen=True, slots=True)
class AnswerAgain(Call):
    """YES and NO were pressed together: press only one. ``question``: what was asked
    (``memory``, ``sunbeam``, ``seat``)."""

    question: str = ""


@event_type("seats_mismatch")
@dataclasses.dataclass(frozen=True, slots=True)
class SeatsMismatch(Call):
    """The camera sees kids on other seats than the game remembers; a grown-up should check.
    ``expected``: seats the game has taken; ``seen``: seats the camera sees taken."""

    expected: tuple[int, ...] = ()
    seen: tuple[int, ...] = ()


@event_type("game_won")
@dataclasses.dataclass(frozen=True, slots=True)
class GameWon(Call):
    """All kids are on the carousel before the rain (End of the Game)."""

    raindrops: int = 0
    turns: int = 0


@event_type("game_lost")
@dataclasses.dataclass(frozen=True, slots=True)
class GameLost(Call):
    """All raindrops are on the board with seats still empty (End of the Game)."""

    empty_seats: int = 0
    turns: int = 0


OBSERVATIONS = (GameStart, DieRolled, KidSeated, SpinStarted, SpinStopped, Answer, SeatsSeen)
CALLS = (
    GameStarted, Turn, RollAgain, TwinsHelp, SeatKid, KidOnSeat, WrongSeat, Spin, SpinAgain, MemoryGuess,
    GuessJudged, Weather, SunbeamFragment, SunbeamJudged, SunHigh, Raindrop, AnswerAgain,
    SeatsMismatch, GameWon, GameLost,
)


# --------------------------------------------------------------------------- state

Phase = Literal["setup", "roll", "seat", "spin_weather", "spin_finger", "memory", "sunbeam", "over"]


@dataclasses.dataclass(frozen=True, slots=True)
class MonsieurState:
    """An immutable game state.

    Attributes:
        phase: what the engine waits for: ``setup`` (game_start), ``roll`` (die_rolled),
            ``seat`` (kid_seated on one of ``choices``, or YES for the suggested seat),
            ``spin_weather`` / ``spin_finger`` (spin_stopped), ``memory`` / ``sunbeam`` (an
            answer), ``over``.
        players: clockwise order; ``current``: index of the player whose turn it is.
        layout: the seating disc side in play.
        seats: per seat index, the kid on it or ``None``.
        waiting: kids not yet on the carousel, in the order they are offered.
        raindrops: raindrops on the board; ``sunbeams``: complete sunbeams; ``fragments``:
            fragments in the sunbeam being built.
        kid: the kid of this turn (to seat, or seated and spinning).
        colour: the colour rolled this turn; ``choices``: seats the kid may take.
        pointed: the seat the finger points at (memory guess).
        twins_used: the twins' extra roll was used this turn.
        spin_t: when the current spin started (s), for the spin timeout; else ``None``.
        turn: turn number, 1-based.
        result: ``won``, ``lost`` or ``None``.
    """

    phase: Phase = "setup"
    players: tuple[str, ...] = ()
    current: int = 0
    layout: Layout | None = None
    seats: tuple[str | None, ...] = (None,) * 12
    waiting: tuple[str, ...] = ()
    raindrops: int = 0
    sunbeams: int = 0
    fragments: int = 0
    kid: str | None = None
    colour: str | None = None
    choices: tuple[int, ...] = ()
    pointed: int | None = None
    twins_used: bool = False
    spin_t: float | None = None
    turn: int = 0
    result: Literal["won", "lost"] | None = None

    @property
    def player(self) -> str:
        """The name of the player whose turn it is ("" before the game starts)."""
        return self.players[self.current] if self.players else ""

    @property
    def seated(self) -> int:
        """Kids on the carousel."""
        return sum(1 for k in self.seats if k is not None)

    def empty_seats(self, colour: str | None = None) -> tuple[int, ...]:
        """Indices of the empty seats (of one colour when given)."""
        assert self.layout is not None
        return tuple(
            s.index for s in self.layout.seats
            if self.seats[s.index] is None and (colour is None or s.colour == colour)
        )


# --------------------------------------------------------------------------- referee


class MonsieurCarrouselReferee:
    """The pure turn engine of Monsieur Carrousel (a :class:`companion.games.Referee`).

    Args:
        layout: the seating disc side used when ``game_start`` names none (``"1A"``-``"6B"``).
        table_file: the seat layouts and zones file; empty = ``calibration/monsieur_carrousel.toml``.
        twins_help: offer the twins' extra roll (Getting Help from the Twins).
        min_revolutions: a weather spin shorter than this many turns is repeated (Phase 2: at
            least one full turn).
        spin_timeout_s: seconds after ``spin_started`` without ``spin_stopped`` before the
            engine asks for another spin (a spin that never stops).

    Raises:
        TableError: the layouts file is wrong. ValueError: an unknown layout or a bad option.
    """

    name = "monsieur-carrousel"
    #: Calls that ask the table for the game's next step, said again when a game resumes after a
    #: restart if the newest step that made calls made one of them (the service's rule): the turn
    #: (roll the die), the die to roll again, the seat to fill or to change, the spin or the spin
    #: again, the memory question, the sunbeam fragment's question, the answer to give again.
    prompts = frozenset({"turn", "roll_again", "twins_help", "seat_kid", "wrong_seat", "spin", "spin_again",
                         "memory_guess", "sunbeam_fragment", "answer_again"})
    vocabulary = Vocabulary("monsieur-carrousel", OBSERVATIONS, CALLS)

    def __init__(
        self,
        layout: str = "1A",
        table_file: str = "",
        twins_help: bool = True,
        min_revolutions: float = 1.0,
        spin_timeout_s: float = 30.0,
    ):
        self.table = load_table(table_file or None)
        if layout not in self.table.layouts:
            raise ValueError(f"unknown layout {layout!r} (known: {', '.join(self.table.layouts)})")
        if not (0 < min_revolutions <= 10 and spin_timeout_s > 0):
            raise ValueError("min_revolutions must be in (0, 10] and spin_timeout_s > 0")
        self.layout = layout
        self.twins_help = twins_help
        self.min_revolutions = min_revolutions
        self.spin_timeout_s = spin_timeout_s

    # -- the Referee protocol -------------------------------------------------------------

    def initial_state(self) -> MonsieurState:
        """Waiting for ``game_start``."""
        return MonsieurState()

    def next_deadline(self, state: MonsieurState) -> float | None:
        """When a started spin must have stopped (s), else None."""
        if state.spin_t is not None and state.phase in ("spin_weather", "spin_finger"):
            return state.spin_t + self.spin_timeout_s
        return None

    def is_over(self, state: MonsieurState) -> bool:
        """True once the game is won or lost."""
        return state.result is not None

    def summary(self, state: MonsieurState) -> dict[str, Any]:
        """Phase, player, kids seated, raindrops, sunbeams and the result, for the console."""
        return {
            "phase": state.phase,
            "player": state.player,
            "turn": state.turn,
            "layout": state.layout.name if state.layout else "",
            "seated": state.seated,
            "raindrops": state.raindrops,
            "raindrops_max": self.table.raindrops,
            "sunbeams": state.sunbeams,
            "fragments": state.fragments,
            "kids_on_seats": {str(i): k for i, k in enumerate(state.seats) if k is not None},
            "result": state.result,
        }

    def apply(self, state: MonsieurState, observation: Observation) -> tuple[MonsieurState, list[Call]]:
        """Apply one observation; return the new state and its calls (see the module doc).

        An observation the game cannot take now (wrong phase, unknown seat or colour) gives an
        ``invalid_observation`` call and the unchanged state.
        """
        if state.phase == "over":
            if isinstance(observation, (Tick, SeatsSeen, SpinStarted, SpinStopped, Answer)):
                return state, []  # the table goes on moving after the end: nothing to call
            return state, [_invalid(observation, "the game is over")]
        if isinstance(observation, Tick):
            return self._tick(state, observation)
        if isinstance(observation, SeatsSeen):
            return self._seats_seen(state, observation)
        if isinstance(observation, SpinStarted):
            if state.phase in ("spin_weather", "spin_finger"):
                return dataclasses.replace(state, spin_t=observation.t), []
            return state, []  # a carousel turned between turns is nothing to referee
        if state.phase == "setup":
            if isinstance(observation, GameStart):
                return self._game_start(state, observation)
            return state, [_invalid(observation, "expected game_start first")]
        if isinstance(observation, GameStart):
            return state, [_invalid(observation, "the game has already started")]
        handler = {
            ("roll", DieRolled): self._die_rolled,
            ("seat", KidSeated): self._kid_seated,
            ("seat", Answer): self._seat_confirmed,
            ("spin_weather", SpinStopped): self._weather_spin,
            ("spin_finger", SpinStopped): self._finger_spin,
            ("memory", Answer): self._memory_answer,
            ("sunbeam", Answer): self._sunbeam_answer,
        }.get((state.phase, type(observation)))
        if handler is None:
            if isinstance(observation, (SpinStopped, Answer)):
                # The carousel turned, or a button was pressed, when nothing was asked: small
                # kids play with both; the journal keeps the observation, nothing is called.
                return state, []
            return state, [
                _invalid(observation, f"not expected now: waiting for {', '.join(expected_observations(state))}")
            ]
        return handler(state, observation)

    # -- handlers ------------------------------------------------------------------------

    def _game_start(self, state: MonsieurState, obs: GameStart) -> tuple[MonsieurState, list[Call]]:
        players = tuple(obs.players)
        # Monsieur Carrousel is for 1 to 6 players (publisher); names tell turns apart.
        if not 1 <= len(players) <= 6 or len(set(players)) != len(players) or not all(p.strip() for p in players):
            return state, [_invalid(obs, "players: expected 1 to 6 distinct non-empty names")]
        name = obs.layout or self.layout
        layout = self.table.layouts.get(name)
        if layout is None:
            return state, [_invalid(obs, f"layout: unknown layout {name!r} (known: {', '.join(self.table.layouts)})")]
        # Set-Up: every kid beside the board, the carousel empty; the first player starts.
        new = MonsieurState(
            phase="roll", players=players, current=0, layout=layout,
            seats=(None,) * len(layout.seats), waiting=self.table.kids, turn=1,
        )
        return new, [
            GameStarted(t=obs.t, players=players, layout=layout.name, difficulty=layout.difficulty,
                        raindrops=self.table.raindrops),
            Turn(t=obs.t, player=new.player, number=1, kids_left=len(new.waiting)),
        ]

    def _die_rolled(self, state: MonsieurState, obs: DieRolled) -> tuple[MonsieurState, list[Call]]:
        assert state.layout is not None
        t = obs.t
        if obs.colour == UNKNOWN:
            # A die read as no colour or two: ask for another roll (Bad input).
            return state, [RollAgain(t=t, player=state.player)]
        if obs.colour not in self.table.die_colours:
            return state, [_invalid(obs, f"colour: expected one of {', '.join(self.table.die_colours)} or unknown")]
        free = state.empty_seats(obs.colour)
        if free:
            # Phase 1: choose a kid not yet on the carousel; put it on an empty seat of the
            # rolled colour.
            return self._ask_seat(state, t, obs.colour, free, pointed=False)
        if self.twins_help and len(state.waiting) == 1 and not state.twins_used:
            # Getting Help from the Twins: only with one kid left, the die missed the empty
            # seat's colour: one more roll.
            new = dataclasses.replace(state, twins_used=True)
            return new, [TwinsHelp(t=t, player=state.player, colour=obs.colour, twins=self.table.twins)]
        # All seats of the rolled colour taken: turn the carousel, see where the finger points.
        new = dataclasses.replace(state, phase="spin_finger", colour=obs.colour, spin_t=None)
        return new, [Spin(t=t, player=state.player, purpose="finger", colour=obs.colour)]

    def _ask_seat(
        self, state: MonsieurState, t: float, colour: str, seats: tuple[int, ...], pointed: bool
    ) -> tuple[MonsieurState, list[Call]]:
        assert state.layout is not None
        kid = state.waiting[0]
        first = state.layout.seats[seats[0]]
        new = dataclasses.replace(state, phase="seat", kid=kid, colour=colour, choices=seats)
        return new, [
            SeatKid(t=t, player=state.player, kid=kid, colour=colour, seats=seats, seat=first.index,
                    picture=first.picture, pointed=pointed)
        ]

    def _kid_seated(self, state: MonsieurState, obs: KidSeated) -> tuple[MonsieurState, list[Call]]:
        assert state.layout is not None
        if 0 <= obs.seat < len(state.layout.seats) and obs.seat not in state.choices:
            # Phase 1: the kid must sit on an empty seat of the rolled colour (or on the seat
            # the finger points at): say so, and wait for the kid on a right seat.
            seat = state.layout.seats[obs.seat]
            return state, [
                WrongSeat(t=obs.t, player=state.player, kid=obs.kid or state.kid or "", seat=obs.seat,
                          colour=state.colour or "", seat_colour=seat.colour, picture=seat.picture,
                          taken=state.seats[obs.seat] is not None, pointed=state.pointed is not None)
            ]
        if obs.seat not in state.choices:
            what = "the seat Monsieur Carrousel points at" if state.pointed is not None else f"an empty {state.colour} seat"
            return state, [_invalid(obs, f"seat: expected {what} ({', '.join(map(str, state.choices))}), got {obs.seat}")]
        kid = obs.kid or state.kid
        # Phase 1: a kid token that is not yet on the carousel.
        if kid not in state.waiting:
            return state, [_invalid(obs, f"kid: {kid!r} is not waiting beside the board")]
        return self._seat(state, obs.t, kid, obs.seat)  # type: ignore[arg-type]

    def _seat_confirmed(self, state: MonsieurState, obs: Answer) -> tuple[MonsieurState, list[Call]]:
        # Without a camera the kids press YES once the kid sits on the suggested seat.
        if obs.value == "both":
            return state, [AnswerAgain(t=obs.t, question="seat")]
        if obs.value == "no":
            return state, [
                SeatKid(t=obs.t, player=state.player, kid=state.kid or "", colour=state.colour or "",
                        seats=state.choices, seat=state.choices[0],
                        picture=state.layout.seats[state.choices[0]].picture if state.layout else "",
                        pointed=state.pointed is not None)
            ]
        return self._seat(state, obs.t, state.kid or state.waiting[0], state.choices[0])

    def _seat(self, state: MonsieurState, t: float, kid: str, seat_index: int) -> tuple[MonsieurState, list[Call]]:
        assert state.layout is not None
        seat = state.layout.seats[seat_index]
        seats = list(state.seats)
        seats[seat_index] = kid
        waiting = tuple(k for k in state.waiting if k != kid)
        new = dataclasses.replace(
            state, seats=tuple(seats), waiting=waiting, kid=kid, choices=(), pointed=None,
            phase="spin_weather", spin_t=None,
        )
        calls: list[Call] = [
            KidOnSeat(t=t, player=state.player, kid=kid, seat=seat_index, colour=seat.colour,
                      picture=seat.picture, seated=new.seated)
        ]
        if not waiting:
            # End of the Game: every kid is on the carousel while the rain zone is incomplete
            # (it always is during a turn: a full one ends the game at the end of a turn).
            return dataclasses.replace(new, phase="over", result="won"), calls + [
                GameWon(t=t, raindrops=state.raindrops, turns=state.turn)
            ]
        # Phase 2: turn the carousel, at least one full turn, and watch the kid.
        return new, calls + [Spin(t=t, player=state.player, purpose="weather", kid=kid)]

    def _spin_long_enough(self, state: MonsieurState, obs: SpinStopped) -> list[Call]:
        if obs.uncertain:
            # The reader lost track of the carousel: turn again rather than guess (DESIGN.md:
            # readers never guess).
            return [SpinAgain(t=obs.t, player=state.player, reason="uncertain", revolutions=abs(obs.revolutions))]
        # Phase 2: the carousel must complete at least one full turn; DESIGN.md: a shorter
        # spin is repeated (the finger's spin too).
        if abs(obs.revolutions) < self.min_revolutions:
            return [SpinAgain(t=obs.t, player=state.player, reason="short", revolutions=abs(obs.revolutions))]
        return []

    def _weather_spin(self, state: MonsieurState, obs: SpinStopped) -> tuple[MonsieurState, list[Call]]:
        assert state.layout is not None and state.kid is not None
        again = self._spin_long_enough(state, obs)
        if again:
            return dataclasses.replace(state, spin_t=None), again
        seat = state.layout.seats[state.seats.index(state.kid)]
        zone = zone_at(self.table.board, seat_board_angle(seat, obs.angle_deg))
        if zone is None:
            # Phase 2, Note: not sure which zone the kid is in: turn the carousel again.
            return dataclasses.replace(state, spin_t=None), [
                SpinAgain(t=obs.t, player=state.player, reason="zone", revolutions=abs(obs.revolutions))
            ]
        calls: list[Call] = [Weather(t=obs.t, player=state.player, kid=state.kid, zone=zone)]
        if zone == "rain":
            # Rain zone: place a raindrop; the next player's turn.
            new, more = self._raindrop(state, obs.t)
            return self._end_turn(new, obs.t, calls + more)
        # Sun zone: place a sunbeam fragment.
        return self._sun(state, obs.t, calls)

    def _finger_spin(self, state: MonsieurState, obs: SpinStopped) -> tuple[MonsieurState, list[Call]]:
        assert state.layout is not None
        again = self._spin_long_enough(state, obs)
        if again:
            return dataclasses.replace(state, spin_t=None), again
        seat = pointed_seat(state.layout, self.table.board, obs.angle_deg)
        if seat is None:
            # Note: not sure which seat Monsieur Carrousel points at: turn the carousel again.
            return dataclasses.replace(state, spin_t=None), [
                SpinAgain(t=obs.t, player=state.player, reason="seat", revolutions=abs(obs.revolutions))
            ]
        kid = state.seats[seat]
        colour = state.layout.seats[seat].colour
        if kid is None:
            # If the seat is empty: seat a kid there, then Phase 2 (DESIGN.md ruling).
            new = dataclasses.replace(state, spin_t=None, pointed=seat)
            return self._ask_seat(new, obs.t, colour, (seat,), pointed=True)
        # If the seat already has a kid token on it: the memory guess.
        new = dataclasses.replace(state, phase="memory", pointed=seat, spin_t=None)
        return new, [
            MemoryGuess(t=obs.t, player=state.player, kid=kid, seat=seat, picture=state.layout.seats[seat].picture)
        ]

    def _memory_answer(self, state: MonsieurState, obs: Answer) -> tuple[MonsieurState, list[Call]]:
        assert state.layout is not None and state.pointed is not None
        if obs.value == "both":
            return state, [AnswerAgain(t=obs.t, question="memory")]
        seat = state.layout.seats[state.pointed]
        kid = state.seats[state.pointed] or ""
        right = obs.value == "yes"
        calls: list[Call] = [
            GuessJudged(t=obs.t, player=state.player, kid=kid, right=right, picture=seat.picture, colour=seat.colour)
        ]
        new = dataclasses.replace(state, pointed=None)
        if right:
            # Right guess: a sunbeam fragment, placed as in the Sun zone.
            return self._sun(new, obs.t, calls)
        # Wrong guess: a raindrop; the turn is over.
        new, more = self._raindrop(new, obs.t)
        return self._end_turn(new, obs.t, calls + more)

    def _sun(self, state: MonsieurState, t: float, calls: list[Call]) -> tuple[MonsieurState, list[Call]]:
        if state.sunbeams >= self.table.sunbeams:
            # Sun zone, Note: every sunbeam complete: nothing happens.
            return self._end_turn(state, t, calls + [SunHigh(t=t, player=state.player)])
        # A sunbeam must be complete before a new one starts: fragments go into the current one.
        ask = state.fragments + 1 >= self.table.fragments_per_sunbeam
        call = SunbeamFragment(t=t, player=state.player, ask=ask, sunbeams=state.sunbeams)
        if not ask:
            # The first fragment of an empty trough cannot complete it; it stays (DESIGN ruling
            # in docs/monsieur-carrousel.md).
            return self._end_turn(dataclasses.replace(state, fragments=state.fragments + 1), t, calls + [call])
        # How to complete a sunbeam: the players see whether the fragment fits; YES/NO.
        return dataclasses.replace(state, phase="sunbeam"), calls + [call]

    def _sunbeam_answer(self, state: MonsieurState, obs: Answer) -> tuple[MonsieurState, list[Call]]:
        if obs.value == "both":
            return state, [AnswerAgain(t=obs.t, question="sunbeam")]
        if obs.value == "yes":
            # The fragment completes the sunbeam: the sun appears, one raindrop comes off.
            removed = state.raindrops > 0
            new = dataclasses.replace(
                state, sunbeams=state.sunbeams + 1, fragments=0,
                raindrops=state.raindrops - (1 if removed else 0),
            )
            call = SunbeamJudged(t=obs.t, player=state.player, complete=True, raindrop_removed=removed,
                                 sunbeams=new.sunbeams, raindrops=new.raindrops)
        else:
            # Too short or too long: the fragment goes back beside the board.
            new = state
            call = SunbeamJudged(t=obs.t, player=state.player, complete=False, raindrop_removed=False,
                                 sunbeams=state.sunbeams, raindrops=state.raindrops)
        # In either case the turn is over.
        return self._end_turn(new, obs.t, [call])

    def _raindrop(self, state: MonsieurState, t: float) -> tuple[MonsieurState, list[Call]]:
        drops = min(state.raindrops + 1, self.table.raindrops)
        new = dataclasses.replace(state, raindrops=drops)
        return new, [Raindrop(t=t, player=state.player, raindrops=drops, left=self.table.raindrops - drops)]

    def _end_turn(self, state: MonsieurState, t: float, calls: list[Call]) -> tuple[MonsieurState, list[Call]]:
        empty = len(state.empty_seats())
        # End of the Game: all raindrops placed at the end of a turn with seats still empty.
        if state.raindrops >= self.table.raindrops and empty:
            return dataclasses.replace(state, phase="over", result="lost", spin_t=None), calls + [
                GameLost(t=t, empty_seats=empty, turns=state.turn)
            ]
        # Gameplay: play in a clockwise direction.
        nxt = (state.current + 1) % len(state.players)
        new = dataclasses.replace(
            state, phase="roll", current=nxt, turn=state.turn + 1, kid=None, colour=None,
            choices=(), pointed=None, twins_used=False, spin_t=None,
        )
        return new, calls + [Turn(t=t, player=new.player, number=new.turn, kids_left=len(new.waiting))]

    def _tick(self, state: MonsieurState, obs: Tick) -> tuple[MonsieurState, list[Call]]:
        due = self.next_deadline(state)
        if due is not None and obs.t >= due:
            # A spin that never stops: ask for another and restart the wait.
            return dataclasses.replace(state, spin_t=None), [
                SpinAgain(t=due, player=state.player, reason="no_stop", revolutions=0.0)
            ]
        return state, []

    def _seats_seen(self, state: MonsieurState, obs: SeatsSeen) -> tuple[MonsieurState, list[Call]]:
        if state.layout is None:
            return state, [_invalid(obs, "expected game_start first")]
        bad = [s for s in obs.occupied if not 0 <= s < len(state.seats)]
        if bad:
            return state, [_invalid(obs, f"occupied: seat {bad[0]} is not a seat (0-{len(state.seats) - 1})")]
        expected = tuple(i for i, k in enumerate(state.seats) if k is not None)
        seen = tuple(sorted(set(obs.occupied)))
        if seen == expected:
            return state, []
        # The game's memory stands (the journal has every seat); a grown-up checks the table.
        return state, [SeatsMismatch(t=obs.t, expected=expected, seen=seen)]


_invalid = InvalidObservation.rejecting


# --------------------------------------------------------------------------- chance (OpenSpiel style)


def current_player(state: MonsieurState) -> str:
    """Whose move it is: :data:`CHANCE` while the die or a spin decides, :data:`TERMINAL` once
    the game is over, else the name of the player who must act (seat a kid, answer)."""
    if state.phase == "over":
        return TERMINAL
    if state.phase in ("roll", "spin_weather", "spin_finger"):
        return CHANCE
    return state.player


def expected_observations(state: MonsieurState) -> tuple[str, ...]:
    """The observation types the engine accepts now (besides ``tick`` and ``seats_seen``)."""
    return {
        "setup": ("game_start",),
        "roll": ("die_rolled",),
        "seat": ("kid_seated", "answer"),
        "spin_weather": ("spin_started", "spin_stopped"),
        "spin_finger": ("spin_started", "spin_stopped"),
        "memory": ("answer",),
        "sunbeam": ("answer",),
        "over": (),
    }[state.phase]


def chance_outcomes(
    referee: MonsieurCarrouselReferee, state: MonsieurState, step_deg: float = 1.0
) -> list[tuple[str | float, float]]:
    """The chance outcomes of the current state with their probabilities (summing to 1).

    * ``roll``: each die colour, 1/6 (a fair six-coloured die).
    * ``spin_weather`` / ``spin_finger``: the carousel's resting angle (degrees), uniform on
      [0, 360) in bins of ``step_deg``, each given by its centre.
    * otherwise: ``[]`` (a player acts, or the game is over).
    """
    if state.phase == "roll":
        p = 1.0 / len(referee.table.die_colours)
        return [(c, p) for c in referee.table.die_colours]
    if state.phase in ("spin_weather", "spin_finger"):
        n = max(1, round(360.0 / step_deg))
        return [((i + 0.5) * 360.0 / n, 1.0 / n) for i in range(n)]
    return []


def spin_outcome_probabilities(
    referee: MonsieurCarrouselReferee, state: MonsieurState, step_deg: float = 0.25
) -> dict[str, float]:
    """What a full-length spin leads to from this state, with probabilities, integrating the
    uniform resting angle in bins of ``step_deg``.

    ``spin_weather``: keys ``sun``, ``rain``, ``again`` (a stop too near a zone boundary).
    ``spin_finger``: keys ``empty``, ``taken``, ``again``. Other phases: ``{}``.
    """
    if state.phase not in ("spin_weather", "spin_finger") or state.layout is None:
        return {}
    out: dict[str, float] = {}
    outcomes = chance_outcomes(referee, state, step_deg)
    for angle, p in outcomes:
        assert isinstance(angle, float)
        if state.phase == "spin_weather":
            seat = state.layout.seats[state.seats.index(state.kid)]
            key = zone_at(referee.table.board, seat_board_angle(seat, angle)) or "again"
        else:
            s = pointed_seat(state.layout, referee.table.board, angle)
            key = "again" if s is None else ("empty" if state.seats[s] is None else "taken")
        out[key] = out.get(key, 0.0) + p
    return {k: v for k, v in sorted(out.items()) if not math.isclose(v, 0.0)}


def seat_for(layout: Layout, board: BoardZones, seat: int, zone: Literal["sun", "rain"] | None = None,
             finger: bool = False) -> float:
    """A carousel angle (degrees) that puts ``seat`` in the middle of ``zone`` or under the
    finger (``finger=True``): what a test or the simulated table uses to stage a stop."""
    s = layout.seats[seat]
    if finger:
        target = board.finger_deg
    else:
        width = _ccw_distance(board.sun_from_deg, board.sun_to_deg)
        if zone == "sun":
            target = board.sun_from_deg + width / 2.0
        else:
            target = board.sun_to_deg + (360.0 - width) / 2.0
    return _norm(target - s.angle_deg)


def replay_seats(layout: Layout, seated: Sequence[tuple[str, int]]) -> tuple[str | None, ...]:
    """The seats tuple after seating ``(kid, seat)`` pairs in order (a helper for tests and
    the simulated table)."""
    seats: list[str | None] = [None] * len(layout.seats)
    for kid, i in seated:
        seats[i] = kid
    return tuple(seats)
