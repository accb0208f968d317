"""Carrousel (Asmodée 2006): the rules engine.

Rulebook: ``shared/rules/carrousel.txt`` (sections: Components, Setup, Course of the Game,
Moving the Horses, Correct Order, Victory, Special Cases, Advanced Rules). Rulings where the
rulebook leaves room: the rulings in ``docs/vocabulary.md`` (Carrousel), which also lists the vocabulary.

The board has 7 spaces numbered 0-6 counter-clockwise; the 5 horses stand on consecutive
spaces, so the 2 empty spaces are neighbours. The carousel turns counter-clockwise (towards
higher space numbers), so the *first* horse is the one with the empty spaces just ahead of it;
the *line* of a position is its horses from first to last.

Three layers, as in python-chess:

* :class:`Position` - the 7 spaces, with ``line``, ``first_three``, ``legal_moves()``,
  ``is_legal(move)``, ``apply(move)``; positions are immutable, so "what if" is free.
* :func:`classify` - the move that turns one observed position into the next, or ``None``.
* :class:`CarrouselReferee` - the pure engine: ``apply(state, observation) -> (state, calls)``
  with cards, claims, penalties, the dead end, the lucky bird and victory. Time arrives with each
  observation; the engine never reads a clock.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import random
from collections.abc import Iterator, Sequence
from typing import Any, Literal, NamedTuple

from companion.events import (
    Call,
    InvalidObservation,
    Observation,
    Tick,
    Vocabulary,
    event_type,
)

__all__ = [
    "COLOURS",
    "EMPTY",
    "UNKNOWN",
    "NUM_SPACES",
    "CARDS",
    "MOVE_KINDS",
    "Card",
    "Move",
    "Position",
    "PositionError",
    "classify",
    "legal_moves",
    "GAP_REASON",
    "deal",
    "target_points",
    "hand_size",
    "CarrouselState",
    "PlayerState",
    "CarrouselReferee",
    "shuffled_deck",
    "VOCABULARY",
    # observations
    "GameStart",
    "Board",
    "Claim",
    "CardSeen",
    # calls
    "GameStarted",
    "MoveMade",
    "IllegalMove",
    "Point",
    "LuckyBird",
    "Penalty",
    "ClaimTooLate",
    "DeadEnd",
    "Countdown",
    "DeadEndCorrected",
    "DeadEndNotCorrected",
    "CardCorrected",
    "Winner",
]

#: The five horses (Components).
COLOURS: tuple[str, ...] = ("black", "yellow", "blue", "green", "red")
EMPTY = "empty"
UNKNOWN = "unknown"
NUM_SPACES = 7
_COLOUR_SET = frozenset(COLOURS)
_LETTER = {"black": "k", "yellow": "y", "blue": "b", "green": "g", "red": "r", EMPTY: "."}
_FROM_LETTER = {v: k for k, v in _LETTER.items()}

Card = tuple[str, str, str]
#: The 60 cards: every ordered triple of distinct colours (Components; the rulings in docs/vocabulary.md).
CARDS: tuple[Card, ...] = tuple(itertools.permutations(COLOURS, 3))  # type: ignore[assignment]

#: Move types of the rulebook (Moving the Horses), in the rulebook's order.
MOVE_KINDS: tuple[str, ...] = (
    "swap",  # Simple move: swap two horses.
    "first_to_last",  # The firsts become the lasts: first horse to the last place.
    "last_to_front",  # ... or the last horse to the very front.
    "knock_out_to_front",  # One horse knocks out another; the knocked-out one goes first.
    "knock_out_to_end",  # The first horse knocks out another; the knocked-out one goes last.
    "total_chaos",  # Two neighbours put on the two empty spaces in any order.
)


class PositionError(ValueError):
    """A set of 7 space readings that no Carrousel position can have (the message says why)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Move:
    """One move of the rulebook (Moving the Horses), as a small immutable value.

    Attributes:
        kind: one of :data:`MOVE_KINDS`.
        horses: the horses named by the move, by colour:
            ``swap``: the two swapped horses, in line order;
            ``first_to_last``: the first horse; ``last_to_front``: the last horse;
            ``knock_out_to_front``: (the horse that moves in, the knocked-out horse);
            ``knock_out_to_end``: (the first horse, the knocked-out horse);
            ``total_chaos``: (the horse put on the space just ahead of the first horse, the
            horse put on the next empty space).

    The text form is ``"kind:colour,colour"``, e.g. ``"swap:blue,red"`` (:meth:`from_text`).
    """

    kind: str
    horses: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.kind}:{','.join(self.horses)}"

    @classmethod
    def from_text(cls, text: str) -> Move:
        """Parse the text form ``"kind:colour[,colour]"``.

        Raises:
            ValueError: an unknown kind or colour, naming it.
        """
        kind, _, rest = text.partition(":")
        if kind not in MOVE_KINDS:
            raise ValueError(f"unknown move kind {kind!r} (known: {', '.join(MOVE_KINDS)})")
        horses = tuple(h for h in rest.split(",") if h)
        for h in horses:
            if h not in _COLOUR_SET:
                raise ValueError(f"unknown horse colour {h!r} (known: {', '.join(COLOURS)})")
        return cls(kind, horses)


