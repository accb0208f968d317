"""Carrossel (MEBO Games 2019): the rules engine.

Rulebook: ``shared/rules/carrossel.txt``; its sections are named in the comments (Setup, Phase
1 - Play, Phase 2 - Score, Phase 3 - Rotate, Phase 4 - Score, END of the game, Rules for 2
Players, Rules for 3 Players, OBJECTIVE cards, Client Card abilities). Rulings where the
rulebook leaves room, and the observation/call vocabulary: ``docs/carrossel.md``.

The physical game (board sides, slot numbering, seats, client cards, objective cards) is data:
``calibration/carrossel.toml``, loaded by :func:`load_game_data`. Values that are not public are
marked as assumptions there; changing the file changes the game without code.

Layers, as in python-chess:

* :class:`GameData` and :class:`BoardSide` - the cards and the board geometry (cells, rows and
  columns, the triples that make a sequence, a diagonal or an "L").
* Pure rule functions over a :class:`CarrosselState`: :func:`legal_plays`,
  :func:`scoring_options` (the sequences a sector must score and who may get which client),
  :func:`final_scores` (clients, objectives, tie-breaks), :func:`check_invariants`.
* Rotation as pure logic: :func:`sectors_facing` (which sector faces which seat at a board
  angle) and :func:`judge_turn` (was the board turned the expected quarter, third or half turn,
  the right way?). The angle comes from the rotation source as a ``board_turned`` observation.
* :class:`CarrosselReferee` - ``apply(state, observation) -> (state, calls)``; time arrives with
  each observation, the engine never reads a clock. Bad input gives an ``invalid_observation``
  or ``illegal_play`` call and leaves the state unchanged; it never raises.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import random
import tomllib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple

from companion.calibration_dir import calibration_path, shipped_path
from companion.config import ConfigError
from companion.events import Call, InvalidObservation, Observation, Tick, Vocabulary, event_type

__all__ = [
    "ANIMALS",
    "ABILITIES",
    "NEUTRAL",
    "DEFAULT_DATA",
    "GameDataError",
    "StateError",
    "Client",
    "Objective",
    "Cell",
    "BoardSide",
    "GameData",
    "load_game_data",
    "Play",
    "ScoringOption",
    "PlayerState",
    "CarrosselState",
    "TurnVerdict",
    "sectors_facing",
    "judge_turn",
    "wrap_deg",
    "legal_plays",
    "check_play",
    "can_play",
    "placement",
    "player_sectors",
    "nominal_angle",
    "option_text",
    "options_text",
    "scoring_options",
    "final_scores",
    "objective_sets",
    "check_invariants",
    "table_json",
    "table_from_json",
    "CarrosselReferee",
]

#: The five animals (Game Components): four kinds and the Dragon (a joker on tiles).
ANIMALS: tuple[str, ...] = ("tiger", "fish", "swan", "horse", "dragon")
_ANIMAL_INDEX = {a: i for i, a in enumerate(ANIMALS)}
#: The ability of a client card, by its animal (Client Card abilities).
ABILITIES: dict[str, str] = {
    "tiger": "jump",
    "swan": "recover",
    "horse": "single_ticket",
    "fish": "remove_clients",
    "dragon": "reverse_rotation",
}
#: Owner of the tiles of the non-player colour with 3 players (Rules for 3 Players).
NEUTRAL = "neutral"
#: The game data shipped in the package (read-only); the referee reads the calibration
#: folder's ``carrossel.toml`` when there is one (:func:`companion.calibration_dir.calibration_path`).
DEFAULT_DATA = shipped_path("carrossel.toml")

Tile = tuple[str, str]  # (colour, animal)


class GameDataError(ConfigError, ValueError):
    """The game data file is unreadable or a value in it is wrong; the message names the file,
    the key and what was expected. A :class:`~companion.config.ConfigError`, so the command
    line reports it as one line (exit status 2)."""


class StateError(ValueError):
    """A Carrossel state (or table file) that breaks the game's invariants; the message names
    the field and what was expected."""


# ------------------------------------------------------------------------------- game data


@dataclasses.dataclass(frozen=True, slots=True)
class Client:
    """One client card (Game Components).

    Attributes:
        id: 1-based card number in the data file.
        animal: one of :data:`ANIMALS`; the ability follows from it (:data:`ABILITIES`).
        vp: victory points at the end of the game.
        two_player_removed: carries the two-player symbol (removed with 2 players).
    """

    id: int
    animal: str
    vp: int
    two_player_removed: bool = False

    def __str__(self) -> str:
        return f"{self.animal}#{self.id}({self.vp}VP)"


@dataclasses.dataclass(frozen=True, slots=True)
class Objective:
    """One objective card (OBJECTIVE cards).

    Attributes:
        id: card number in the data file.
        kind: ``clients_set``, ``clients_three``, ``clients_pair`` (sets of won client cards of
            the shown ``animals``) or ``tiles_line``, ``tiles_diagonal``, ``tiles_l`` (sets of 3
            of the player's own tiles in that shape, ``match`` ``"any"`` or ``"same"`` animal).
        vp: VP per set.
        animals: the client animals shown (client kinds), a multiset.
        match: for tile kinds.
    """

    id: int
    kind: str
    vp: int
    animals: tuple[str, ...] = ()
    match: str = "any"

    def __str__(self) -> str:
        what = "+".join(self.animals) if self.animals else self.match
        return f"#{self.id} {self.kind}({what})"


CLIENT_KINDS = ("clients_set", "clients_three", "clients_pair")
TILE_KINDS = ("tiles_line", "tiles_diagonal", "tiles_l")


@dataclasses.dataclass(frozen=True, slots=True)
class Cell:
    """One slot of the round board.

    Attributes:
        index: position in :attr:`BoardSide.cells`.
        name: sector letter + slot number (``"A7"``), or + ``n`` + index for an un-numbered slot.
        row, col: grid coordinates seen from above, row 0 at the top.
        sector: the sector letter.
        slot: the slot number 1-12, or None for an un-numbered slot (3-player side).
    """

    index: int
    name: str
    row: int
    col: int
    sector: str
    slot: int | None


@dataclasses.dataclass(frozen=True)
class BoardSide:
    """One side of the round board and everything derived from its grid.

    Attributes:
        name: ``"four"`` (4 and 2 players) or ``"three"``.
        sectors: sector letters in clockwise order.
        bearing_deg: bearing (degrees clockwise from the reference mark) of each sector's middle
            when the board stands at angle 0.
        cells: every slot.
        lines: triples of cells adjacent in a row or column (Phase 2 - Score: a sequence).
        diagonals: triples in a diagonal line; ``l_shapes``: triples in an "L" (OBJECTIVE cards).
    """

    name: str
    sectors: tuple[str, ...]
    bearing_deg: Mapping[str, float]
    cells: tuple[Cell, ...]
    lines: tuple[tuple[int, int, int], ...]
    diagonals: tuple[tuple[int, int, int], ...]
    l_shapes: tuple[tuple[int, int, int], ...]
    by_name: Mapping[str, int]
    slot_cell: Mapping[tuple[str, int], int]
    lines_touching: Mapping[str, tuple[tuple[int, int, int], ...]]

    @functools.cached_property
    def cell_names(self) -> tuple[str, ...]:
        """The name of each cell, by index."""
        return tuple(c.name for c in self.cells)

    def cell(self, name: str) -> Cell:
        """The cell of that name; KeyError when the board has none."""
        return self.cells[self.by_name[name]]

    @property
    def step_deg(self) -> float:
        """One sector's turn in degrees: 90 on the 4-sector side, 120 on the 3-sector side."""
        return 360.0 / len(self.sectors)


@dataclasses.dataclass(frozen=True)
class GameData:
    """The physical game as read from ``calibration/carrossel.toml`` (see its comments).

    Attributes:
        colours: the four player colours.
        per_colour: tiles of each animal per colour (rulebook: 3 of each kind, 2 Dragons).
        slot_numbers: the numbers on a colour's slot cards (1-12).
        first_round: slot numbers allowed in the first round (4, 5, 9, 10).
        booth_size: clients in front of each booth (3); ``queue_size``: 2-player queue (3).
        start_direction: +1 clockwise, -1 counter-clockwise.
        boards: ``{"four": BoardSide, "three": BoardSide}``.
        seats: bearing (degrees) of each seat, per player count.
        clients: id -> :class:`Client`; ``dragon``: the Dragon card's id.
        objectives: id -> :class:`Objective`; ``objectives_in_play``: 4.
    """

    colours: tuple[str, ...]
    per_colour: Mapping[str, int]
    slot_numbers: tuple[int, ...]
    first_round: tuple[int, ...]
    booth_size: int
    queue_size: int
    start_direction: int
    boards: Mapping[str, BoardSide]
    seats: Mapping[int, tuple[float, ...]]
    clients: Mapping[int, Client]
    dragon: int
    objectives: Mapping[int, Objective]
    objectives_in_play: int
    source: str = ""

    @functools.cached_property
    def client_labels(self) -> dict[int, str]:
        """``animal#id`` of each client card, as used in option texts."""
        return {c.id: f"{c.animal}#{c.id}" for c in self.clients.values()}

    @property
    def tiles_per_colour(self) -> int:
        """Tiles of one colour (14)."""
        return sum(self.per_colour.values())

    def side_for(self, n_players: int) -> BoardSide:
        """The board side for a player count (Rules for 3 Players: the 3-player side)."""
        return self.boards["three" if n_players == 3 else "four"]

    def deck_cards(self, n_players: int) -> tuple[int, ...]:
        """Client ids in play (Rules for 2 Players: the marked cards are removed)."""
        return tuple(
            c.id for c in self.clients.values() if not (n_players == 2 and c.two_player_removed)
        )


def _need(cond: bool, where: str, message: str) -> None:
    if not cond:
        raise GameDataError(f"{where}: {message}")


def _get(table: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in table:
        raise GameDataError(f"{where}: key '{key}' is missing")
    value = table[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise GameDataError(
            f"{where}: key '{key}': expected {getattr(kind, '__name__', kind)}, got {value!r}"
        )
    return value


def _board_side(
    name: str, table: Mapping[str, Any], where: str, slot_numbers: Sequence[int]
) -> BoardSide:
    where = f"{where}: [board.{name}]"
    sectors = tuple(_get(table, "sectors", list, where))
    _need(
        len(sectors) >= 2 and len(set(sectors)) == len(sectors),
        where,
        "sectors: expected distinct letters",
    )
    bearings = _get(table, "bearing_deg", dict, where)
    _need(
        set(bearings) == set(sectors),
        where,
        f"bearing_deg: expected one bearing for each of {', '.join(sectors)}",
    )
    grid = _get(table, "grid", list, where)
    cells: list[Cell] = []
    by_pos: dict[tuple[int, int], int] = {}
    width = None
    for r, row in enumerate(grid):
        tokens = str(row).split()
        if width is None:
            width = len(tokens)
        _need(
            len(tokens) == width,
            where,
            f"grid row {r + 1}: expected {width} cells, got {len(tokens)}",
        )
        for c, token in enumerate(tokens):
            if token == ".":
                continue
            sector = token[0]
            _need(
                sector in sectors,
                where,
                f"grid row {r + 1}: cell {token!r}: unknown sector {sector!r}",
            )
            rest = token[1:]
            if rest.startswith("n") and rest[1:].isdigit():
                slot = None
            else:
                _need(
                    rest.isdigit() and int(rest) in slot_numbers,
                    where,
                    f"grid row {r + 1}: cell {token!r}: expected a sector letter and a slot number 1-12 or n<index>",
                )
                slot = int(rest)
            cells.append(Cell(len(cells), token, r, c, sector, slot))
            by_pos[(r, c)] = len(cells) - 1
    by_name: dict[str, int] = {}
    slot_cell: dict[tuple[str, int], int] = {}
    for cell in cells:
        _need(cell.name not in by_name, where, f"grid: cell {cell.name} appears twice")
        by_name[cell.name] = cell.index
        if cell.slot is not None:
            slot_cell[(cell.sector, cell.slot)] = cell.index
    for s in sectors:
        for n in slot_numbers:
            _need((s, n) in slot_cell, where, f"grid: sector {s} has no slot {n}")

    def triples(
        steps: Iterable[tuple[tuple[int, int], tuple[int, int]]],
    ) -> list[tuple[int, int, int]]:
        out = set()
        for (r, c), i in by_pos.items():
            for d1, d2 in steps:
                a, b = (r + d1[0], c + d1[1]), (r + d2[0], c + d2[1])
                if a in by_pos and b in by_pos:
                    out.add(tuple(sorted((i, by_pos[a], by_pos[b]))))
        return sorted(out)  # type: ignore[arg-type]

    lines = triples([((0, 1), (0, 2)), ((1, 0), (2, 0))])
    diagonals = triples([((1, 1), (2, 2)), ((1, -1), (2, -2))])
    # An "L": a corner cell with one neighbour in its row and one in its column.
    l_shapes = triples([((0, dc), (dr, 0)) for dr in (-1, 1) for dc in (-1, 1)])
    touching = {s: tuple(t for t in lines if any(cells[i].sector == s for i in t)) for s in sectors}
    return BoardSide(
        name=name,
        sectors=sectors,
        bearing_deg={s: float(bearings[s]) for s in sectors},
        cells=tuple(cells),
        lines=tuple(lines),
        diagonals=tuple(diagonals),
        l_shapes=tuple(l_shapes),
        by_name=by_name,
        slot_cell=slot_cell,
        lines_touching=touching,
    )


@functools.lru_cache(maxsize=8)
def load_game_data(path: str | Path = DEFAULT_DATA) -> GameData:
    """Read and check the game data file (TOML; format in ``calibration/carrossel.toml``).

    Raises:
        GameDataError: the file is missing, not TOML, or a value is wrong (names the key).
    """
    p = Path(path)
    where = str(p)
    try:
        doc = tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise GameDataError(f"{where}: cannot read: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise GameDataError(f"{where}: not valid TOML: {exc}") from None
    _need(doc.get("format") == 1, where, "format: expected 1")
    tiles = _get(doc, "tiles", dict, where)
    colours = tuple(_get(tiles, "colours", list, f"{where}: [tiles]"))
    _need(
        len(colours) == 4 and len(set(colours)) == 4,
        where,
        "[tiles] colours: expected 4 distinct colours",
    )
    per_colour = _get(tiles, "per_colour", dict, f"{where}: [tiles]")
    _need(
        set(per_colour) == set(ANIMALS)
        and all(isinstance(v, int) and v >= 0 for v in per_colour.values()),
        where,
        f"[tiles] per_colour: expected a count for each of {', '.join(ANIMALS)}",
    )
    slots = _get(doc, "slot_cards", dict, where)
    numbers = tuple(_get(slots, "numbers", list, f"{where}: [slot_cards]"))
    _need(
        numbers
        and all(isinstance(n, int) and n > 0 for n in numbers)
        and len(set(numbers)) == len(numbers),
        where,
        "[slot_cards] numbers: expected distinct positive integers",
    )
    first = tuple(_get(slots, "first_round", list, f"{where}: [slot_cards]"))
    _need(
        set(first) <= set(numbers) and first,
        where,
        "[slot_cards] first_round: expected slot numbers",
    )
    booth = _get(doc, "booth", dict, where)
    booth_size = _get(booth, "clients", int, f"{where}: [booth]")
    queue_size = _get(booth, "two_player_queue", int, f"{where}: [booth]")
    # Phase 2 - Score: a sequence of 3 tiles takes the booth's clients, so a booth holds 3.
    _need(
        booth_size == 3,
        where,
        f"[booth] clients: expected 3 (a sequence is 3 tiles), got {booth_size}",
    )
    rot = _get(doc, "rotation", dict, where)
    direction = _get(rot, "start_direction", str, f"{where}: [rotation]")
    _need(
        direction in ("clockwise", "counterclockwise"),
        where,
        "[rotation] start_direction: expected 'clockwise' or 'counterclockwise'",
    )
    boards_t = _get(doc, "board", dict, where)
    boards = {
        n: _board_side(n, _get(boards_t, n, dict, f"{where}: [board]"), where, numbers)
        for n in ("four", "three")
    }
    seats_t = _get(doc, "seats", dict, where)
    seats = {}
    for n, key in ((2, "two"), (3, "three"), (4, "four")):
        v = _get(seats_t, key, list, f"{where}: [seats]")
        _need(
            len(v) == n and all(isinstance(x, (int, float)) for x in v),
            where,
            f"[seats] {key}: expected {n} bearings",
        )
        seats[n] = tuple(float(x) for x in v)
    cards = _get(_get(doc, "clients", dict, where), "cards", list, f"{where}: [clients]")
    clients: dict[int, Client] = {}
    for k, c in enumerate(cards, start=1):
        w = f"{where}: [clients] card {k}"
        _need(isinstance(c, dict), w, "expected a table")
        cid = _get(c, "id", int, w)
        animal = _get(c, "animal", str, w)
        _need(animal in ANIMALS, w, f"animal: expected one of {', '.join(ANIMALS)}, got {animal!r}")
        _need(cid not in clients, w, f"id {cid} appears twice")
        clients[cid] = Client(
            cid, animal, _get(c, "vp", int, w), bool(c.get("two_player_removed", False))
        )
    dragons = [c.id for c in clients.values() if c.animal == "dragon"]
    _need(
        len(dragons) == 1, where, f"[clients]: expected exactly one Dragon card, got {len(dragons)}"
    )
    obj_t = _get(doc, "objectives", dict, where)
    in_play = _get(obj_t, "in_play", int, f"{where}: [objectives]")
    objectives: dict[int, Objective] = {}
    for k, o in enumerate(_get(obj_t, "cards", list, f"{where}: [objectives]"), start=1):
        w = f"{where}: [objectives] card {k}"
        _need(isinstance(o, dict), w, "expected a table")
        oid = _get(o, "id", int, w)
        kind = _get(o, "kind", str, w)
        _need(
            kind in CLIENT_KINDS + TILE_KINDS,
            w,
            f"kind: expected one of {', '.join(CLIENT_KINDS + TILE_KINDS)}",
        )
        animals = tuple(o.get("animals", ()))
        _need(all(a in ANIMALS for a in animals), w, "animals: expected animal names")
        if kind in CLIENT_KINDS:
            _need(bool(animals), w, "animals: a client objective shows at least one animal")
        if kind == "clients_three":
            _need(
                len(set(animals)) == 1 and len(animals) == 3,
                w,
                "animals: expected three of one animal",
            )
        match = o.get("match", "any")
        _need(match in ("any", "same"), w, "match: expected 'any' or 'same'")
        _need(oid not in objectives, w, f"id {oid} appears twice")
        objectives[oid] = Objective(oid, kind, _get(o, "vp", int, w), animals, match)
    _need(
        0 < in_play <= len(objectives),
        where,
        "[objectives] in_play: expected 1 to the number of cards",
    )
    return GameData(
        colours=colours,
        per_colour={a: per_colour[a] for a in ANIMALS},
        slot_numbers=numbers,
        first_round=first,
        booth_size=booth_size,
        queue_size=queue_size,
        start_direction=1 if direction == "clockwise" else -1,
        boards=boards,
        seats=seats,
        clients=clients,
        dragon=dragons[0],
        objectives=objectives,
        objectives_in_play=in_play,
        source=where,
    )


# --------------------------------------------------------------------------------- rotation


def wrap_deg(angle: float) -> float:
    """An angle difference folded into [-180, 180) degrees."""
    return (angle + 180.0) % 360.0 - 180.0


def sectors_facing(
    side: BoardSide, seats_deg: Sequence[float], angle_deg: float, margin_deg: float = 0.0
) -> dict[str, int] | None:
    """Which seat each sector faces when the board stands at ``angle_deg``.

    Args:
        side: the board side in use.
        seats_deg: bearing of each seat (degrees clockwise from the reference mark), seat order.
        angle_deg: the board's angle, degrees clockwise seen from above, 0 = setup orientation
            (Setup 1: each player before a distinct sector).
        margin_deg: a sector whose middle is within this many degrees of being as near to two
            seats makes the answer ambiguous.

    Returns:
        ``{sector letter: seat index}``, or None when ambiguous (the board stands between two
        positions).
    """
    out: dict[str, int] = {}
    for s in side.sectors:
        bearing = side.bearing_deg[s] + angle_deg
        dists = sorted((abs(wrap_deg(bearing - seat)), k) for k, seat in enumerate(seats_deg))
        if len(dists) > 1 and dists[1][0] - dists[0][0] <= 2 * margin_deg:
            return None
        out[s] = dists[0][1]
    return out


@dataclasses.dataclass(frozen=True, slots=True)
class TurnVerdict:
    """What :func:`judge_turn` made of an observed board angle.

    Attributes:
        verdict: ``"done"`` (turned as expected), ``"not_turned"`` (still at the start angle),
            ``"wrong_direction"`` or ``"wrong_amount"``.
        turned_deg: how far the board turned from the start angle, signed, clockwise positive,
            in (-180, 180].
        expected_deg: the expected signed turn.
    """

    verdict: Literal["done", "not_turned", "wrong_direction", "wrong_amount"]
    turned_deg: float
    expected_deg: float


def judge_turn(
    start_deg: float, seen_deg: float, expected_deg: float, tolerance_deg: float
) -> TurnVerdict:
    """Judge a turn of the round board (Phase 3 - Rotate; Reverse rotation (Dragon)).

    Args:
        start_deg: the board angle before the turn (degrees).
        seen_deg: the observed board angle (degrees).
        expected_deg: the expected signed turn: +90 / -90 (4 players), +120 / -120 (3),
            180 (2 players; either way).
        tolerance_deg: how far from the expectation a reading may be and still count.
    """
    turned = -wrap_deg(-(seen_deg - start_deg))  # in (-180, 180]
    if abs(wrap_deg(turned - expected_deg)) <= tolerance_deg:
        return TurnVerdict("done", turned, expected_deg)
    if abs(turned) <= tolerance_deg:
        return TurnVerdict("not_turned", turned, expected_deg)
    if abs(wrap_deg(turned + expected_deg)) <= tolerance_deg:
        return TurnVerdict("wrong_direction", turned, expected_deg)
    return TurnVerdict("wrong_amount", turned, expected_deg)


# ------------------------------------------------------------------------------------ state


@dataclasses.dataclass(frozen=True, slots=True)
class Play:
    """One player's face-down choice in Phase 1 - Play, revealed with everybody's.

    Attributes:
        player: the player's name.
        slot: the number on the slot card played.
        animals: the animal tile(s): one; with 2 players one per sector, in the order of the
            player's sectors in ``round_started``.
        ability: the id of a won client card whose ability is used with the play, or None.
        ticket: with Single ticket (Horse), the id of the booth client to take when several
            match; else None.

    Text form: ``"Ana: 9 fish +tiger#3"`` (:meth:`__str__`).
    """

    player: str
    slot: int
    animals: tuple[str, ...]
    ability: int | None = None
    ticket: int | None = None

    def __str__(self) -> str:
        text = f"{self.player}: {self.slot} {'+'.join(self.animals)}"
        if self.ability is not None:
            text += f" ability#{self.ability}"
        if self.ticket is not None:
            text += f" ticket#{self.ticket}"
        return text


class ScoringOption(NamedTuple):
    """One way to score a booth's clients on a sequence (Phase 2 - Score); an immutable value.

    Attributes:
        cells: the three cell indexes of the sequence.
        awards: ``(cell index, client id)`` pairs: the client's standee goes on that tile and
            the card to the tile's owner.
    """

    cells: tuple[int, int, int]
    awards: tuple[tuple[int, int], ...]


@dataclasses.dataclass(frozen=True, slots=True)
class PlayerState:
    """One player.

    Attributes:
        name, colour: as in ``game_start``.
        tiles: animal tiles behind the booth, a count per animal in :data:`ANIMALS` order.
        slots: slot card numbers in hand; ``slots_played``: the discard pile.
        won: client ids won (used or not; all score VP); ``used``: those whose ability was used
            (in the discard pile).
        booth: client ids in front of the booth; ``queue``: the 2-player queue.
    """

    name: str
    colour: str
    tiles: tuple[int, ...]
    slots: tuple[int, ...]
    slots_played: tuple[int, ...] = ()
    won: tuple[int, ...] = ()
    used: tuple[int, ...] = ()
    booth: tuple[int, ...] = ()
    queue: tuple[int, ...] = ()

    def has_tile(self, animal: str, n: int = 1) -> bool:
        """True when at least ``n`` tiles of ``animal`` are left behind the booth."""
        return self.tiles[_ANIMAL_INDEX[animal]] >= n

    @property
    def usable(self) -> tuple[int, ...]:
        """Won clients whose ability may still be used."""
        return tuple(c for c in self.won if c not in self.used)


Phase = Literal["waiting", "play", "score", "rotate", "over"]


@dataclasses.dataclass(frozen=True, slots=True)
class Pending:
    """A booth whose scoring waits for its player's choice among ``options``."""

    player: str
    options: tuple[ScoringOption, ...]
    chosen: int | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class CarrosselState:
    """The whole game, an immutable value.

    Attributes:
        phase: ``waiting`` for ``game_start``, ``play`` (Phase 1), ``score`` (Phase 2 or 4),
            ``rotate`` (Phase 3), ``over``.
        round: 1-based round number; ``score_phase``: 2 or 4 while scoring.
        players: in seat order.
        side: ``"four"`` or ``"three"``.
        tiles: per cell index, ``(colour, animal)`` or None.
        standees: per cell index, the client ids standing on that tile.
        deck: client ids face down, top first.
        boxed: client ids out of the game (removed with 2 players, won by the neutral colour).
        box_tiles: tiles out of the game: ``(colour, animal, count)``.
        neutral: the non-player colour with 3 players, else None.
        objectives: the objective card ids in play.
        steps: net sector turns since setup, clockwise positive; the board's nominal angle is
            ``steps * step``.
        direction: +1 clockwise, -1 counter-clockwise (Roof of the Totem).
        angle_deg: the last observed board angle (degrees).
        misaligned: the board was seen off its expected angle outside Phase 3.
        plays: face-down plays of this round, waiting for the reveal.
        pending: booths waiting for a scoring choice.
        last_t: time (s) of the last accepted observation.
        end_reason: why the game ended.
    """

    phase: Phase = "waiting"
    round: int = 0
    score_phase: int = 0
    players: tuple[PlayerState, ...] = ()
    side: str = "four"
    tiles: tuple[Tile | None, ...] = ()
    standees: tuple[tuple[int, ...], ...] = ()
    deck: tuple[int, ...] = ()
    boxed: tuple[int, ...] = ()
    box_tiles: tuple[tuple[str, str, int], ...] = ()
    neutral: str | None = None
    objectives: tuple[int, ...] = ()
    steps: int = 0
    direction: int = 1
    angle_deg: float = 0.0
    misaligned: bool = False
    plays: tuple[Play, ...] = ()
    pending: tuple[Pending, ...] = ()
    last_t: float = 0.0
    end_reason: str | None = None

    def player(self, name: str) -> PlayerState | None:
        """The player of that name, or None."""
        for p in self.players:
            if p.name == name:
                return p
        return None

    def owner(self, colour: str) -> str:
        """The name of the player of a tile colour, or :data:`NEUTRAL`."""
        for p in self.players:
            if p.colour == colour:
                return p.name
        return NEUTRAL


def _replace_player(players: tuple[PlayerState, ...], new: PlayerState) -> tuple[PlayerState, ...]:
    return tuple(new if p.name == new.name else p for p in players)


def _step_deg(data: GameData, state: CarrosselState) -> float:
    # Rules for 2 Players: the board turns 180 degrees; else one sector.
    return 180.0 if len(state.players) == 2 else data.boards[state.side].step_deg


def nominal_angle(data: GameData, state: CarrosselState) -> float:
    """The angle (degrees, 0-360) the board should stand at now."""
    return (state.steps * _step_deg(data, state)) % 360.0


def player_sectors(data: GameData, state: CarrosselState) -> dict[str, tuple[str, ...]]:
    """The sector(s) in front of each player at the board's nominal angle, in clockwise order
    (Phase 1 - Play: play only in the sector in front of you; Rules for 2 Players: two)."""
    side = data.boards[state.side]
    seats = _seat_sectors(
        side.sectors,
        tuple(side.bearing_deg[s] for s in side.sectors),
        data.seats[len(state.players)],
        nominal_angle(data, state),
    )
    return {p.name: seats[k] for k, p in enumerate(state.players)}


@functools.lru_cache(maxsize=256)
def _seat_sectors(
    sectors: tuple[str, ...], bearings: tuple[float, ...], seats: tuple[float, ...], angle: float
) -> tuple[tuple[str, ...], ...]:
    side_like = BoardSide("", sectors, dict(zip(sectors, bearings)), (), (), (), (), {}, {}, {})
    facing = sectors_facing(side_like, seats, angle)
    assert facing is not None
    out: list[list[str]] = [[] for _ in seats]
    for s in sectors:
        out[facing[s]].append(s)
    result = []
    for secs in out:
        # A player's two sectors (2 players) in clockwise order, across the A/D wrap too.
        if len(secs) == 2 and sectors.index(secs[1]) - sectors.index(secs[0]) != 1:
            secs = [secs[1], secs[0]]
        result.append(tuple(secs))
    return tuple(result)


# --------------------------------------------------------------------------------- playing


def _free(state: CarrosselState, cell: int) -> bool:
    return state.tiles[cell] is None


def placement(
    data: GameData, state: CarrosselState, player: str, slot: int, jump: bool
) -> tuple[int, ...] | str:
    """Where a player's tile(s) go for a slot card, or the reason it is not legal.

    Phase 1 - Play: the card's number must be a free slot of the player's sector (with 2
    players, of both sectors). Jump (Tiger): the number may be occupied; the tile goes to the
    free slot with the closest smaller number (in each sector with 2 players).

    Returns:
        the cell index of each tile, in the order of the player's sectors; or a reason string.
    """
    side = data.boards[state.side]
    sectors = player_sectors(data, state)[player]
    cells: list[int] = []
    occupied_any = False
    for s in sectors:
        cell = side.slot_cell.get((s, slot))
        if cell is None:
            return f"slot {slot} is not a slot of sector {s}"
        if _free(state, cell):
            cells.append(cell)
            continue
        occupied_any = True
        if not jump:
            return f"slot {slot} of sector {s} is occupied"
        # Jump (Tiger): the free slot with the closest-valued smaller number.
        smaller = [
            n for n in data.slot_numbers if n < slot and _free(state, side.slot_cell[(s, n)])
        ]
        if not smaller:
            return f"Jump: sector {s} has no free slot below {slot}"
        cells.append(side.slot_cell[(s, max(smaller))])
    if jump and not occupied_any:
        # Ruling (docs/carrossel.md): Jump is for a slot card whose slot is occupied.
        return f"Jump: slot {slot} is free, the ability would do nothing"
    return tuple(cells)


def _slot_allowed(data: GameData, state: CarrosselState, slot: int) -> bool:
    # Phase 1 - Play: in the first round only slots 4, 5, 9, 10; Rules for 3 Players: not
    # with 3 players.
    return not (state.round == 1 and len(state.players) != 3 and slot not in data.first_round)


def check_play(data: GameData, state: CarrosselState, play: Play) -> str | None:
    """The reason a play is illegal (Phase 1 - Play; Client Card abilities), or None."""
    p = state.player(play.player)
    if p is None:
        return f"unknown player {play.player!r}"
    sectors = player_sectors(data, state)[p.name]
    # A slot card from the hand; discarded cards cannot be played (Phase 1 - Play, 3).
    if play.slot not in p.slots:
        where = (
            "in the discard pile"
            if play.slot in p.slots_played
            else "not one of the player's slot cards"
        )
        return f"slot card {play.slot} is {where}"
    if not _slot_allowed(data, state, play.slot):
        return f"first round: the slot card must be one of {', '.join(map(str, data.first_round))}"
    # One tile per sector in front of the player (Rules for 2 Players: two tiles).
    if len(play.animals) != len(sectors):
        return f"expected {len(sectors)} animal tile(s), one per sector, got {len(play.animals)}"
    for a in play.animals:
        if a not in _ANIMAL_INDEX:
            return f"unknown animal {a!r} (known: {', '.join(ANIMALS)})"
    for a, n in Counter(play.animals).items():
        if not p.has_tile(a, n):
            return f"{p.name} has {p.tiles[_ANIMAL_INDEX[a]]} {a} tile(s) left, the play needs {n}"
    ability = None
    if play.ability is not None:
        # One won, unused client card per round (Client Card abilities).
        if play.ability not in p.won:
            return f"client #{play.ability} is not one of {p.name}'s won clients"
        if play.ability in p.used:
            return f"client #{play.ability} was already used (in the discard pile)"
        ability = ABILITIES[data.clients[play.ability].animal]
        if ability == "reverse_rotation":
            return "the Dragon client acts when it appears at a booth; it cannot be played"
    if play.ticket is not None and ability != "single_ticket":
        return "ticket: only with the Single ticket (Horse) ability"
    where = placement(data, state, p.name, play.slot, jump=ability == "jump")
    if isinstance(where, str):
        return where
    if ability == "single_ticket":
        options = _ticket_options(data, p, play.animals)
        if not options:
            return f"Single ticket: no client at {p.name}'s booth matches {'/'.join(play.animals)}"
        if play.ticket is not None:
            if play.ticket not in [c for c, _ in options]:
                return f"ticket: client #{play.ticket} is not a matching client at {p.name}'s booth"
        elif len({(data.clients[c].animal, data.clients[c].vp) for c, _ in options}) > 1:
            names = ", ".join(f"#{c}" for c, _ in options)
            return f"Single ticket: several clients match ({names}); name one with 'ticket'"
    return None


def _matches(tile_animal: str, client_animal: str) -> bool:
    # Dragon tile: a joker for any animal; the Dragon client only on a Dragon tile (Phase 2).
    if client_animal == "dragon":
        return tile_animal == "dragon"
    return tile_animal == client_animal or tile_animal == "dragon"


#: (tile animal, client animal) -> True when that tile can take that client.
_MATCH = {(t, c): _matches(t, c) for t in ANIMALS for c in ANIMALS}


def _ticket_options(
    data: GameData, p: PlayerState, animals: Sequence[str]
) -> list[tuple[int, int]]:
    """(client id, tile index in the play) pairs a Single ticket may take."""
    out = []
    for c in p.booth:
        for k, a in enumerate(animals):
            if _matches(a, data.clients[c].animal):
                out.append((c, k))
                break
    return out


def legal_plays(
    data: GameData, state: CarrosselState, player: str, abilities: bool = True
) -> list[Play]:
    """Every legal play of a player this round (python-chess style ``legal_moves``).

    Single ticket plays are listed without ``ticket`` where one kind of client matches, with
    each ``ticket`` where several do. ``abilities=False`` lists the plays without an ability.
    """
    p = state.player(player)
    if p is None or state.phase != "play":
        return []
    n = len(player_sectors(data, state)[player])
    have = [a for a in ANIMALS if p.has_tile(a)]
    combos = [
        c
        for c in itertools.product(have, repeat=n)
        if all(p.has_tile(a, k) for a, k in Counter(c).items())
    ]
    choices: list[int | None] = [None]
    if abilities:
        choices += sorted(set(c for c in p.usable if data.clients[c].animal != "dragon"))
    out = []
    for ability in choices:
        for slot in sorted(set(p.slots)):
            for animals in combos:
                play = Play(player, slot, animals, ability)
                if check_play(data, state, play) is None:
                    out.append(play)
                elif ability is not None and data.clients[ability].animal == "horse":
                    for c, _ in _ticket_options(data, p, animals):
                        with_ticket = dataclasses.replace(play, ticket=c)
                        if check_play(data, state, with_ticket) is None:
                            out.append(with_ticket)
    return out


def can_play(data: GameData, state: CarrosselState, player: str) -> bool:
    """True when the player has a legal move (END of the game: no tiles, or no slot card that
    matches a free slot, Jump included)."""
    p = state.player(player)
    assert p is not None
    n = len(player_sectors(data, state)[player])
    if sum(p.tiles) < n:
        return False
    jump = any(data.clients[c].animal == "tiger" for c in p.usable)
    for slot in set(p.slots):
        if not _slot_allowed(data, state, slot):
            continue
        if not isinstance(placement(data, state, player, slot, False), str):
            return True
        if jump and not isinstance(placement(data, state, player, slot, True), str):
            return True
    return False


# --------------------------------------------------------------------------------- scoring


def _kind(data: GameData, client: int) -> tuple[str, int]:
    c = data.clients[client]
    return (c.animal, c.vp)


@functools.lru_cache(maxsize=4096)
def _fits(clients: tuple[str, ...], a0: str, a1: str, a2: str) -> tuple[tuple[int, int, int], ...]:
    """The orders (client index for each of the 3 tiles) in which three tiles of animals
    ``a0, a1, a2`` take the clients of these animals."""
    return tuple(
        p  # type: ignore[misc]
        for p in itertools.permutations(range(3))
        if _MATCH[a0, clients[p[0]]] and _MATCH[a1, clients[p[1]]] and _MATCH[a2, clients[p[2]]]
    )


def scoring_options(
    data: GameData,
    side: BoardSide,
    tiles: Sequence[Tile | None],
    standees: Sequence[Sequence[int]],
    booth: Sequence[int],
    sectors: Sequence[str],
    owner: Mapping[str, str],
) -> list[ScoringOption]:
    """The distinct ways a booth's clients can be scored in its sectors (Phase 2 - Score).

    A sequence is three tiles without standees adjacent in a row or column, at least one in one
    of ``sectors``, whose animals match the booth's clients in any order; a Dragon tile stands
    in for any one animal (several Dragons allowed); the Dragon client only on a Dragon tile.
    Options that differ only in which identical client (same animal and VP) goes to which tile
    of the same owner are one option.

    Args:
        tiles, standees: per cell index (see :class:`CarrosselState`).
        booth: the client ids in front of the booth (3).
        sectors: the sector(s) in front of the booth's player.
        owner: tile colour -> owner name (:data:`NEUTRAL` for the neutral colour).

    Returns:
        options in board order (cell indexes, then client ids); empty when the booth has no
        sequence.
    """
    if len(booth) != data.booth_size:
        return []
    if len(sectors) == 1:
        candidates: Iterable[tuple[int, int, int]] = side.lines_touching[sectors[0]]
    else:
        candidates = dict.fromkeys(t for s in sectors for t in side.lines_touching[s])
    animals = tuple(data.clients[c].animal for c in booth)
    kinds = [_kind(data, c) for c in booth]
    out: list[ScoringOption] = []
    for triple in candidates:
        i0, i1, i2 = triple
        t0, t1, t2 = tiles[i0], tiles[i1], tiles[i2]
        # A sequence: 3 tiles without any standee on them (Phase 2 - Score).
        if t0 is None or t1 is None or t2 is None or standees[i0] or standees[i1] or standees[i2]:
            continue
        # Matched to the booth's clients in any order (Phase 2 - Score).
        fits = _fits(animals, t0[1], t1[1], t2[1])
        if not fits:
            continue
        seen = set()
        o0, o1, o2 = owner[t0[0]], owner[t1[0]], owner[t2[0]]
        # Different orders can only give the same outcome with a repeated owner or client kind.
        dedupe = len(fits) > 1 and (o0 == o1 or o1 == o2 or o0 == o2 or len(set(kinds)) < 3)
        for p0, p1, p2 in fits:
            if dedupe:
                # The same owners getting the same kinds of client: one option.
                outcome = tuple(sorted(((o0, kinds[p0]), (o1, kinds[p1]), (o2, kinds[p2]))))
                if outcome in seen:
                    continue
                seen.add(outcome)
            out.append(ScoringOption(triple, ((i0, booth[p0]), (i1, booth[p1]), (i2, booth[p2]))))
    out.sort()
    return out


def option_text(data: GameData, state: CarrosselState, option: ScoringOption) -> str:
    """Text form of a scoring option: ``"A4 A5 B1: A4=fish#12>Ana A5=horse#30>Ben ..."``."""
    return options_text(data, state, (option,))[0]


def options_text(
    data: GameData, state: CarrosselState, options: Sequence[ScoringOption]
) -> list[str]:
    """Text forms of several scoring options (see :func:`option_text`), in order."""
    names = data.boards[state.side].cell_names
    owner = {p.colour: p.name for p in state.players}
    label = data.client_labels
    tiles = state.tiles
    out = []
    for (c0, c1, c2), ((x0, k0), (x1, k1), (x2, k2)) in options:
        out.append(
            f"{names[c0]} {names[c1]} {names[c2]}: "
            f"{names[x0]}={label[k0]}>{owner.get(tiles[x0][0], NEUTRAL)} "  # type: ignore[index]
            f"{names[x1]}={label[k1]}>{owner.get(tiles[x1][0], NEUTRAL)} "  # type: ignore[index]
            f"{names[x2]}={label[k2]}>{owner.get(tiles[x2][0], NEUTRAL)}"  # type: ignore[index]
        )
    return out


# ---------------------------------------------------------------------------- final scores


def _max_disjoint(triples: Sequence[tuple[int, int, int]]) -> int:
    """The largest number of pairwise disjoint triples (each tile once per objective card)."""
    masks = [sum(1 << i for i in t) for t in triples]

    @functools.lru_cache(maxsize=None)
    def best(k: int, used: int) -> int:
        if k == len(masks):
            return 0
        skip = best(k + 1, used)
        if masks[k] & used:
            return skip
        return max(skip, 1 + best(k + 1, used | masks[k]))

    return best(0, 0)


def objective_sets(
    data: GameData,
    side: BoardSide,
    objective: Objective,
    won: Sequence[int],
    tiles: Sequence[Tile | None],
    colour: str,
) -> int:
    """How many times a player completes one objective card (OBJECTIVE cards): every client
    card or tile counts once per objective card; used clients count too.

    Args:
        won: the player's won client ids; tiles: per cell; colour: the player's colour.
    """
    if objective.kind in CLIENT_KINDS:
        have = Counter(data.clients[c].animal for c in won)
        need = Counter(objective.animals)
        return min(have[a] // k for a, k in need.items())
    shape = {"tiles_line": side.lines, "tiles_diagonal": side.diagonals, "tiles_l": side.l_shapes}[
        objective.kind
    ]
    mine = []
    for t in shape:
        ts = [tiles[i] for i in t]
        if any(x is None or x[0] != colour for x in ts):
            continue
        if objective.match == "same" and len({x[1] for x in ts}) != 1:  # type: ignore[index]
            continue
        mine.append(t)
    return _max_disjoint(mine)


def final_scores(data: GameData, state: CarrosselState) -> dict[str, Any]:
    """The final score table (END of the game; OBJECTIVE cards).

    Returns:
        ``{"players": [row, ...], "winners": [names], "objectives": [ids]}``; a row is
        ``{"player", "colour", "clients_vp", "objectives": {"#id kind": vp}, "total",
        "clients", "standees", "rank"}``. Ties: most VP, then most client cards, then most
        standees on the player's tiles; still tied: a shared victory.
    """
    side = data.boards[state.side]
    rows = []
    for p in state.players:
        clients_vp = sum(data.clients[c].vp for c in p.won)
        objs = {}
        for oid in state.objectives:
            o = data.objectives[oid]
            objs[str(o)] = o.vp * objective_sets(data, side, o, p.won, state.tiles, p.colour)
        standees = sum(
            len(state.standees[i])
            for i, t in enumerate(state.tiles)
            if t is not None and t[0] == p.colour
        )
        rows.append(
            {
                "player": p.name,
                "colour": p.colour,
                "clients_vp": clients_vp,
                "objectives": objs,
                "total": clients_vp + sum(objs.values()),
                "clients": len(p.won),
                "standees": standees,
            }
        )
    # END of the game: most VP; tie: most client cards; then most standees on one's tiles.
    key = lambda r: (r["total"], r["clients"], r["standees"])  # noqa: E731
    ordered = sorted(rows, key=key, reverse=True)
    for r in rows:
        r["rank"] = 1 + sum(1 for o in rows if key(o) > key(r))
    best = key(ordered[0]) if ordered else None
    return {
        "players": rows,
        "winners": [r["player"] for r in rows if key(r) == best],
        "objectives": list(state.objectives),
    }


# ------------------------------------------------------------------------------ invariants


def check_invariants(data: GameData, state: CarrosselState) -> None:
    """Check what must always hold of a game; raise :class:`StateError` naming what breaks.

    56 tiles conserved (behind the booths, on the board, in the box); at most one tile per slot
    (by construction) and tiles only of player or neutral colours; standees only on tiles, the
    Dragon client only on a Dragon tile, a standee's client won by the tile's owner (or out of
    the game for the neutral colour); every client card in exactly one place; used clients are
    won clients; slot cards each in the hand or the discard pile.
    """
    side = data.boards[state.side]
    if len(state.tiles) != len(side.cells) or len(state.standees) != len(side.cells):
        raise StateError(f"board: expected {len(side.cells)} cells, got {len(state.tiles)}")
    colours = {p.colour for p in state.players} | ({state.neutral} if state.neutral else set())
    count: Counter[tuple[str, str]] = Counter()
    for p in state.players:
        for a, n in zip(ANIMALS, p.tiles):
            if n < 0:
                raise StateError(f"player {p.name}: negative count of {a} tiles")
            count[(p.colour, a)] += n
    for i, t in enumerate(state.tiles):
        if t is None:
            if state.standees[i]:
                raise StateError(f"cell {side.cells[i].name}: standees on an empty slot")
            continue
        if t[0] not in colours:
            raise StateError(f"cell {side.cells[i].name}: a {t[0]} tile, not a colour in this game")
        count[t] += 1
        owner = state.owner(t[0])
        for c in state.standees[i]:
            if data.clients[c].animal == "dragon" and t[1] != "dragon":
                raise StateError(f"cell {side.cells[i].name}: the Dragon client stands on a {t[1]}")
            if owner == NEUTRAL:
                if c not in state.boxed:
                    raise StateError(
                        f"cell {side.cells[i].name}: client #{c} on a neutral tile is not out of the game"
                    )
            elif c not in state.player(owner).won:  # type: ignore[union-attr]
                raise StateError(
                    f"cell {side.cells[i].name}: client #{c} stands on {owner}'s tile but {owner} has not won it"
                )
    for colour, a, n in state.box_tiles:
        count[(colour, a)] += n
    for colour in data.colours:
        for a in ANIMALS:
            if count[(colour, a)] != data.per_colour[a]:
                raise StateError(
                    f"tiles: {count[(colour, a)]} {colour} {a} tile(s) counted, expected {data.per_colour[a]}"
                )
    places: Counter[int] = Counter(state.deck) + Counter(state.boxed)
    for p in state.players:
        places += Counter(p.won) + Counter(p.booth) + Counter(p.queue)
        if not set(p.used) <= set(p.won):
            raise StateError(f"player {p.name}: used clients that were not won")
        if sorted(p.slots + p.slots_played) != sorted(data.slot_numbers):
            raise StateError(
                f"player {p.name}: slot cards in hand and discard pile are not 1-12 once each"
            )
    if set(places) != set(data.clients) or any(n != 1 for n in places.values()):
        twice = sorted(c for c, n in places.items() if n > 1)
        raise StateError(f"clients: every card must be in exactly one place (twice: {twice})")
    stood = Counter(c for s in state.standees for c in s)
    if any(n > 1 for n in stood.values()):
        raise StateError("standees: a client stands on two tiles")


# ----------------------------------------------------------------------------- table files


def table_json(data: GameData, state: CarrosselState) -> dict[str, Any]:
    """The table as a JSON-able dict: what ``companion score carrossel`` reads.

    ``{"game": "carrossel", "players": [{"name", "colour", "won", "used"}], "neutral": colour
    or null, "objectives": [ids], "board": {cell name: {"tile": "red fish", "standees": [ids]}}}``
    """
    side = data.boards[state.side]
    return {
        "game": "carrossel",
        "players": [
            {"name": p.name, "colour": p.colour, "won": list(p.won), "used": list(p.used)}
            for p in state.players
        ],
        "neutral": state.neutral,
        "objectives": list(state.objectives),
        "board": {
            side.cells[i].name: {"tile": f"{t[0]} {t[1]}", "standees": list(state.standees[i])}
            for i, t in enumerate(state.tiles)
            if t is not None
        },
    }


def table_from_json(data: GameData, doc: Any, where: str = "state") -> CarrosselState:
    """Build the end-of-game state of a table file (see :func:`table_json`) and check it.

    Raises:
        StateError: a missing or wrong field or a broken invariant, naming the field
            (``where: players[1].won: ...``).
    """

    def err(field: str, msg: str) -> StateError:
        return StateError(f"{where}: {field}: {msg}")

    if not isinstance(doc, dict):
        raise err("(top)", "expected a JSON object")
    if doc.get("game", "carrossel") != "carrossel":
        raise err("game", f"expected 'carrossel', got {doc.get('game')!r}")
    players = doc.get("players")
    if not isinstance(players, list) or not 2 <= len(players) <= 4:
        raise err("players", "expected a list of 2 to 4 players")
    n = len(players)
    side = data.side_for(n)
    pstates = []
    all_won: Counter[int] = Counter()
    for k, p in enumerate(players):
        f = f"players[{k}]"
        if not isinstance(p, dict) or not isinstance(p.get("name"), str) or not p["name"].strip():
            raise err(f, "expected an object with a non-empty 'name'")
        if p.get("colour") not in data.colours:
            raise err(
                f + ".colour", f"expected one of {', '.join(data.colours)}, got {p.get('colour')!r}"
            )
        won = p.get("won", [])
        used = p.get("used", [])
        for key, ids in (("won", won), ("used", used)):
            if not isinstance(ids, list) or not all(
                isinstance(c, int) and not isinstance(c, bool) and c in data.clients for c in ids
            ):
                raise err(f"{f}.{key}", f"expected a list of client ids 1-{max(data.clients)}")
        if len(set(won)) != len(won):
            raise err(f + ".won", "a client card listed twice")
        if not set(used) <= set(won):
            raise err(f + ".used", "used clients must be won clients")
        if n == 2 and any(data.clients[c].two_player_removed for c in won):
            raise err(f + ".won", "a card with the two-player mark is not in a 2-player game")
        all_won.update(won)
        pstates.append(
            PlayerState(
                p["name"],
                p["colour"],
                tiles=(0,) * len(ANIMALS),
                slots=data.slot_numbers,
                won=tuple(won),
                used=tuple(used),
            )
        )
    if len({p.name for p in pstates}) != n or len({p.colour for p in pstates}) != n:
        raise err("players", "names and colours must be distinct")
    twice = sorted(c for c, m in all_won.items() if m > 1)
    if twice:
        raise err("players", f"client(s) {twice} won by two players")
    neutral = doc.get("neutral")
    if n == 3:
        rest = [c for c in data.colours if c not in {p.colour for p in pstates}]
        if neutral is None:
            neutral = rest[0]
        if neutral not in rest:
            raise err("neutral", f"expected the colour nobody plays ({rest[0]})")
    elif neutral is not None:
        raise err("neutral", "only with 3 players")
    objectives = doc.get("objectives")
    if (
        not isinstance(objectives, list)
        or len(objectives) != data.objectives_in_play
        or len(set(objectives)) != len(objectives)
        or not all(isinstance(o, int) and o in data.objectives for o in objectives)
    ):
        raise err(
            "objectives",
            f"expected {data.objectives_in_play} distinct objective ids 1-{max(data.objectives)}",
        )
    board = doc.get("board", {})
    if not isinstance(board, dict):
        raise err("board", "expected an object: cell name -> {tile, standees}")
    tiles: list[Tile | None] = [None] * len(side.cells)
    standees: list[tuple[int, ...]] = [()] * len(side.cells)
    counts: Counter[Tile] = Counter()
    colour_owner = {p.colour: p for p in pstates}
    for name, v in board.items():
        f = f"board.{name}"
        if name not in side.by_name:
            raise err(f, f"no such cell on the {side.name}-sector side")
        if (
            not isinstance(v, dict)
            or not isinstance(v.get("tile"), str)
            or len(v["tile"].split()) != 2
        ):
            raise err(f + ".tile", 'expected "<colour> <animal>", e.g. "red fish"')
        colour, animal = v["tile"].split()
        if colour not in colour_owner and colour != neutral:
            raise err(f + ".tile", f"{colour!r} is not a colour in this game")
        if animal not in ANIMALS:
            raise err(f + ".tile", f"unknown animal {animal!r}")
        if colour == neutral and animal == "dragon":
            raise err(f + ".tile", "neutral Dragon tiles stay in the box (Rules for 3 Players)")
        counts[(colour, animal)] += 1
        if counts[(colour, animal)] > data.per_colour[animal]:
            raise err(f + ".tile", f"more than {data.per_colour[animal]} {colour} {animal} tiles")
        ids = v.get("standees", [])
        if not isinstance(ids, list) or not all(
            isinstance(c, int) and c in data.clients for c in ids
        ):
            raise err(f + ".standees", "expected a list of client ids")
        for c in ids:
            if data.clients[c].animal == "dragon" and animal != "dragon":
                raise err(f + ".standees", "the Dragon client stands only on a Dragon tile")
            if colour != neutral and c not in colour_owner[colour].won:
                raise err(
                    f + ".standees",
                    f"client #{c} stands on {colour_owner[colour].name}'s tile but is not among their won clients",
                )
            if colour == neutral and c in all_won:
                raise err(
                    f + ".standees",
                    f"client #{c} on a neutral tile left the game; nobody can have won it",
                )
        i = side.by_name[name]
        tiles[i] = (colour, animal)
        standees[i] = tuple(ids)
    stood = Counter(c for s in standees for c in s)
    if any(m > 1 for m in stood.values()):
        raise err("board", "a client stands on two tiles")
    return CarrosselState(
        phase="over",
        players=tuple(pstates),
        side=side.name,
        tiles=tuple(tiles),
        standees=tuple(standees),
        neutral=neutral,
        objectives=tuple(objectives),
        end_reason="table file",
    )


# ---------------------------------------------------------------------------- observations


@event_type("game_start")
@dataclasses.dataclass(frozen=True, slots=True)
class GameStart(Observation):
    """The game is set up (Setup; Rules for 2 and 3 Players).

    Attributes:
        players: 2 to 4 distinct names in seat order (clockwise).
        colours: each player's colour; default: the data file's colours in order.
        seed: shuffles whatever is not given below (the simulated table).
        clients: the client deck as read, top first (the game's cards once each; with 2 players
            without the marked cards). Else shuffled with ``seed``, the Dragon in the middle.
        objectives: the 4 objective card ids in play; else drawn with ``seed``.
        neutral: 3 players: the 12 neutral animals in the un-numbered slots, in board order;
            else placed at random with ``seed``.
    """

    players: tuple[str, ...] = ()
    colours: tuple[str, ...] | None = None
    seed: int | None = None
    clients: tuple[int, ...] | None = None
    objectives: tuple[int, ...] | None = None
    neutral: tuple[str, ...] | None = None


@event_type("play")
@dataclasses.dataclass(frozen=True, slots=True)
class PlayObserved(Observation):
    """A player's face-down choice (Phase 1 - Play); revealed when every player has played.

    Attributes: as :class:`Play`.
    """

    player: str = ""
    slot: int = 0
    animals: tuple[str, ...] = ()
    ability: int | None = None
    ticket: int | None = None


@event_type("choose")
@dataclasses.dataclass(frozen=True, slots=True)
class Choose(Observation):
    """The sector's player chose one of the listed scoring options (Phase 2 - Score: who
    decides). ``option`` is 1-based, as numbered in ``sequence_options``."""

    player: str = ""
    option: int = 0


@event_type("board_turned")
@dataclasses.dataclass(frozen=True, slots=True)
class BoardTurned(Observation):
    """The rotation source saw the round board settle at an angle.

    Attributes:
        angle_deg: degrees, clockwise seen from above, 0 = the setup orientation (the angle
            model of ``companion/rotation/`` zeroed at setup).
        uncertain: the source is not sure (a spin reported as uncertain); ignored.
    """

    angle_deg: float = 0.0
    uncertain: bool = False


# ----------------------------------------------------------------------------------- calls


@event_type("game_started")
@dataclasses.dataclass(frozen=True, slots=True)
class GameStarted(Call):
    """Setup is done: colours, booths, objectives, neutral colour, rotation direction."""

    players: tuple[str, ...] = ()
    colours: dict[str, str] = dataclasses.field(default_factory=dict)
    booths: dict[str, tuple[int, ...]] = dataclasses.field(default_factory=dict)
    objectives: tuple[int, ...] = ()
    neutral: str | None = None
    direction: str = "clockwise"


@event_type("round_started")
@dataclasses.dataclass(frozen=True, slots=True)
class RoundStarted(Call):
    """Phase 1 of a round: the sector(s) in front of each player and their legal slot cards."""

    round: int = 0
    sectors: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    slots: dict[str, tuple[int, ...]] = dataclasses.field(default_factory=dict)


@event_type("play_received")
@dataclasses.dataclass(frozen=True, slots=True)
class PlayReceived(Call):
    """A face-down play was accepted; ``waiting_for`` still have to play before the reveal."""

    player: str = ""
    waiting_for: tuple[str, ...] = ()


@event_type("illegal_play")
@dataclasses.dataclass(frozen=True, slots=True)
class IllegalPlay(Call):
    """A play the rules forbid; the player must play again. ``reason`` says which rule."""

    player: str = ""
    play: str = ""
    reason: str = ""


@event_type("revealed")
@dataclasses.dataclass(frozen=True, slots=True)
class Revealed(Call):
    """Simultaneous reveal: each tile's cell, per player (cell names)."""

    plays: dict[str, str] = dataclasses.field(default_factory=dict)
    cells: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)


@event_type("ability_used")
@dataclasses.dataclass(frozen=True, slots=True)
class AbilityUsed(Call):
    """A client card's ability took effect (Client Card abilities)."""

    player: str = ""
    client: int = 0
    ability: str = ""
    detail: str = ""


@event_type("sequence_options")
@dataclasses.dataclass(frozen=True, slots=True)
class SequenceOptions(Call):
    """Several ways to score a booth: its player must choose one (``choose``, 1-based)."""

    player: str = ""
    phase: int = 2
    options: tuple[str, ...] = ()


@event_type("scored")
@dataclasses.dataclass(frozen=True, slots=True)
class Scored(Call):
    """A booth's clients sat on a sequence: ``awards`` maps each client id (text) to
    ``"cell>owner"``."""

    player: str = ""
    phase: int = 2
    cells: tuple[str, ...] = ()
    awards: dict[str, str] = dataclasses.field(default_factory=dict)


@event_type("booth_refilled")
@dataclasses.dataclass(frozen=True, slots=True)
class BoothRefilled(Call):
    """New clients in front of a booth (and its 2-player queue)."""

    player: str = ""
    booth: tuple[int, ...] = ()
    queue: tuple[int, ...] = ()


@event_type("rotation_reversed")
@dataclasses.dataclass(frozen=True, slots=True)
class RotationReversed(Call):
    """The Dragon client appeared at a booth: flip the Roof; the board now turns ``direction``."""

    direction: str = ""


@event_type("turn_board")
@dataclasses.dataclass(frozen=True, slots=True)
class TurnBoard(Call):
    """Phase 3 - Rotate: turn the board ``turn_deg`` (signed, clockwise positive) to
    ``target_deg``."""

    turn_deg: float = 0.0
    direction: str = ""
    target_deg: float = 0.0


@event_type("board_turned_ok")
@dataclasses.dataclass(frozen=True, slots=True)
class BoardTurnedOk(Call):
    """The board turned as expected; the sectors now in front of each player."""

    angle_deg: float = 0.0
    sectors: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)


@event_type("wrong_turn")
@dataclasses.dataclass(frozen=True, slots=True)
class WrongTurn(Call):
    """The board was turned the wrong way, by the wrong amount, or when it must not turn.

    ``reason`` is ``wrong_direction``, ``wrong_amount`` or ``not_now``; turn it to
    ``target_deg``.
    """

    reason: str = ""
    turned_deg: float = 0.0
    expected_turn_deg: float = 0.0
    target_deg: float = 0.0


@event_type("board_aligned")
@dataclasses.dataclass(frozen=True, slots=True)
class BoardAligned(Call):
    """After a ``wrong_turn`` the board stands at its expected angle again."""

    angle_deg: float = 0.0


@event_type("game_over")
@dataclasses.dataclass(frozen=True, slots=True)
class GameOver(Call):
    """END of the game: the reason, totals, the winner(s) and the full score table."""

    reason: str = ""
    scores: dict[str, int] = dataclasses.field(default_factory=dict)
    winners: tuple[str, ...] = ()
    table: Any = None


VOCABULARY = Vocabulary(
    "carrossel",
    observations=(GameStart, PlayObserved, Choose, BoardTurned),
    calls=(
        GameStarted,
        RoundStarted,
        PlayReceived,
        IllegalPlay,
        Revealed,
        AbilityUsed,
        SequenceOptions,
        Scored,
        BoothRefilled,
        RotationReversed,
        TurnBoard,
        BoardTurnedOk,
        WrongTurn,
        BoardAligned,
        GameOver,
    ),
)


_invalid = InvalidObservation.rejecting


def _direction_word(d: int) -> str:
    return "clockwise" if d > 0 else "counterclockwise"


# ---------------------------------------------------------------------------------- referee


class CarrosselReferee:
    """The Carrossel rules engine: pure, ``apply(state, observation) -> (state, calls)``.

    Args:
        data: path of the game data file; ``""`` = ``calibration/carrossel.toml``.
        turn_tolerance_deg: how far (degrees) an observed board angle may be from the expected
            one and still count (Phase 3 - Rotate).

    Observations: ``game_start``, ``play``, ``choose``, ``board_turned``, ``tick``
    (``docs/carrossel.md``). Bad input never raises: it gives ``invalid_observation`` (not a
    message of the game, unknown player, wrong phase) or ``illegal_play`` (against the rules).

    Raises:
        GameDataError: at construction, when the data file is wrong.
    """

    name = "carrossel"
    #: Calls that ask the table for the game's next step, said again when a game resumes after a
    #: restart if the newest step that made calls made one of them (the service's rule): the
    #: round's plays and who is still to play, a sequence to choose, the board to turn (or to turn
    #: back after a wrong turn).
    prompts = frozenset({"round_started", "play_received", "sequence_options", "turn_board", "wrong_turn"})
    vocabulary = VOCABULARY

    def __init__(self, data: str = "", turn_tolerance_deg: float = 20.0):
        self.data = load_game_data(Path(data) if data else calibration_path("carrossel.toml"))
        if not 0 < turn_tolerance_deg < 45:
            raise ValueError(
                f"turn_tolerance_deg: expected 0 to 45 degrees, got {turn_tolerance_deg}"
            )
        self.turn_tolerance_deg = turn_tolerance_deg

    # -- the Referee protocol ---------------------------------------------------------

    def initial_state(self) -> CarrosselState:
        """Waiting for ``game_start``."""
        return CarrosselState()

    def next_deadline(self, state: CarrosselState) -> float | None:
        """Carrossel has no timed rule: always None."""
        return None

    def is_over(self, state: CarrosselState) -> bool:
        """True once the game has ended."""
        return state.phase == "over"

    def summary(self, state: CarrosselState) -> dict[str, Any]:
        """Phase, round, VP of won cards, sectors and the rotation, for status views; once the
        game is over also its final ``scores`` (total VP per player) and ``winners`` (END)."""
        out: dict[str, Any] = {"phase": state.phase, "round": state.round}
        if state.players:
            out["vp"] = {p.name: sum(self.data.clients[c].vp for c in p.won) for p in state.players}
            out["sectors"] = player_sectors(self.data, state)
            out["direction"] = _direction_word(state.direction)
            out["angle_deg"] = nominal_angle(self.data, state)
            out["waiting_for"] = (
                [pp.player for pp in state.pending if pp.chosen is None]
                if state.phase == "score"
                else [
                    p.name for p in state.players if p.name not in {x.player for x in state.plays}
                ]
            )
        if state.phase == "over":
            out["end_reason"] = state.end_reason
            table = final_scores(self.data, state)
            out["scores"] = {r["player"]: r["total"] for r in table["players"]}
            out["winners"] = list(table["winners"])
        return out

    def table(self, state: CarrosselState) -> dict[str, Any]:
        """The table file of this state (:func:`table_json`)."""
        return table_json(self.data, state)

    def apply(
        self, state: CarrosselState, observation: Observation
    ) -> tuple[CarrosselState, list[Call]]:
        """Apply one observation at its time ``observation.t`` (seconds, non-decreasing)."""
        t = observation.t
        if t < state.last_t:
            return state, [
                _invalid(observation, f"time went backwards: t={t} after t={state.last_t}")
            ]
        if isinstance(observation, Tick):
            return dataclasses.replace(state, last_t=t), []
        handler = self._handlers.get(type(observation))
        if handler is None:
            return state, [
                _invalid(observation, f"{observation.type!r} is not a Carrossel observation")
            ]
        if state.phase == "over":
            return state, [_invalid(observation, "the game is over")]
        if state.phase == "waiting" and not isinstance(observation, GameStart):
            return state, [
                _invalid(observation, "no game yet: the first observation must be game_start")
            ]
        new, calls = handler(self, state, observation)
        if new is state:
            return state, calls
        return dataclasses.replace(new, last_t=t), calls

    # -- setup --------------------------------------------------------------------------

    def _game_start(
        self, state: CarrosselState, obs: GameStart
    ) -> tuple[CarrosselState, list[Call]]:
        data = self.data
        if state.phase != "waiting":
            return state, [_invalid(obs, "the game has already started")]
        names = obs.players
        # Carrossel is for 2 to 4 players (Setup; Rules for 2 and 3 Players).
        if not 2 <= len(names) <= 4:
            return state, [_invalid(obs, f"players: expected 2 to 4 names, got {len(names)}")]
        if len(set(names)) != len(names) or not all(n.strip() for n in names) or NEUTRAL in names:
            return state, [
                _invalid(obs, "players: names must be distinct, non-empty and not 'neutral'")
            ]
        n = len(names)
        colours = obs.colours if obs.colours is not None else data.colours[:n]
        if len(colours) != n or len(set(colours)) != n or not set(colours) <= set(data.colours):
            return state, [
                _invalid(
                    obs, f"colours: expected {n} distinct colours of {', '.join(data.colours)}"
                )
            ]
        rng = random.Random(obs.seed)
        missing = [
            k for k, v in (("clients", obs.clients), ("objectives", obs.objectives)) if v is None
        ]
        if n == 3 and obs.neutral is None:
            missing.append("neutral")
        if missing and obs.seed is None:
            return state, [_invalid(obs, f"give 'seed' or every one of: {', '.join(missing)}")]
        cards = data.deck_cards(n)
        if obs.clients is not None:
            # The game's client cards once each (Setup 5; Rules for 2 Players: marked removed).
            if sorted(obs.clients) != sorted(cards):
                return state, [
                    _invalid(
                        obs,
                        f"clients: expected the {len(cards)} client ids of a {n}-player game once each",
                    )
                ]
            deck = list(obs.clients)
        else:
            # Setup 5: shuffle without the Dragon, then put it in the middle of the deck.
            deck = [c for c in cards if c != data.dragon]
            rng.shuffle(deck)
            deck.insert(len(deck) // 2, data.dragon)
        if obs.objectives is not None:
            objs = obs.objectives
            if (
                len(objs) != data.objectives_in_play
                or len(set(objs)) != len(objs)
                or not set(objs) <= set(data.objectives)
            ):
                return state, [
                    _invalid(
                        obs,
                        f"objectives: expected {data.objectives_in_play} distinct objective ids",
                    )
                ]
        else:
            # Setup 8: 4 objective cards at random.
            objs = tuple(sorted(rng.sample(sorted(data.objectives), data.objectives_in_play)))
        side = data.side_for(n)
        tiles: list[Tile | None] = [None] * len(side.cells)
        box: list[tuple[str, str, int]] = []
        neutral = None
        unused = [c for c in data.colours if c not in colours]
        if n == 3:
            # Rules for 3 Players: the unselected colour's Dragons to the box, its other 12 tiles
            # at random on the un-numbered slots.
            neutral = unused[0]
            open_cells = [c.index for c in side.cells if c.slot is None]
            pool = [a for a in ANIMALS if a != "dragon" for _ in range(data.per_colour[a])]
            if obs.neutral is not None:
                if len(obs.neutral) != len(open_cells) or sorted(obs.neutral) != sorted(pool):
                    return state, [
                        _invalid(
                            obs,
                            f"neutral: expected the {len(pool)} non-Dragon animals of one colour, in board order",
                        )
                    ]
                pool = list(obs.neutral)
            else:
                rng.shuffle(pool)
            if len(pool) != len(open_cells):
                return state, [
                    _invalid(
                        obs,
                        f"neutral: the board has {len(open_cells)} un-numbered slots for {len(pool)} tiles",
                    )
                ]
            for cell, a in zip(open_cells, pool):
                tiles[cell] = (neutral, a)
            box.append((neutral, "dragon", data.per_colour["dragon"]))
            unused = unused[1:]
        for c in unused:
            for a in ANIMALS:
                box.append((c, a, data.per_colour[a]))
        boxed = tuple(c for c in data.clients if c not in cards)
        # Setup 4: 14 tiles and 12 slot cards of one colour each.
        players = tuple(
            PlayerState(name, col, tuple(data.per_colour[a] for a in ANIMALS), data.slot_numbers)
            for name, col in zip(names, colours)
        )
        new = CarrosselState(
            phase="play",
            round=1,
            players=players,
            side=side.name,
            tiles=tuple(tiles),
            standees=((),) * len(side.cells),
            deck=tuple(deck),
            boxed=boxed,
            box_tiles=tuple(box),
            neutral=neutral,
            objectives=tuple(objs),
            direction=data.start_direction,
        )
        # Setup 6: 3 clients in front of each booth (Rules for 2 Players: and a queue of 3).
        new, calls, ok = self._refill(new, obs.t, announce=False)
        if not ok:
            return state, [_invalid(obs, "clients: not enough client cards to set up the booths")]
        started = GameStarted(
            t=obs.t,
            players=names,
            colours=dict(zip(names, colours)),
            booths={p.name: p.booth for p in new.players},
            objectives=new.objectives,
            neutral=neutral,
            direction=_direction_word(data.start_direction),
        )
        return self._start_round(new, obs.t, [started] + calls)

    # -- Phase 1 - Play -------------------------------------------------------------------

    def _start_round(
        self, state: CarrosselState, t: float, calls: list[Call]
    ) -> tuple[CarrosselState, list[Call]]:
        data = self.data
        # END of the game: a player who cannot make a legal move ends the game at once.
        for p in state.players:
            if not can_play(data, state, p.name):
                why = (
                    "has no animal tiles left"
                    if sum(p.tiles) == 0
                    else "has no slot card that matches a free slot"
                )
                return self._end(state, t, calls, f"{p.name} cannot make a legal move ({why})")
        sectors = player_sectors(data, state)
        slots = {}
        for p in state.players:
            jump = any(data.clients[c].animal == "tiger" for c in p.usable)
            slots[p.name] = tuple(
                s
                for s in sorted(set(p.slots))
                if _slot_allowed(data, state, s)
                and (
                    not isinstance(placement(data, state, p.name, s, False), str)
                    or (jump and not isinstance(placement(data, state, p.name, s, True), str))
                )
            )
        state = dataclasses.replace(state, phase="play", plays=(), pending=(), score_phase=0)
        return state, calls + [RoundStarted(t=t, round=state.round, sectors=sectors, slots=slots)]

    def _play(self, state: CarrosselState, obs: PlayObserved) -> tuple[CarrosselState, list[Call]]:
        if state.phase != "play":
            return state, [
                _invalid(obs, f"play: not now (phase {state.phase}; plays are made in Phase 1)")
            ]
        p = state.player(obs.player)
        if p is None:
            return state, [
                _invalid(
                    obs,
                    f"player: unknown player {obs.player!r} (players: {', '.join(x.name for x in state.players)})",
                )
            ]
        play = Play(obs.player, obs.slot, obs.animals, obs.ability, obs.ticket)
        if any(x.player == p.name for x in state.plays):
            return state, [
                IllegalPlay(
                    t=obs.t,
                    player=p.name,
                    play=str(play),
                    reason="already played this round; the reveal is simultaneous",
                )
            ]
        reason = check_play(self.data, state, play)
        if reason is not None:
            return state, [IllegalPlay(t=obs.t, player=p.name, play=str(play), reason=reason)]
        plays = state.plays + (play,)
        waiting = tuple(x.name for x in state.players if x.name not in {y.player for y in plays})
        state = dataclasses.replace(state, plays=plays)
        calls: list[Call] = [PlayReceived(t=obs.t, player=p.name, waiting_for=waiting)]
        if waiting:
            return state, calls
        return self._reveal(state, obs.t, calls)

    def _reveal(
        self, state: CarrosselState, t: float, calls: list[Call]
    ) -> tuple[CarrosselState, list[Call]]:
        """Phase 1 - Play, 2: everything is revealed at once, then the abilities act."""
        data = self.data
        side = data.boards[state.side]
        order = {p.name: k for k, p in enumerate(state.players)}
        plays = sorted(state.plays, key=lambda x: order[x.player])
        # Placements are decided on the board as it stood at the reveal.
        where = {
            pl.player: placement(
                data,
                state,
                pl.player,
                pl.slot,
                pl.ability is not None and data.clients[pl.ability].animal == "tiger",
            )
            for pl in plays
        }
        standees = list(state.standees)
        tiles = list(state.tiles)
        players = {p.name: p for p in state.players}
        more: list[Call] = []
        # Remove Clients (Fish): BEFORE placing tiles, standees off the player's own tiles.
        for pl in plays:
            if pl.ability is not None and data.clients[pl.ability].animal == "fish":
                colour = players[pl.player].colour
                removed = [
                    side.cells[i].name
                    for i, tl in enumerate(tiles)
                    if tl is not None and tl[0] == colour and standees[i]
                ]
                for i, tl in enumerate(tiles):
                    if tl is not None and tl[0] == colour:
                        standees[i] = ()
                more.append(
                    AbilityUsed(
                        t=t,
                        player=pl.player,
                        client=pl.ability,
                        ability="remove_clients",
                        detail=f"standees removed from {', '.join(removed) or 'no tile'}",
                    )
                )
        revealed_cells: dict[str, tuple[str, ...]] = {}
        for pl in plays:
            p = players[pl.player]
            cells = where[pl.player]
            assert not isinstance(cells, str)
            counts = list(p.tiles)
            for cell, a in zip(cells, pl.animals):
                tiles[cell] = (p.colour, a)
                counts[_ANIMAL_INDEX[a]] -= 1
            revealed_cells[p.name] = tuple(side.cells[c].name for c in cells)
            # Phase 1 - Play, 3: the slot card goes face up to the discard pile.
            hand = list(p.slots)
            hand.remove(pl.slot)
            p = dataclasses.replace(
                p, tiles=tuple(counts), slots=tuple(hand), slots_played=p.slots_played + (pl.slot,)
            )
            if pl.ability is not None:
                ability = ABILITIES[data.clients[pl.ability].animal]
                # Client Card abilities: a used card goes to the discard pile.
                p = dataclasses.replace(p, used=p.used + (pl.ability,))
                if ability == "jump":
                    slot_no = [side.cells[c].slot for c in cells]
                    more.append(
                        AbilityUsed(
                            t=t,
                            player=p.name,
                            client=pl.ability,
                            ability="jump",
                            detail=f"slot card {pl.slot} -> slot(s) {', '.join(map(str, slot_no))}",
                        )
                    )
                elif ability == "recover":
                    # Recover (Swan): every discarded card back to the hand, except the Swan and
                    # the slot card just played.
                    back_slots = tuple(s for s in p.slots_played if s != pl.slot)
                    back_clients = tuple(c for c in p.used if c != pl.ability)
                    p = dataclasses.replace(
                        p, slots=p.slots + back_slots, slots_played=(pl.slot,), used=(pl.ability,)
                    )
                    more.append(
                        AbilityUsed(
                            t=t,
                            player=p.name,
                            client=pl.ability,
                            ability="recover",
                            detail=f"slot cards {list(back_slots)} and clients {list(back_clients)} back in hand",
                        )
                    )
            players[p.name] = p
        state = dataclasses.replace(
            state,
            tiles=tuple(tiles),
            standees=tuple(standees),
            players=tuple(players[p.name] for p in state.players),
            plays=(),
        )
        calls = (
            calls
            + [Revealed(t=t, plays={pl.player: str(pl) for pl in plays}, cells=revealed_cells)]
            + more
        )
        # Single ticket (Horse): a matching booth client sits on the new tile at once.
        for pl in plays:
            if pl.ability is None or data.clients[pl.ability].animal != "horse":
                continue
            p = state.player(pl.player)
            assert p is not None
            cells = where[pl.player]
            options = _ticket_options(data, p, pl.animals)
            client, k = next((c, k) for c, k in options if pl.ticket in (None, c))
            cell = cells[k]  # type: ignore[index]
            standees = list(state.standees)
            standees[cell] = standees[cell] + (client,)
            booth = tuple(c for c in p.booth if c != client)
            p = dataclasses.replace(p, booth=booth, won=p.won + (client,))
            state = dataclasses.replace(
                state, standees=tuple(standees), players=_replace_player(state.players, p)
            )
            calls.append(
                AbilityUsed(
                    t=t,
                    player=p.name,
                    client=pl.ability,
                    ability="single_ticket",
                    detail=f"client #{client} ({data.clients[client].animal}) sits on {side.cells[cell].name}",
                )
            )
            state, refill_calls, ok = self._refill(state, t)
            calls += refill_calls
            if not ok:
                return self._end(
                    state, t, calls, "not enough client cards to refill the booths (Single ticket)"
                )
        return self._start_scoring(state, t, calls, 2)

    # -- Phases 2 and 4 - Score -------------------------------------------------------------

    def _start_scoring(
        self, state: CarrosselState, t: float, calls: list[Call], phase: int
    ) -> tuple[CarrosselState, list[Call]]:
        data = self.data
        side = data.boards[state.side]
        sectors = player_sectors(data, state)
        owner = {p.colour: p.name for p in state.players}
        if state.neutral:
            owner[state.neutral] = NEUTRAL
        pending = []
        for p in state.players:
            # Phase 2 - Score: each player checks the sector(s) in front of them.
            opts = scoring_options(
                data, side, state.tiles, state.standees, p.booth, sectors[p.name], owner
            )
            if not opts:
                continue
            # Scoring is compulsory; with one way only, there is no choice to make.
            pending.append(Pending(p.name, tuple(opts), 0 if len(opts) == 1 else None))
            if len(opts) > 1:
                calls = calls + [
                    SequenceOptions(
                        t=t,
                        player=p.name,
                        phase=phase,
                        options=tuple(options_text(data, state, opts)),
                    )
                ]
        state = dataclasses.replace(state, phase="score", score_phase=phase, pending=tuple(pending))
        if all(pp.chosen is not None for pp in pending):
            return self._resolve_scoring(state, t, calls)
        return state, calls

    def _choose(self, state: CarrosselState, obs: Choose) -> tuple[CarrosselState, list[Call]]:
        if state.phase != "score":
            return state, [_invalid(obs, f"choose: nothing to choose now (phase {state.phase})")]
        k = next((k for k, pp in enumerate(state.pending) if pp.player == obs.player), None)
        if k is None or len(state.pending[k].options) == 1:
            return state, [_invalid(obs, f"player: {obs.player!r} has no choice to make")]
        pp = state.pending[k]
        if pp.chosen is not None:
            return state, [
                _invalid(obs, f"player: {obs.player} has already chosen option {pp.chosen + 1}")
            ]
        if not 1 <= obs.option <= len(pp.options):
            return state, [
                _invalid(obs, f"option: expected 1 to {len(pp.options)}, got {obs.option}")
            ]
        pending = list(state.pending)
        pending[k] = dataclasses.replace(pp, chosen=obs.option - 1)
        state = dataclasses.replace(state, pending=tuple(pending))
        if all(x.chosen is not None for x in pending):
            return self._resolve_scoring(state, obs.t, [])
        return state, []

    def _resolve_scoring(
        self, state: CarrosselState, t: float, calls: list[Call]
    ) -> tuple[CarrosselState, list[Call]]:
        """Place every chosen sequence's standees at once (Two standees on one tile), give the
        cards to the tiles' owners, then refill the booths."""
        data = self.data
        side = data.boards[state.side]
        standees = list(state.standees)
        players = {p.name: p for p in state.players}
        boxed = state.boxed
        calls = list(calls)
        for pp in state.pending:
            option = pp.options[pp.chosen]  # type: ignore[index]
            awards = {}
            for cell, client in option.awards:
                standees[cell] = standees[cell] + (client,)
                owner = state.owner(state.tiles[cell][0])  # type: ignore[index]
                if owner == NEUTRAL:
                    # Rules for 3 Players: clients won by the neutral colour leave the game.
                    boxed = boxed + (client,)
                else:
                    o = players[owner]
                    players[owner] = dataclasses.replace(o, won=o.won + (client,))
                awards[str(client)] = f"{side.cells[cell].name}>{owner}"
            b = players[pp.player]
            players[pp.player] = dataclasses.replace(
                b, booth=tuple(c for c in b.booth if c not in dict(option.awards).values())
            )
            calls.append(
                Scored(
                    t=t,
                    player=pp.player,
                    phase=state.score_phase,
                    cells=tuple(side.cells[i].name for i in option.cells),
                    awards=awards,
                )
            )
        state = dataclasses.replace(
            state,
            standees=tuple(standees),
            players=tuple(players[p.name] for p in state.players),
            boxed=boxed,
            pending=(),
        )
        # Phase 2 - Score, 3: refill every booth to 3; if impossible the game ends.
        state, refill_calls, ok = self._refill(state, t)
        calls += refill_calls
        if not ok:
            return self._end(state, t, calls, "not enough client cards for every booth to have 3")
        if state.score_phase == 2:
            # Phase 3 - Rotate.
            step = _step_deg(data, state) * state.direction
            target = (nominal_angle(data, state) + step) % 360.0
            state = dataclasses.replace(state, phase="rotate", score_phase=0)
            return state, calls + [
                TurnBoard(
                    t=t,
                    turn_deg=step,
                    direction=(
                        _direction_word(state.direction) if len(state.players) != 2 else "either"
                    ),
                    target_deg=target,
                )
            ]
        # Phase 4 - Score done: a new round starts from Phase 1.
        state = dataclasses.replace(state, round=state.round + 1, score_phase=0)
        return self._start_round(state, t, calls)

    def _refill(
        self, state: CarrosselState, t: float, announce: bool = True
    ) -> tuple[CarrosselState, list[Call], bool]:
        """Refill booths (and 2-player queues) from the deck in seat order; ``ok`` is False
        when a booth cannot get back to 3 (END of the game)."""
        data = self.data
        deck = list(state.deck)
        players = list(state.players)
        calls: list[Call] = []
        direction = state.direction
        two = len(players) == 2
        need = sum(data.booth_size - len(p.booth) for p in players)
        if need > len(deck) + sum(len(p.queue) for p in players if two):
            return state, calls, False
        for k, p in enumerate(players):
            booth, queue = list(p.booth), list(p.queue)
            changed = False
            while len(booth) < data.booth_size:
                # Rules for 2 Players: the queue supplies the booth first.
                src = queue if queue else deck
                if not src:
                    return state, calls, False
                card = src.pop(0)
                booth.append(card)
                changed = True
                # Reverse rotation (Dragon): as soon as it appears; ignored with 2 players.
                if card == data.dragon and not two:
                    direction = -direction
                    calls.append(RotationReversed(t=t, direction=_direction_word(direction)))
            while two and len(queue) < data.queue_size and deck:
                queue.append(deck.pop(0))
                changed = True
            players[k] = dataclasses.replace(p, booth=tuple(booth), queue=tuple(queue))
            if changed and announce:
                calls.append(
                    BoothRefilled(t=t, player=p.name, booth=tuple(booth), queue=tuple(queue))
                )
        return (
            dataclasses.replace(
                state, deck=tuple(deck), players=tuple(players), direction=direction
            ),
            calls,
            True,
        )

    # -- Phase 3 - Rotate ---------------------------------------------------------------

    def _board_turned(
        self, state: CarrosselState, obs: BoardTurned
    ) -> tuple[CarrosselState, list[Call]]:
        data = self.data
        if obs.uncertain:
            # An uncertain reading is not judged; the source reports again once it is sure.
            return dataclasses.replace(state), []
        tol = self.turn_tolerance_deg
        start = nominal_angle(data, state)
        if state.phase == "rotate":
            expected = _step_deg(data, state) * state.direction
            verdict = judge_turn(start, obs.angle_deg, expected, tol)
            if len(state.players) == 2 and verdict.verdict == "wrong_direction":
                verdict = dataclasses.replace(verdict, verdict="done")  # 180 degrees either way
            if verdict.verdict == "done":
                state = dataclasses.replace(
                    state,
                    steps=state.steps + state.direction,
                    angle_deg=obs.angle_deg,
                    misaligned=False,
                )
                calls: list[Call] = [
                    BoardTurnedOk(
                        t=obs.t, angle_deg=obs.angle_deg, sectors=player_sectors(data, state)
                    )
                ]
                # Phase 4 - Score.
                return self._start_scoring(state, obs.t, calls, 4)
            if verdict.verdict == "not_turned":
                return dataclasses.replace(state, angle_deg=obs.angle_deg), []
            return dataclasses.replace(state, angle_deg=obs.angle_deg, misaligned=True), [
                WrongTurn(
                    t=obs.t,
                    reason=verdict.verdict,
                    turned_deg=round(verdict.turned_deg, 1),
                    expected_turn_deg=expected,
                    target_deg=(start + expected) % 360.0,
                )
            ]
        # Outside Phase 3 the board must stand still at its nominal angle.
        off = wrap_deg(obs.angle_deg - start)
        if abs(off) <= tol:
            if state.misaligned:
                return dataclasses.replace(state, angle_deg=obs.angle_deg, misaligned=False), [
                    BoardAligned(t=obs.t, angle_deg=obs.angle_deg)
                ]
            return dataclasses.replace(state, angle_deg=obs.angle_deg), []
        return dataclasses.replace(state, angle_deg=obs.angle_deg, misaligned=True), [
            WrongTurn(
                t=obs.t,
                reason="not_now",
                turned_deg=round(off, 1),
                expected_turn_deg=0.0,
                target_deg=start,
            )
        ]

    # -- END of the game --------------------------------------------------------------------

    def _end(
        self, state: CarrosselState, t: float, calls: list[Call], reason: str
    ) -> tuple[CarrosselState, list[Call]]:
        state = dataclasses.replace(state, phase="over", end_reason=reason, plays=(), pending=())
        table = final_scores(self.data, state)
        return state, calls + [
            GameOver(
                t=t,
                reason=reason,
                scores={r["player"]: r["total"] for r in table["players"]},
                winners=tuple(table["winners"]),
                table=table,
            )
        ]

    _handlers: dict[type, Any] = {
        GameStart: _game_start,
        PlayObserved: _play,
        Choose: _choose,
        BoardTurned: _board_turned,
    }