@dataclasses.dataclass(frozen=True, slots=True)
class Position:
    """The carousel: what stands on each of the 7 spaces.

    Attributes:
        spaces: 7 strings, space 0 to 6 counter-clockwise, each a colour of :data:`COLOURS`
            or ``"empty"``. Build one with :meth:`from_spaces` (checked) or :meth:`from_text`.

    The text form has one letter a space: ``k`` black, ``y`` yellow, ``b`` blue, ``g`` green,
    ``r`` red, ``.`` empty, e.g. ``".gbyrk."``.
    """

    spaces: tuple[str, ...]

    @classmethod
    def from_spaces(cls, spaces: Sequence[str]) -> Position:
        """Build a position from 7 space readings, checking every rule of Setup.

        Raises:
            PositionError: not 7 spaces, an unknown colour, a horse twice, not five horses, or
                the five not on consecutive spaces.
        """
        spaces = tuple(spaces)
        known = _VALID_POSITIONS.get(spaces)
        if known is not None:
            return known
        if len(spaces) != NUM_SPACES:
            raise PositionError(f"expected {NUM_SPACES} spaces, got {len(spaces)}")
        for i, s in enumerate(spaces):
            if s != EMPTY and s not in _COLOUR_SET:
                raise PositionError(
                    f"space {i}: unknown colour {s!r} (expected one of "
                    f"{', '.join(COLOURS)} or {EMPTY})"
                )
        horses = [s for s in spaces if s != EMPTY]
        for c in COLOURS:
            if horses.count(c) > 1:
                raise PositionError(f"the {c} horse stands on {horses.count(c)} spaces")
        if len(horses) != len(COLOURS):
            raise PositionError(f"expected 5 horses, found {len(horses)}")
        pos = cls(spaces)
        if not pos.is_contiguous():
            raise PositionError(
                "the five horses are not on consecutive spaces (a gap between horses)"
            )
        if cls is Position:
            _VALID_POSITIONS[spaces] = pos  # at most 7 x 120 = 840 of them
        return pos

    @classmethod
    def from_reading(cls, spaces: Sequence[str]) -> Position:
        """Build the position a stable camera reading shows, a gap between horses allowed.

        A board with a gap is what an illegal move leaves on the table (Moving the Horses: the
        5 horses must stand one after another); the referee judges what comes next on it. Such
        a position has no first horse, line or first three (:meth:`has_gap`).

        Raises:
            PositionError: not 7 spaces, an unknown colour, a horse twice, or not five horses.
        """
        spaces = tuple(spaces)
        try:
            return cls.from_spaces(spaces)
        except PositionError:
            pos = cls(spaces)
            if not _gap_only(spaces):
                raise
            return pos

    @classmethod
    def from_text(cls, text: str) -> Position:
        """Parse the one-letter-a-space text form, e.g. ``".gbyrk."``.

        Raises:
            PositionError: an unknown letter, or an impossible position.
        """
        try:
            return cls.from_spaces([_FROM_LETTER[ch] for ch in text])
        except KeyError as exc:
            raise PositionError(f"unknown letter {exc.args[0]!r} in {text!r}") from None

    @classmethod
    def from_line(cls, line: Sequence[str], first_space: int = 4) -> Position:
        """Build the position whose horses, first to last, are ``line``, the first horse on
        ``first_space`` (0-6).

        Raises:
            PositionError: ``line`` is not the 5 colours once each.
        """
        spaces = [EMPTY] * NUM_SPACES
        for i, colour in enumerate(line):
            spaces[(first_space - i) % NUM_SPACES] = colour
        return cls.from_spaces(spaces)

    def __str__(self) -> str:
        return "".join(_LETTER[s] for s in self.spaces)

    def is_contiguous(self) -> bool:
        """True when the two empty spaces are neighbours, i.e. the horses stand one after
        another (Moving the Horses: no empty space between horses)."""
        empties = [i for i, s in enumerate(self.spaces) if s == EMPTY]
        if len(empties) != NUM_SPACES - len(COLOURS):
            return False
        a, b = empties
        return (b - a) % NUM_SPACES in (1, NUM_SPACES - 1)

    @property
    def has_gap(self) -> bool:
        """True for five horses with an empty space between two of them (a board only an
        illegal move leaves; :meth:`from_reading`)."""
        return not self.is_contiguous()

    @property
    def first_space(self) -> int:
        """Space number (0-6) of the first horse: the horse with an empty space just ahead of
        it in the direction of travel (counter-clockwise, towards higher numbers).

        Raises:
            PositionError: the board has a gap (no horse is first).
        """
        if not self.is_contiguous():
            raise PositionError(f"{self}: a gap between the horses, so no horse is first")
        return _first_space(self.spaces)

    @property
    def line(self) -> tuple[str, ...]:
        """The five horses from first to last."""
        f = self.first_space
        return tuple(self.spaces[(f - i) % NUM_SPACES] for i in range(len(COLOURS)))

    @property
    def first_three(self) -> Card:
        """The first, second and third horses: what a card must show (Object of the Game)."""
        three = _FIRST_THREE.get(self.spaces)
        if three is None:
            f = self.first_space  # raises PositionError on a board with a gap
            s = self.spaces
            three = _FIRST_THREE[self.spaces] = (s[f], s[(f - 1) % NUM_SPACES], s[(f - 2) % NUM_SPACES])
        return three

    def space_of(self, colour: str) -> int:
        """The space number (0-6) of a horse. Raises ValueError for an unknown colour."""
        return self.spaces.index(colour)

    def legal_moves(self) -> list[Move]:
        """Every move of the rulebook that leaves the five horses on consecutive spaces and
        changes the position (Moving the Horses), in the rulebook's order."""
        return list(_successors(self.spaces).values())

    def is_legal(self, move: Move) -> bool:
        """True when ``move`` is one of :meth:`legal_moves`."""
        return move in _successors(self.spaces).values()

    def apply(self, move: Move) -> Position:
        """The position after ``move``.

        Raises:
            ValueError: the move is not legal here (the message names it and the position).
        """
        for after, m in _successors(self.spaces).items():
            if m == move:
                return Position(after)
        raise ValueError(f"move {move} is not legal in position {self}")

    def pseudo_legal_moves(self) -> Iterator[tuple[Move, tuple[str, ...]]]:
        """Every move as the rulebook describes it, with the spaces it leaves, before the
        filter that keeps the five horses consecutive."""
        return _pseudo_legal(self.spaces)


_VALID_POSITIONS: dict[tuple[str, ...], Position] = {}
_FIRST_THREE: dict[tuple[str, ...], Card] = {}


def _gap_only(spaces: tuple[str, ...]) -> bool:
    """True when the only thing wrong with 7 readings is a gap: five distinct horses, two
    empty spaces that are not neighbours."""
    if len(spaces) != NUM_SPACES or any(s != EMPTY and s not in _COLOUR_SET for s in spaces):
        return False
    horses = [s for s in spaces if s != EMPTY]
    return len(horses) == len(COLOURS) and len(set(horses)) == len(COLOURS)


def _first_space(spaces: tuple[str, ...]) -> int:
    for i in range(NUM_SPACES):
        if spaces[i] != EMPTY and spaces[(i + 1) % NUM_SPACES] == EMPTY:
            return i
    raise PositionError("no horse has an empty space ahead of it")


def _relocate(spaces: tuple[str, ...], moves: Sequence[tuple[int, int]]) -> tuple[str, ...]:
    """Lift the horses on the source spaces, then put each on its target space."""
    out = list(spaces)
    lifted = [(spaces[src], dst) for src, dst in moves]
    for src, _ in moves:
        out[src] = EMPTY
    for colour, dst in lifted:
        out[dst] = colour
    return tuple(out)


def _pseudo_legal(spaces: tuple[str, ...]) -> Iterator[tuple[Move, tuple[str, ...]]]:
    f = _first_space(spaces)
    n = NUM_SPACES
    line_spaces = [(f - i) % n for i in range(len(COLOURS))]
    line = [spaces[s] for s in line_spaces]
    front = (f + 1) % n  # the empty space just ahead of the first horse
    back = (f + 2) % n  # the other empty space, just behind the last horse
    # Simple move: swap the positions of two horses.
    for i, j in itertools.combinations(range(5), 2):
        yield Move("swap", (line[i], line[j])), _relocate(
            spaces, [(line_spaces[i], line_spaces[j]), (line_spaces[j], line_spaces[i])]
        )
    # The firsts become the lasts: the first horse to the last place.
    yield Move("first_to_last", (line[0],)), _relocate(spaces, [(line_spaces[0], back)])
    # ... or the last horse to the very front.
    yield Move("last_to_front", (line[4],)), _relocate(spaces, [(line_spaces[4], front)])
    # One horse knocks out another: any horse takes another's place, the knocked-out horse
    # goes to the very first place.
    for i, j in itertools.permutations(range(5), 2):
        yield Move("knock_out_to_front", (line[i], line[j])), _relocate(
            spaces, [(line_spaces[i], line_spaces[j]), (line_spaces[j], front)]
        )
    # ... or the first horse takes another's place, the knocked-out horse goes to the very end.
    for j in range(1, 5):
        yield Move("knock_out_to_end", (line[0], line[j])), _relocate(
            spaces, [(line_spaces[0], line_spaces[j]), (line_spaces[j], back)]
        )
    # Total chaos: two horses standing next to each other onto the two empty spaces, in either
    # order.
    for i in range(4):
        a, b = line_spaces[i], line_spaces[i + 1]
        yield Move("total_chaos", (line[i], line[i + 1])), _relocate(
            spaces, [(a, front), (b, back)]
        )
        yield Move("total_chaos", (line[i + 1], line[i])), _relocate(
            spaces, [(b, front), (a, back)]
        )


@functools.lru_cache(maxsize=1024)
def _successors(spaces: tuple[str, ...]) -> dict[tuple[str, ...], Move]:
    """Legal successors: resulting spaces -> the first move (rulebook order) giving them."""
    out: dict[tuple[str, ...], Move] = {}
    if not Position(spaces).is_contiguous():
        # Every move starts from the 5 horses one after another (Moving the Horses): a board
        # with a gap has no first or last horse, so no move of the rulebook starts from it.
        return out
    for move, after in _pseudo_legal(spaces):
        # A move always leaves the 5 horses one after another (Moving the Horses).
        if after == spaces or not Position(after).is_contiguous():
            continue
        out.setdefault(after, move)
    return out


def legal_moves(position: Position) -> list[Move]:
    """Every legal move in ``position`` (Moving the Horses); the same as
    :meth:`Position.legal_moves`."""
    return position.legal_moves()


def classify(before: Position, after: Position) -> Move | None:
    """The rulebook move that turns ``before`` into ``after``, or ``None`` when no single legal
    move does (an illegal move). Equal positions give ``None`` too.

    When two move types give the same result the first in :data:`MOVE_KINDS` order is named.
    """
    return _successors(before.spaces).get(after.spaces)


def target_points(n_players: int) -> int:
    """Points to win (Victory): 20 with 2 players, 15 with 3, 10 with 4.

    Raises:
        ValueError: ``n_players`` is not 2, 3 or 4.
    """
    try:
        return {2: 20, 3: 15, 4: 10}[n_players]
    except KeyError:
        raise ValueError(f"Carrousel is for 2 to 4 players, got {n_players}") from None


def hand_size(n_players: int) -> int:
    """Face-up cards dealt to each player (Setup): 9 with 2 players, 6 with 3, 5 with 4.

    Raises:
        ValueError: ``n_players`` is not 2, 3 or 4.
    """
    try:
        return {2: 9, 3: 6, 4: 5}[n_players]
    except KeyError:
        raise ValueError(f"Carrousel is for 2 to 4 players, got {n_players}") from None


def deal(deck: Sequence[Card], n_players: int) -> tuple[tuple[tuple[Card, ...], ...], tuple[Card, ...]]:
    """Deal a shuffled deck (Setup): each player's face-up cards, then the draw pile.

    Args:
        deck: the 60 cards in order, top first.
        n_players: 2 to 4.

    Returns:
        ``(hands, draw_pile)``: per player a tuple of cards, top (active) card first; the draw
        pile top first.

    Raises:
        ValueError: a wrong player count.
    """
    k = hand_size(n_players)
    hands = tuple(tuple(deck[p * k : (p + 1) * k]) for p in range(n_players))
    return hands, tuple(deck[n_players * k :])


def shuffled_deck(seed: int) -> tuple[Card, ...]:
    """The 60 cards shuffled with ``random.Random(seed)`` (stable across CPython versions)."""
    deck = list(CARDS)
    random.Random(seed).shuffle(deck)
    return tuple(deck)


# --------------------------------------------------------------------------- observations


@event_type("game_start")
@dataclasses.dataclass(frozen=True, slots=True)
class GameStart(Observation):
    """The game begins: players, cards and the starting position (Setup).

    Attributes:
        players: 2 to 4 distinct names in seat order.
        spaces: the starting position, 7 readings (colour or ``"empty"``).
        seed: shuffle the 60 cards with this seed (the simulated table); or
        deck: the 60 cards in order, top first, as read from a real table. Exactly one of
            ``seed`` and ``deck`` is given.
        advanced: the advanced rules (every face-up card on the table counts); None: the
            referee's setting (``[carrousel] advanced``).
        dead_end_s: seconds without a point before the dead end (rulebook: 20); None: the
            referee's setting (``[carrousel] dead_end_s``).
        countdown_s: the last seconds before the dead end counted down aloud (0 = none,
            at most 10); None: the referee's setting (``[carrousel] countdown_s``).
        unseen_order: True when only the active cards of ``deck`` were seen (a real table: the
            camera reads each player's card, the order of the rest of the physical deck is
            unknown and ``deck`` orders it at random). A drawn card is then never announced
            from that order: ``point`` and ``lucky_bird`` say ``next_unseen`` and the camera's
            reading of the new card (``card_seen``) tells the referee which it is.
    """

    players: tuple[str, ...]
    spaces: tuple[str, ...]
    seed: int | None = None
    deck: tuple[tuple[str, str, str], ...] | None = None
    advanced: bool | None = None
    dead_end_s: float | None = None
    countdown_s: int | None = None
    unseen_order: bool = False


@event_type("board")
@dataclasses.dataclass(frozen=True, slots=True)
class Board(Observation):
    """A stable reading of the 7 spaces: a colour, ``"empty"`` or ``"unknown"`` (hidden) each.

    A reading with an ``"unknown"`` space, or with fewer than five horses (one or two in a
    hand), is not judged: the referee waits for a full one. Five horses with a gap between
    them are an ``illegal_move`` and become the position.
    """

    spaces: tuple[str, ...]


@event_type("claim")
@dataclasses.dataclass(frozen=True, slots=True)
class Claim(Observation):
    """A player pressed their claim button: "the first three match my card"."""

    player: str


@event_type("card_seen")
@dataclasses.dataclass(frozen=True, slots=True)
class CardSeen(Observation):
    """The camera read the card in front of a player (their active card), first to third."""

    player: str
    card: tuple[str, str, str]


# ------------------------------------------------------------------------------------ calls


@event_type("game_started")
@dataclasses.dataclass(frozen=True, slots=True)
class GameStarted(Call):
    """The deal is done: each player's active card, the points needed to win."""

    players: tuple[str, ...] = ()
    cards: dict[str, tuple[str, str, str]] = dataclasses.field(default_factory=dict)
    target: int = 0
    spaces: tuple[str, ...] = ()
    advanced: bool = False
    dead_end_s: float = 20.0


@event_type("move")
@dataclasses.dataclass(frozen=True, slots=True)
class MoveMade(Call):
    """A legal move was seen: its kind, the horses it named, the new first three."""

    kind: str = ""
    horses: tuple[str, ...] = ()
    spaces: tuple[str, ...] = ()
    first_three: tuple[str, str, str] = ("", "", "")


@event_type("illegal_move")
@dataclasses.dataclass(frozen=True, slots=True)
class IllegalMove(Call):
    """A change of position that no single move of the rulebook makes; ``reason`` says why
    (:data:`GAP_REASON` for a board with a gap between horses, which then is the position)."""

    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    reason: str = ""


@event_type("point")
@dataclasses.dataclass(frozen=True, slots=True)
class Point(Call):
    """A claim was accepted (Correct Order): the card is won, a new card drawn.

    ``next_card`` is the card drawn, or None: no card was left to draw, or ``next_unseen``
    (the deck's order is not known at this table: the camera reads the card turned up)."""

    player: str = ""
    card: tuple[str, str, str] = ("", "", "")
    score: int = 0
    next_card: tuple[str, str, str] | None = None
    owner: str = ""
    next_unseen: bool = False


@event_type("lucky_bird")
@dataclasses.dataclass(frozen=True, slots=True)
class LuckyBird(Call):
    """The first three already match a card, scored at once for its player (Special Cases).

    ``reason`` is ``"start"``, ``"dead_end"`` or ``"mistake"``.
    """

    player: str = ""
    card: tuple[str, str, str] = ("", "", "")
    score: int = 0
    next_card: tuple[str, str, str] | None = None
    reason: str = ""
    next_unseen: bool = False


@event_type("penalty")
@dataclasses.dataclass(frozen=True, slots=True)
class Penalty(Call):
    """A claim that did not match: one won card to the bottom of the draw pile, if any.
    ``first_three`` is ``("", "", "")`` when the board had a gap (no first three)."""

    player: str = ""
    card: tuple[str, str, str] = ("", "", "")
    first_three: tuple[str, str, str] = ("", "", "")
    lost_card: tuple[str, str, str] | None = None
    score: int = 0


@event_type("claim_too_late")
@dataclasses.dataclass(frozen=True, slots=True)
class ClaimTooLate(Call):
    """A claim for an order that was scored a moment before (a double press, or a slower
    hand in the advanced rules): the earliest press won; no penalty."""

    player: str = ""
    card: tuple[str, str, str] = ("", "", "")
    scored_by: str = ""


@event_type("dead_end")
@dataclasses.dataclass(frozen=True, slots=True)
class DeadEnd(Call):
    """No point for ``dead_end_s`` seconds: the last horse must go to the front."""

    horse: str = ""
    expected: tuple[str, ...] = ()


@event_type("countdown")
@dataclasses.dataclass(frozen=True, slots=True)
class Countdown(Call):
    """``seconds_left`` (int) seconds before the dead end falls due, called at each of the
    last ``countdown_s`` whole seconds (an option of the referee; the rulebook's 20 seconds
    are the players' own count, Special Cases: dead end)."""

    seconds_left: int = 0


@event_type("dead_end_corrected")
@dataclasses.dataclass(frozen=True, slots=True)
class DeadEndCorrected(Call):
    """The expected dead-end move was made; the dead-end clock restarts."""

    spaces: tuple[str, ...] = ()


@event_type("dead_end_not_corrected")
@dataclasses.dataclass(frozen=True, slots=True)
class DeadEndNotCorrected(Call):
    """After a dead end the table changed, but not by moving the last horse to the front."""

    expected: tuple[str, ...] = ()
    seen: tuple[str, ...] = ()


@event_type("card_corrected")
@dataclasses.dataclass(frozen=True, slots=True)
class CardCorrected(Call):
    """The camera saw another active card in front of a player than the one tracked."""

    player: str = ""
    was: tuple[str, str, str] = ("", "", "")
    now: tuple[str, str, str] = ("", "", "")


@event_type("winner")
@dataclasses.dataclass(frozen=True, slots=True)
class Winner(Call):
    """A player reached the target (Victory); the game is over."""

    player: str = ""
    scores: dict[str, int] = dataclasses.field(default_factory=dict)


VOCABULARY = Vocabulary(
    "carrousel",
    observations=(GameStart, Board, Claim, CardSeen),
    calls=(
        GameStarted,
        MoveMade,
        IllegalMove,
        Point,
        LuckyBird,
        Penalty,
        ClaimTooLate,
        DeadEnd,
        Countdown,
        DeadEndCorrected,
        DeadEndNotCorrected,
        CardCorrected,
        Winner,
    ),
)


# ------------------------------------------------------------------------------------ state


class PlayerState(NamedTuple):
    """One player's cards.

    Attributes:
        name: as given in ``game_start``.
        face_up: the face-up cards, active (top) card first.
        won: the won pile, most recently won last; the score is its length.
    """

    name: str
    face_up: tuple[Card, ...]
    won: tuple[Card, ...] = ()

    @property
    def score(self) -> int:
        """Points: the number of won cards."""
        return len(self.won)

    @property
    def active(self) -> Card | None:
        """The card the player is playing for (basic rules): the top face-up card."""
        return self.face_up[0] if self.face_up else None


Phase = Literal["waiting", "playing", "over"]


class CarrouselState(NamedTuple):
    """The whole game, an immutable value.

    Attributes:
        phase: ``"waiting"`` for ``game_start``, ``"playing"``, or ``"over"``.
        players: per seat.
        draw_pile: face-down cards, top first.
        position: the last full board reading (five horses; with a gap after an illegal
            move, :attr:`Position.has_gap`).
        target: points to win.
        advanced: advanced rules in force.
        dead_end_s: seconds of the dead-end clock.
        clock_start: session time (s) the dead-end clock last (re)started.
        expected: after a dead end is called, the position the correction must give; else None.
        last_t: time (s) of the last accepted observation.
        winner: the winner's name once over.
        last_scored: ``(scorer, owner, card)`` of the last point while the horses have not
            moved since, else None (to tell a late or double press from a wrong claim).
        countdown_s: how many of the last seconds before the dead end are counted down
            (0 = none).
        counted_t: session time (s) of the last ``countdown`` called (-1: none yet).
        unseen_order: the draw pile's order is a guess (``GameStart.unseen_order``): drawn
            cards are not announced, the camera's ``card_seen`` settles them.
    """

    phase: Phase = "waiting"
    players: tuple[PlayerState, ...] = ()
    draw_pile: tuple[Card, ...] = ()
    position: Position | None = None
    target: int = 0
    advanced: bool = False
    dead_end_s: float = 20.0
    clock_start: float = 0.0
    expected: Position | None = None
    last_t: float = 0.0
    winner: str | None = None
    last_scored: tuple[str, str, Card] | None = None
    countdown_s: int = 0
    counted_t: float = -1.0
    unseen_order: bool = False

    def player(self, name: str) -> PlayerState | None:
        """The player of that name, or None."""
        for p in self.players:
            if p.name == name:
                return p
        return None

    @property
    def scores(self) -> dict[str, int]:
        """Points per player name."""
        return {p.name: p.score for p in self.players}

    @property
    def dead_end_due(self) -> float | None:
        """Session time (s) at which the dead end will be called, or None when it will not."""
        if self.phase != "playing" or self.expected is not None:
            return None
        if self.position is not None and self.position.has_gap:
            return None  # no last horse to move to the front: called once the gap closes
        return self.clock_start + self.dead_end_s

    def countdown_times(self) -> list[tuple[float, int]]:
        """The countdown calls still to come before the dead end: ``(session time s,
        seconds_left)`` in time order; empty when the countdown is off or no dead end is due.
        A countdown second at or before the clock's (re)start is skipped."""
        due = self.dead_end_due
        if due is None or self.countdown_s <= 0:
            return []
        out = []
        for left in range(self.countdown_s, 0, -1):
            at = due - left
            if at > self.clock_start and at > self.counted_t:
                out.append((at, left))
        return out


_STATE_INDEX = {name: i for i, name in enumerate(CarrouselState._fields)}


def _evolve(state: CarrouselState, **changes: Any) -> CarrouselState:
    """``_evolve(state, **changes)``, three times faster (the referee's hot path)."""
    values = list(state)
    for name, value in changes.items():
        values[_STATE_INDEX[name]] = value
    return tuple.__new__(CarrouselState, values)


def _card(value: Sequence[str]) -> tuple[str, ...]:
    return tuple(value)


class CarrouselReferee:
    """The Carrousel rules engine: pure, ``apply(state, observation) -> (state, calls)``.

    Args:
        advanced: default for ``game_start.advanced`` when the observation does not say.
        dead_end_s: default for ``game_start.dead_end_s`` (rulebook: 20 s).
        countdown_s: default for ``game_start.countdown_s``: how many of the last seconds
            before the dead end are called as ``countdown`` (int 0-10; 0 = off).

    Raises:
        ValueError: ``countdown_s`` not an integer from 0 to 10.

    Observations: ``game_start``, ``board``, ``claim``, ``card_seen``, ``tick``
    (``docs/vocabulary.md``). Bad input never raises: it gives an ``invalid_observation`` call
    and leaves the state as it was.

    Example::

        ref = CarrouselReferee()
        state = ref.initial_state()
        state, calls = ref.apply(state, GameStart(t=0.0, players=("Ana", "Ben"),
                                                  spaces=Position.from_text(".gbyrk.").spaces,
                                                  seed=7))
    """

    name = "carrousel"
    #: Calls that ask the table for something (said again when a game resumes after a
    #: restart): none; the horses move on the board and the claims come from the players.
    prompts: frozenset[str] = frozenset()
    vocabulary = VOCABULARY

    def __init__(self, advanced: bool = False, dead_end_s: float = 20.0, countdown_s: int = 0):
        if isinstance(countdown_s, bool) or not isinstance(countdown_s, int) or not 0 <= countdown_s <= 10:
            raise ValueError(f"countdown_s: expected an integer from 0 to 10, got {countdown_s!r}")
        self.default_advanced = advanced
        self.default_dead_end_s = dead_end_s
        self.default_countdown_s = countdown_s

    # -- the Referee protocol ------------------------------------------------------------

    def initial_state(self) -> CarrouselState:
        """Waiting for ``game_start``."""
        return CarrouselState(
            advanced=self.default_advanced,
            dead_end_s=self.default_dead_end_s,
            countdown_s=self.default_countdown_s,
        )

    def next_deadline(self, state: CarrouselState) -> float | None:
        """The next countdown second, else when the dead end falls due (session seconds), or
        None."""
        coming = state.countdown_times()
        return coming[0][0] if coming else state.dead_end_due

    def is_over(self, state: CarrouselState) -> bool:
        """True once somebody has won."""
        return state.phase == "over"

    def summary(self, state: CarrouselState) -> dict[str, Any]:
        """Phase, scores, active cards and the position, for the console and status views."""
        return {
            "phase": state.phase,
            "scores": state.scores,
            "cards": {p.name: p.active for p in state.players},
            "position": str(state.position) if state.position else None,
            "target": state.target,
            "winner": state.winner,
        }

    def apply(
        self, state: CarrouselState, observation: Observation
    ) -> tuple[CarrouselState, list[Call]]:
        """Apply one observation at its time ``observation.t`` (seconds).

        Countdown seconds and a dead end that fell due at or before ``t`` are called first,
        each timed at its own time (seconds).
        Observations must come in time order; an earlier ``t`` than the last one is rejected.
        """
        t = observation.t
        if t < state.last_t:
            return state, [
                _invalid(
                    observation,
                    f"time went backwards: t={t} after t={state.last_t} "
                    "(observations must be in time order)",
                    at=state.last_t,
                )
            ]
        calls: list[Call] = []
        coming = [(at, left) for at, left in state.countdown_times() if at <= t]
        if coming:
            # Each counted second is called once, at its own time (the countdown option).
            calls = [Countdown(t=at, seconds_left=left) for at, left in coming]
            state = _evolve(state, counted_t=coming[-1][0])
        due = state.dead_end_due
        if due is not None and t >= due:
            state, calls = self._dead_end(state, due)
        if type(observation) is Tick:
            return (_evolve(state, last_t=t) if state.last_t != t else state), calls
        handler = self._handlers.get(type(observation))
        if handler is None:
            return state, calls + [
                _invalid(observation, f"{observation.type!r} is not a Carrousel observation")
            ]
        if state.phase == "over":
            return state, calls + [_invalid(observation, "the game is over")]
        if state.phase == "waiting" and not isinstance(observation, GameStart):
            return state, calls + [
                _invalid(observation, "no game yet: the first observation must be game_start")
            ]
        new_state, more = handler(self, state, observation)
        if more and type(more[0]) is InvalidObservation:
            return state, calls + more  # rejected: the state stays (but for a dead end above)
        if new_state.last_t != t:
            new_state = _evolve(new_state, last_t=t)
        return new_state, calls + more

    # -- handlers --------------------------------------------------------------------------

    def _game_start(
        self, state: CarrouselState, obs: GameStart
    ) -> tuple[CarrouselState, list[Call]]:
        if state.phase != "waiting":
            return state, [_invalid(obs, "the game has already started")]
        players = obs.players
        # Carrousel is for 2 to 4 players (Setup: deals for 2, 3 and 4).
        if not 2 <= len(players) <= 4:
            return state, [
                _invalid(obs, f"players: expected 2 to 4 names, got {len(players)}")
            ]
        if len(set(players)) != len(players) or not all(p.strip() for p in players):
            return state, [_invalid(obs, "players: names must be distinct and non-empty")]
        try:
            position = Position.from_spaces(obs.spaces)
        except PositionError as exc:
            return state, [_invalid(obs, f"spaces: {exc}")]
        if (obs.seed is None) == (obs.deck is None):
            return state, [_invalid(obs, "give exactly one of 'seed' and 'deck'")]
        if obs.seed is not None and obs.seed < 0:
            return state, [_invalid(obs, f"seed: expected an integer >= 0, got {obs.seed}")]
        if obs.deck is not None:
            deck = tuple(_card(c) for c in obs.deck)
            # The 60 cards are the 60 ordered triples of distinct colours (Components).
            if sorted(deck) != sorted(CARDS):
                return state, [
                    _invalid(obs, "deck: expected the 60 ordered triples of distinct colours once each")
                ]
        else:
            deck = shuffled_deck(obs.seed)  # type: ignore[arg-type]
        advanced = self.default_advanced if obs.advanced is None else obs.advanced
        dead_end_s = self.default_dead_end_s if obs.dead_end_s is None else obs.dead_end_s
        if not 0.1 <= dead_end_s <= 600:
            return state, [_invalid(obs, f"dead_end_s: expected 0.1 to 600 s, got {dead_end_s}")]
        countdown_s = self.default_countdown_s if obs.countdown_s is None else obs.countdown_s
        if not 0 <= countdown_s <= 10:
            return state, [_invalid(obs, f"countdown_s: expected 0 to 10 s, got {countdown_s}")]
        hands, pile = deal(deck, len(players))  # type: ignore[arg-type]
        new = CarrouselState(
            phase="playing",
            players=tuple(PlayerState(n, h) for n, h in zip(players, hands)),
            draw_pile=pile,
            position=position,
            target=target_points(len(players)),
            advanced=advanced,
            dead_end_s=dead_end_s,
            countdown_s=countdown_s,
            unseen_order=bool(obs.unseen_order),
            # The dead-end clock starts with the game (ruling; docs/vocabulary.md).
            clock_start=obs.t,
            last_t=obs.t,
        )
        calls: list[Call] = [
            GameStarted(
                t=obs.t,
                players=players,
                cards={p.name: p.active for p in new.players},  # type: ignore[misc]
                target=new.target,
                spaces=position.spaces,
                advanced=advanced,
                dead_end_s=dead_end_s,
            )
        ]
        # Lucky bird at the start of the game (Special Cases).
        new, more = self._lucky_bird(new, obs.t, "start")
        return new, calls + more

    def _board(self, state: CarrouselState, obs: Board) -> tuple[CarrouselState, list[Call]]:
        spaces = obs.spaces
        if UNKNOWN in spaces:
            # A hidden space (a hand, glare): nothing to judge until a full reading arrives.
            problem = _partial_problem(spaces)
            return (state, [_invalid(obs, f"spaces: {problem}")]) if problem else (state, [])
        problem = _partial_problem(spaces)
        if problem is None and sum(s in _COLOUR_SET for s in spaces) < len(COLOURS):
            # Fewer than five horses: one or two are in a player's hand (Course of the Game:
            # a move takes one or two horses in hand). Unknown until they are put down.
            return state, []
        try:
            # A gap between horses is a board too: what an illegal move left on the table
            # (ruling; docs/vocabulary.md).
            after = Position.from_reading(spaces)
        except PositionError as exc:
            return state, [_invalid(obs, f"spaces: {exc}")]
        before = state.position
        assert before is not None
        if after == before:
            return state, []
        t = obs.t
        calls: list[Call] = []
        expected = state.expected
        if expected is None:
            new = _evolve(state, position=after, last_scored=None, last_t=t)
        else:
            new = _evolve(state, position=after, last_scored=None, last_t=t, expected=None, clock_start=t)
            if after == expected:
                # The dead-end move was made: the clock restarts, a lucky bird may follow.
                calls.append(DeadEndCorrected(t=t, spaces=after.spaces))
                new, more = self._lucky_bird(new, t, "dead_end")
                return new, calls + more
            calls.append(DeadEndNotCorrected(t=t, expected=expected.spaces, seen=after.spaces))
        if after.has_gap:
            # As a result of every move the 5 horses stand one after another (Moving the
            # Horses): a gap is an illegal move, judged like any other (ruling; docs/vocabulary.md).
            # The board the camera sees is the position now; it has no first three, so no
            # lucky bird until the gap is closed.
            calls.append(IllegalMove(t=t, before=before.spaces, after=after.spaces, reason=GAP_REASON))
            return new, calls
        if before.has_gap:
            # The gap closed: the mistake is put right. No move of the rulebook starts from a
            # gap, so the change is not judged as a move; the first three may now match a card
            # because of the mistake (Special Cases: lucky bird).
            new, more = self._lucky_bird(new, t, "mistake")
            new = _evolve(new, counted_t=max(new.counted_t, t))  # no countdown second in the past
            if not more and new.dead_end_due is not None and t >= new.dead_end_due:
                # The dead end fell due while the board had a gap (no last horse to move):
                # it is called now that there is one.
                new, more = self._dead_end(new, t)
            return new, calls + more
        move = classify(before, after)
        if move is None:
            # Anything that is not one move of the rulebook is illegal (ruling; docs/vocabulary.md).
            calls.append(
                IllegalMove(t=t, before=before.spaces, after=after.spaces, reason=_why_illegal(before, after))
            )
            new, more = self._lucky_bird(new, t, "mistake")
            return new, calls + more
        calls.append(
            MoveMade(
                t=t, kind=move.kind, horses=move.horses, spaces=after.spaces, first_three=after.first_three
            )
        )
        return new, calls

    def _claim(self, state: CarrouselState, obs: Claim) -> tuple[CarrouselState, list[Call]]:
        claimer = state.player(obs.player)
        if claimer is None:
            return state, [
                _invalid(
                    obs,
                    f"player: unknown player {obs.player!r} "
                    f"(players: {', '.join(p.name for p in state.players)})",
                )
            ]
        assert state.position is not None
        if state.position.has_gap:
            # The horses are not one after another, so no first three can match a card
            # (Course of the Game; ruling: a claim on a board with a gap is a penalty).
            return self._penalise(state, claimer, ("", "", ""), obs.t)
        seen = state.position.first_three
        # Judged on the last stable reading at the press (ruling; docs/vocabulary.md).
        owner, index = self._matching_card(state, claimer.name, seen)
        if owner is not None:
            new, call = self._score(state, claimer.name, owner, index, obs.t)
            return self._after_point(new, obs.t, [call])
        late = state.last_scored
        if late is not None and late[2] == seen and (state.advanced or late[1] == claimer.name):
            # The earliest press wins (ruling; docs/vocabulary.md); a later press for the same, already scored
            # order is too late, not wrong.
            return state, [
                ClaimTooLate(t=obs.t, player=claimer.name, card=seen, scored_by=late[0])
            ]
        return self._penalise(state, claimer, seen, obs.t)

    def _penalise(
        self, state: CarrouselState, claimer: PlayerState, seen: Card, t: float
    ) -> tuple[CarrouselState, list[Call]]:
        """A claim that does not match ``seen`` (``("", "", "")``: a board with a gap)."""
        # No match: the claimer puts one won card on the bottom of the draw pile
        # (Course of the Game); with no won card nothing is lost (ruling; docs/vocabulary.md).
        lost = claimer.won[-1] if claimer.won else None
        players = state.players
        pile = state.draw_pile
        if lost is not None:
            players = _replace_player(
                players, claimer._replace(won=claimer.won[:-1])
            )
            pile = pile + (lost,)
        new = _evolve(state, players=players, draw_pile=pile, last_t=t)
        calls: list[Call] = [
            Penalty(
                t=t,
                player=claimer.name,
                card=claimer.active or ("", "", ""),
                first_three=seen,
                lost_card=lost,
                score=claimer.score - (1 if lost else 0),
            )
        ]
        # An opponent's mistake may leave a lucky bird for someone else (Special Cases).
        new, more = self._lucky_bird(new, t, "mistake")
        return new, calls + more

    def _card_seen(self, state: CarrouselState, obs: CardSeen) -> tuple[CarrouselState, list[Call]]:
        player = state.player(obs.player)
        if player is None:
            return state, [_invalid(obs, f"player: unknown player {obs.player!r}")]
        card = _card(obs.card)
        if card not in CARDS:
            return state, [_invalid(obs, f"card: expected three distinct horse colours, got {list(card)}")]
        if player.active == card:
            return state, []
        holder = None
        for p in state.players:
            if card in p.won:
                return state, [_invalid(obs, f"card: {'-'.join(card)} is already in {p.name}'s won pile")]
            if p.name != player.name and card in p.face_up:
                # Another player's card in play is seen by the camera too: a real conflict.
                if p.active == card:
                    return state, [_invalid(obs, f"card: {'-'.join(card)} is {p.name}'s card in play")]
                holder = p  # tracked, unseen, further down another row: that was a guess
        # Keep the 60 cards: the seen card leaves wherever it was tracked, the tracked one
        # takes its place there.
        was = player.active
        face_up = list(player.face_up)
        pile = list(state.draw_pile)
        players = state.players
        if holder is not None:
            row = list(holder.face_up)
            if was is not None:
                row[row.index(card)] = was
                face_up = face_up[1:]
            else:
                row.remove(card)
            players = _replace_player(players, holder._replace(face_up=tuple(row)))
        elif card in face_up:
            face_up.remove(card)
        elif card in pile:
            pile[pile.index(card)] = was  # type: ignore[call-overload]
            face_up = face_up[1:] if was is not None else face_up
        face_up.insert(0, card)
        new = _evolve(
            state,
            players=_replace_player(players, player._replace(face_up=tuple(face_up))),
            draw_pile=tuple(p for p in pile if p is not None),
        )
        return new, [CardCorrected(t=obs.t, player=player.name, was=was or ("", "", ""), now=card)]

    _handlers: dict[type, Any] = {
        GameStart: _game_start,
        Board: _board,
        Claim: _claim,
        CardSeen: _card_seen,
    }

    # -- rules shared by several handlers ----------------------------------------------

    def _matching_card(
        self, state: CarrouselState, claimer: str, seen: Card
    ) -> tuple[str | None, int]:
        """Whose face-up card (and which) a claim by ``claimer`` scores with, or (None, -1).

        Basic rules: only the claimer's active card. Advanced rules: every face-up card on
        the table, the claimer's own first (ruling; docs/vocabulary.md).
        """
        me = state.player(claimer)
        assert me is not None
        if me.active == seen:
            return claimer, 0
        if state.advanced:
            ordered = [me] + [p for p in state.players if p.name != claimer]
            for p in ordered:
                if seen in p.face_up:
                    return p.name, p.face_up.index(seen)
        return None, -1

    def _score(
        self, state: CarrouselState, scorer: str, owner: str, index: int, t: float
    ) -> tuple[CarrouselState, Point]:
        """Turn the card over onto the scorer's won pile; its owner draws a new card
        (Correct Order)."""
        owner_state = state.player(owner)
        assert owner_state is not None
        card = owner_state.face_up[index]
        face_up = list(owner_state.face_up)
        pile = state.draw_pile
        if pile:
            face_up[index] = pile[0]  # the new card takes the scored one's place
            pile = pile[1:]
        else:
            del face_up[index]
        players = []
        for p in state.players:
            if p.name == owner:
                p = PlayerState(p.name, tuple(face_up), p.won)
            if p.name == scorer:
                p = scorer_state = PlayerState(p.name, p.face_up, p.won + (card,))
            players.append(p)
        new = _evolve(
            state,
            players=tuple(players),
            draw_pile=pile,
            # A point restarts the dead-end clock (ruling; docs/vocabulary.md).
            clock_start=t,
            expected=None,
            last_scored=(scorer, owner, card),
            last_t=t,
        )
        return new, Point(
            t=t,
            player=scorer,
            card=card,
            score=scorer_state.score,
            next_card=None if state.unseen_order else scorer_state.active,
            owner=owner,
            next_unseen=state.unseen_order and scorer_state.active is not None,
        )

    def _after_point(
        self, state: CarrouselState, t: float, calls: list[Call]
    ) -> tuple[CarrouselState, list[Call]]:
        """Victory: the first to the target wins (Victory). Only the scorer of the point just
        made can have reached it."""
        scorer = calls[-1].player  # type: ignore[attr-defined]
        p = state.player(scorer)
        if p is not None and len(p.won) >= state.target:
            return (
                _evolve(state, phase="over", winner=p.name, expected=None),
                calls + [Winner(t=t, player=p.name, scores=state.scores)],
            )
        return state, calls

    def _lucky_bird(
        self, state: CarrouselState, t: float, reason: str
    ) -> tuple[CarrouselState, list[Call]]:
        """Score at once a card that already matches the first three, for the player whose
        card it is (Special Cases: lucky bird)."""
        assert state.position is not None
        if state.position.has_gap:
            return state, []  # no first three on a board with a gap: checked once it closes
        seen = state.position.first_three
        for p in state.players:
            if p.active == seen or (state.advanced and seen in p.face_up):
                new, point = self._score(state, p.name, p.name, p.face_up.index(seen), t)
                bird = LuckyBird(
                    t=t,
                    player=p.name,
                    card=point.card,
                    score=point.score,
                    next_card=point.next_card,
                    reason=reason,
                    next_unseen=point.next_unseen,
                )
                return self._after_point(new, t, [bird])
        return state, []

    def _dead_end(self, state: CarrouselState, due: float) -> tuple[CarrouselState, list[Call]]:
        """Dead end (Special Cases): called once; the last horse must go to the front."""
        assert state.position is not None
        pos = state.position
        expected = pos.apply(Move("last_to_front", (pos.line[-1],)))
        return (
            _evolve(state, expected=expected),
            [DeadEnd(t=due, horse=pos.line[-1], expected=expected.spaces)],
        )


def _replace_player(players: tuple[PlayerState, ...], new: PlayerState) -> tuple[PlayerState, ...]:
    return tuple(new if p.name == new.name else p for p in players)


_invalid = InvalidObservation.rejecting

#: ``illegal_move.reason`` for a board with a gap between horses.
GAP_REASON = "a gap: the five horses must stand one after another"


def _partial_problem(spaces: Sequence[str]) -> str | None:
    """What is impossible in a reading with hidden spaces, or None when it may be fine."""
    if len(spaces) != NUM_SPACES:
        return f"expected {NUM_SPACES} spaces, got {len(spaces)}"
    for i, s in enumerate(spaces):
        if s not in _COLOUR_SET and s not in (EMPTY, UNKNOWN):
            return f"space {i}: unknown colour {s!r}"
    for c in COLOURS:
        if list(spaces).count(c) > 1:
            return f"the {c} horse stands on {list(spaces).count(c)} spaces"
    return None


def _why_illegal(before: Position, after: Position) -> str:
    moved = [c for c in COLOURS if before.space_of(c) != after.space_of(c)]
    if len(moved) > 2:
        return f"{len(moved)} horses moved ({', '.join(moved)}); a move involves 1 or 2 horses"
    return "no move of the rulebook turns the one position into the other"
