"""Carnival (Dice Hate Me Games 2011): the rules engine.

Rulebook: ``shared/rules/carnival.pt.txt`` (Portuguese; where other sources differ it stands).
Its sections, named in the comments below: Objetivo do Jogo (object), Preparação (setup),
Fluxo do Jogo (the turn, steps 1-5), Ações e Como Jogar (playing actions), Ações de Rolagem de
Dados (the six dice actions), Cartas Wild, Tickets, Construção de Atrações (building), Fim de
Jogo (end). Rulings where the rulebook leaves room, and the observation/call vocabulary:
``docs/carnival.md``.

The table, as the referee tracks it:

* a card is named by its text: ``"carousel:banners"`` (ride ``:`` part) or ``"wild"``;
* each player's Midway has the five rides of :data:`RIDES`; a ride holds distinct parts of that
  ride plus wilds, four cards at most; a *natural set* (the four parts, no wild) is flipped and
  locked for the rest of the game;
* hands are hidden: the referee tracks how many cards each hand holds and which of them the
  table has seen go in (the starting wild, a card taken from the discard pile); a card named
  when it leaves a hand must be a card that may still be there;
* the draw deck is a count; the discard pile is a face-up stack whose every card the table saw
  land on it.

Three layers, as in python-chess:

* small immutable values: :class:`Ride`, :class:`PlayerState`, :class:`CarnivalState`, and the
  predicates :func:`can_start_ride`, :func:`midway_accepts`, :func:`dice_actions`;
* the turn machine inside :class:`CarnivalReferee` (``apply(state, observation) -> (state,
  calls)``); bad input gives an ``invalid_observation`` call naming what was wrong, never an
  exception, and leaves the state as it was;
* :meth:`CarnivalReferee.expected` lists which observation types may come next, for the
  simulated table and the console.

Time arrives with each observation (``t``, seconds); the engine never reads a clock.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from companion.events import Call, InvalidObservation, Observation, Tick, Vocabulary, event_type

__all__ = [
    "RIDES",
    "PARTS",
    "WILD",
    "ACTIONS",
    "TARGETED_ACTIONS",
    "HAND_LIMIT",
    "HAND_REFILL",
    "MAX_TICKETS",
    "RIDES_TO_WIN",
    "DeckSpec",
    "Ride",
    "PlayerState",
    "CarnivalState",
    "CarnivalReferee",
    "card_text",
    "parse_card",
    "can_start_ride",
    "midway_accepts",
    "dice_actions",
    "roll_outcomes",
    "takeable",
    "with_card",
    "without_card",
    "VOCABULARY",
]

#: The five rides (attractions) of every Midway (Preparação 3; English edition names).
RIDES: tuple[str, ...] = ("bumper_cars", "carousel", "ferris_wheel", "rollercoaster", "swings")
#: The four parts of every ride (Objetivo do Jogo: banners, lights, materials, seats).
PARTS: tuple[str, ...] = ("banners", "lights", "materials", "seats")
WILD = "wild"
#: Die face -> dice roll action (Ações de Rolagem de Dados; the tableau).
ACTIONS: dict[int, str] = {
    1: "deck_draw",
    2: "discard_draw",
    3: "hand_draw",
    4: "hand_trade",
    5: "midway_trade",
    6: "midway_steal",
}
#: Actions aimed at another player (Ações e Como Jogar: the target is declared first).
TARGETED_ACTIONS = frozenset({3, 4, 5, 6})
#: At the start of a turn a hand is discarded down to this many cards (Fluxo do Jogo 2).
HAND_LIMIT = 6
#: At the end of a turn a hand is filled up to this many cards (Fluxo do Jogo 5).
HAND_REFILL = 3
#: Nobody ever holds more Tickets than this (Tickets).
MAX_TICKETS = 3
#: Complete rides needed to win (Objetivo do Jogo; Fim de Jogo).
RIDES_TO_WIN = 4
_STARTING_HAND = 5  # cards dealt besides the wild (Preparação 2)


def card_text(ride: str, part: str) -> str:
    """The text of a parts card: ``"ride:part"``, e.g. ``card_text("carousel", "seats")``."""
    return f"{ride}:{part}"


def parse_card(text: str) -> tuple[str, str] | None:
    """``"ride:part"`` -> ``(ride, part)``; ``"wild"`` -> None.

    Raises:
        ValueError: not a card of the game, naming the text and what was expected.
    """
    if text == WILD:
        return None
    ride, sep, part = text.partition(":")
    if not sep or ride not in RIDES or part not in PARTS:
        raise ValueError(
            f"{text!r} is not a card (expected 'wild' or 'ride:part', ride one of "
            f"{', '.join(RIDES)}, part one of {', '.join(PARTS)})"
        )
    return ride, part


#: Every card text of the game, parts first.
ALL_CARDS: tuple[str, ...] = tuple(card_text(r, p) for r in RIDES for p in PARTS) + (WILD,)


@dataclasses.dataclass(frozen=True, slots=True)
class DeckSpec:
    """The cards in the box (Preparação 1; docs/carnival.md, rulings "the deck").

    Attributes:
        copies_per_part: copies of each of the 20 parts cards (English edition: 80 parts
            cards, 20 of each part across 5 rides, so 4).
        white_tip_copies: copies of each parts card marked with a white-tip ribbon, removed for
            2 and 3 players (ruling: 1, the fourth copy).
        wilds: wild cards in the box (English edition: 6).
        white_tip_wilds: wilds marked with a white-tip ribbon (ruling: none).
    """

    copies_per_part: int = 4
    white_tip_copies: int = 1
    wilds: int = 6
    white_tip_wilds: int = 0

    def totals(self, n_players: int) -> dict[str, int]:
        """Card text -> copies in play for ``n_players`` (white tips removed for 2 and 3)."""
        short = n_players <= 3
        parts = self.copies_per_part - (self.white_tip_copies if short else 0)
        wilds = self.wilds - (self.white_tip_wilds if short else 0)
        out = {c: parts for c in ALL_CARDS if c != WILD}
        out[WILD] = wilds
        return out


# --------------------------------------------------------------------------- values


@dataclasses.dataclass(frozen=True, slots=True)
class Ride:
    """One ride of a Midway.

    Attributes:
        parts: the parts cards on it (part names, sorted), at most one of each (Ações de
            Rolagem de Dados: never a duplicate in a Midway).
        wilds: wild cards on it.
        natural: a natural set, flipped to its Ticket side and locked (Construção de Atrações).
    """

    parts: tuple[str, ...] = ()
    wilds: int = 0
    natural: bool = False

    @property
    def size(self) -> int:
        """Cards on the ride."""
        return len(self.parts) + self.wilds

    @property
    def is_established(self) -> bool:
        """At least one parts card on it: wilds may go there (Cartas Wild)."""
        return bool(self.parts)

    @property
    def is_complete(self) -> bool:
        """Four cards, each part once, wilds standing in (Construção de Atrações)."""
        return self.size == len(PARTS)

    def __str__(self) -> str:
        text = "+".join(self.parts) + ("+" if self.parts and self.wilds else "")
        text += "+".join([WILD] * self.wilds)
        return (text or "-") + (" (natural)" if self.natural else "")


@dataclasses.dataclass(frozen=True, slots=True)
class PlayerState:
    """One player as the table sees them.

    Attributes:
        name: as in ``game_start``.
        hand_count: cards in hand.
        hand_known: the cards in hand the table has seen go in (sorted texts); the others are
            hidden.
        midway: the five rides, in :data:`RIDES` order.
        tickets: Tickets held (0-3).
        loose_wilds: wilds that arrived in the Midway with no ride yet; they must be placed or
            discarded before play goes on (Cartas Wild).
    """

    name: str
    hand_count: int
    hand_known: tuple[str, ...]
    midway: tuple[Ride, ...]
    tickets: int = MAX_TICKETS
    loose_wilds: int = 0

    def ride(self, ride: str) -> Ride:
        """The ride of that name (one of :data:`RIDES`)."""
        return self.midway[RIDES.index(ride)]

    @property
    def complete_rides(self) -> int:
        """Rides with four cards, natural or not (Fim de Jogo)."""
        return sum(1 for r in self.midway if r.is_complete)

    @property
    def hidden_count(self) -> int:
        """Cards in hand the table has not seen."""
        return self.hand_count - len(self.hand_known)


Step = Literal["refill_discard", "discard_down", "choose", "assign", "actions", "build"]


@dataclasses.dataclass(frozen=True, slots=True)
class CarnivalState:
    """The whole game, an immutable value.

    Attributes:
        phase: ``"waiting"`` for ``game_start``, ``"playing"`` or ``"over"``.
        players: in seat order (turn order).
        active: index of the player whose turn it is.
        turn: turn number, 1 for the first turn.
        step: where the active player is in the turn (Fluxo do Jogo): ``refill_discard``
            (step 1), ``discard_down`` (step 2), ``choose`` (step 3: exchange or roll),
            ``assign`` (dice rolled, two to choose), ``actions`` (assigned dice to carry out),
            ``build`` (step 4, then ``end_turn`` for step 5).
        totals: card text -> copies in play.
        deck: cards in the draw deck.
        discard: the discard pile, bottom first (the last is the top card).
        roll: the three dice of this turn's roll, or ().
        dice: assigned dice whose actions are still to be carried out.
        declared: ``(die, target)`` of the action declared and not yet carried out or blocked.
        ticket_users: players who have used their Ticket this turn.
        ticket_discards: Tickets in the Ticket discards (where a natural set's Ticket comes
            from).
        winner: the winner's name once over.
        last_t: time (s) of the last accepted observation.
    """

    phase: Literal["waiting", "playing", "over"] = "waiting"
    players: tuple[PlayerState, ...] = ()
    active: int = 0
    turn: int = 0
    step: Step = "choose"
    totals: tuple[tuple[str, int], ...] = ()
    deck: int = 0
    discard: tuple[str, ...] = ()
    roll: tuple[int, ...] = ()
    dice: tuple[int, ...] = ()
    declared: tuple[int, str | None] | None = None
    ticket_users: tuple[str, ...] = ()
    ticket_discards: int = 0
    winner: str | None = None
    last_t: float = 0.0

    def player(self, name: str) -> PlayerState | None:
        """The player of that name, or None."""
        for p in self.players:
            if p.name == name:
                return p
        return None

    @property
    def active_player(self) -> PlayerState:
        """The player whose turn it is."""
        return self.players[self.active]

    def unaccounted(self, card: str) -> int:
        """Copies of ``card`` (a card code, rulebook's deck list) the table has not seen anywhere:
        in the deck or hidden in hands; an int from 0 to the deck's count of that card."""
        seen = self.discard.count(card)
        ride = parse_card(card)
        for p in self.players:
            seen += p.hand_known.count(card)
            if ride is None:
                seen += sum(r.wilds for r in p.midway) + p.loose_wilds
            elif ride[1] in p.ride(ride[0]).parts:
                seen += 1
        return dict(self.totals)[card] - seen


# ------------------------------------------------------------------------ predicates


def can_start_ride(ride: str, cards: Sequence[str]) -> str | None:
    """Why ``cards`` from a hand cannot start ``ride`` in an empty slot, or None when they can.

    Construção de Atrações: a new ride needs at least two different parts of that ride from the
    hand, one of which may be a wild (ruling: further wilds may join them).
    """
    parts = [parse_card(c) for c in cards]
    real = [p[1] for p in parts if p is not None]
    wilds = len(parts) - len(real)
    if any(p is not None and p[0] != ride for p in parts):
        return f"every part must be of the {ride}"
    if len(set(real)) != len(real):
        return "a part twice on one ride (no duplicate in a Midway)"
    if not real:
        return "a ride cannot be started with wilds alone (a wild never stands alone)"
    if len(real) + min(wilds, 1) < 2:
        return "a new ride needs two different parts from the hand (one may be a wild)"
    if len(real) + wilds > len(PARTS):
        return f"a ride holds {len(PARTS)} cards"
    return None


def midway_accepts(player: PlayerState, card: str, ride: str | None = None) -> str | None:
    """Why ``card`` may not be put into ``player``'s Midway, or None when it may.

    A parts card goes on its own ride; it may not duplicate a part already there (Ações de
    Rolagem de Dados: Midway Trade/Steal) nor join a locked natural set. A wild goes on
    ``ride``, an established, incomplete ride (Cartas Wild); with ``ride`` None a wild is
    accepted as a loose wild to be placed next.
    """
    parsed = parse_card(card)
    if parsed is None:
        if ride is None:
            return None
        target = player.ride(ride)
        if not target.is_established:
            return f"the {ride} is not started: a wild never stands alone"
        if target.is_complete:
            return f"the {ride} is complete"
        return None
    r, part = parsed
    target = player.ride(r)
    if target.natural:
        return f"{player.name}'s {r} is a natural set, locked"
    if part in target.parts:
        return f"{player.name}'s Midway already has {card} (no duplicate in a Midway)"
    return None


def dice_actions(dice: Iterable[int]) -> list[str]:
    """Die faces -> action names (the tableau)."""
    return [ACTIONS[d] for d in dice]


def roll_outcomes() -> dict[tuple[int, int, int], float]:
    """The roll of three fair dice as a chance event (OpenSpiel style): each outcome, as the
    sorted faces, with its probability; the 56 outcomes sum to 1 (a given triple: 1/216)."""
    counts: collections.Counter[tuple[int, int, int]] = collections.Counter(
        tuple(sorted((a, b, c))) for a in range(1, 7) for b in range(1, 7) for c in range(1, 7)  # type: ignore[misc]
    )
    return {k: v / 216 for k, v in sorted(counts.items())}


# ------------------------------------------------------------------------ observations


@event_type("game_start")
@dataclasses.dataclass(frozen=True, slots=True)
class GameStart(Observation):
    """The deal is done (Preparação): players in turn order (the first plays first) and the
    face-up cards that start the discard pile, bottom first (one per player)."""

    players: tuple[str, ...] = ()
    discard: tuple[str, ...] = ()


@event_type("refill_discard")
@dataclasses.dataclass(frozen=True, slots=True)
class RefillDiscard(Observation):
    """Step 1: the discard pile was empty; the top deck card was turned face up on it."""

    card: str = ""


@event_type("discard")
@dataclasses.dataclass(frozen=True, slots=True)
class Discard(Observation):
    """Step 2: the active player discarded these cards (in order) down to six in hand."""

    player: str = ""
    cards: tuple[str, ...] = ()


@event_type("wild_exchange")
@dataclasses.dataclass(frozen=True, slots=True)
class WildExchange(Observation):
    """Step 3, option 1: a wild discarded from the hand (``wild_from`` = ``"hand"``) or from a
    ride of the Midway (its name), with ``cards`` from the hand; as many cards drawn."""

    player: str = ""
    wild_from: str = "hand"
    cards: tuple[str, ...] = ()


@event_type("roll")
@dataclasses.dataclass(frozen=True, slots=True)
class Roll(Observation):
    """Step 3, option 2: the three dice as read, each 1-6 or ``"unknown"``."""

    player: str = ""
    dice: tuple[int | str, ...] = ()


@event_type("assign")
@dataclasses.dataclass(frozen=True, slots=True)
class Assign(Observation):
    """The two dice of the roll placed on the tableau (not needed after a triple)."""

    player: str = ""
    dice: tuple[int, ...] = ()


@event_type("declare")
@dataclasses.dataclass(frozen=True, slots=True)
class Declare(Observation):
    """The active player announces the next action: its die and target (a player, or None for
    deck and discard draws)."""

    player: str = ""
    die: int = 0
    target: str | None = None


@event_type("ticket")
@dataclasses.dataclass(frozen=True, slots=True)
class Ticket(Observation):
    """A player discarded a Ticket to block the declared action."""

    player: str = ""


@event_type("action")
@dataclasses.dataclass(frozen=True, slots=True)
class Action(Observation):
    """The declared action was carried out.

    Attributes:
        take: the Midway card taken (Midway Trade, Midway Steal).
        take_ride: for a wild taken, the ride it stood on.
        give: the own Midway card given (Midway Trade).
        give_ride: for a wild given, the ride it stood on.
        discard: the hand card put on the discard pile (Midway Steal), None with an empty hand.
    """

    player: str = ""
    take: str | None = None
    take_ride: str | None = None
    give: str | None = None
    give_ride: str | None = None
    discard: str | None = None


@event_type("move_wild")
@dataclasses.dataclass(frozen=True, slots=True)
class MoveWild(Observation):
    """A wild moved in its owner's Midway: from a ride (or a loose wild, ``from_ride`` None) to
    an established, incomplete ride (or discarded, ``to_ride`` None)."""

    player: str = ""
    from_ride: str | None = None
    to_ride: str | None = None


@event_type("build")
@dataclasses.dataclass(frozen=True, slots=True)
class Build(Observation):
    """Step 4: cards from the hand played onto one ride of the player's Midway."""

    player: str = ""
    ride: str = ""
    cards: tuple[str, ...] = ()


@event_type("end_turn")
@dataclasses.dataclass(frozen=True, slots=True)
class EndTurn(Observation):
    """Step 5: the active player is done; the hand is filled up to three from the deck."""

    player: str = ""


# ------------------------------------------------------------------------------ calls


@event_type("game_started")
@dataclasses.dataclass(frozen=True, slots=True)
class GameStarted(Call):
    """The game is set up: turn order, the discard pile's top card, the deck's size."""

    players: tuple[str, ...] = ()
    first: str = ""
    discard_top: str = ""
    deck: int = 0


@event_type("turn")
@dataclasses.dataclass(frozen=True, slots=True)
class TurnStarted(Call):
    """A player's turn begins; ``step`` says what is expected first."""

    player: str = ""
    turn: int = 0
    step: str = ""
    hand: int = 0


@event_type("discard_refilled")
@dataclasses.dataclass(frozen=True, slots=True)
class DiscardRefilled(Call):
    """Step 1 done: a card from the deck starts the discard pile."""

    card: str = ""
    deck: int = 0


@event_type("discarded")
@dataclasses.dataclass(frozen=True, slots=True)
class Discarded(Call):
    """Step 2 done: the hand is down to six."""

    player: str = ""
    cards: tuple[str, ...] = ()
    hand: int = 0


@event_type("wild_exchanged")
@dataclasses.dataclass(frozen=True, slots=True)
class WildExchanged(Call):
    """Step 3, option 1 done: ``cards`` discarded (the wild first), ``drew`` cards drawn."""

    player: str = ""
    cards: tuple[str, ...] = ()
    drew: int = 0


@event_type("rolled")
@dataclasses.dataclass(frozen=True, slots=True)
class Rolled(Call):
    """The dice were read; on a triple all three actions are assigned at once."""

    player: str = ""
    dice: tuple[int, ...] = ()
    actions: tuple[str, ...] = ()
    triple: bool = False


@event_type("dice_unreadable")
@dataclasses.dataclass(frozen=True, slots=True)
class DiceUnreadable(Call):
    """A die could not be read: show the dice to the camera again. Nothing changed."""

    player: str = ""
    dice: tuple[int | str, ...] = ()


@event_type("dice_assigned")
@dataclasses.dataclass(frozen=True, slots=True)
class DiceAssigned(Call):
    """Every die is on the tableau; the actions may be carried out in any order."""

    player: str = ""
    dice: tuple[int, ...] = ()
    actions: tuple[str, ...] = ()
    bullseye: int | None = None


@event_type("action_declared")
@dataclasses.dataclass(frozen=True, slots=True)
class ActionDeclared(Call):
    """The next action and its target: the other players may block it with a Ticket."""

    player: str = ""
    action: str = ""
    die: int = 0
    target: str | None = None


@event_type("action_blocked")
@dataclasses.dataclass(frozen=True, slots=True)
class ActionBlocked(Call):
    """A Ticket blocked the declared action; its die is spent."""

    player: str = ""
    action: str = ""
    blocker: str = ""
    tickets: int = 0


@event_type("action_done")
@dataclasses.dataclass(frozen=True, slots=True)
class ActionDone(Call):
    """An action was carried out; ``hands`` gives every hand's size after it."""

    player: str = ""
    action: str = ""
    target: str | None = None
    took: str | None = None
    gave: str | None = None
    discarded: str | None = None
    hands: dict[str, int] = dataclasses.field(default_factory=dict)


@event_type("action_impossible")
@dataclasses.dataclass(frozen=True, slots=True)
class ActionImpossible(Call):
    """An assigned action that nobody could carry out was dropped at the end of the turn."""

    player: str = ""
    action: str = ""
    reason: str = ""


@event_type("wild_loose")
@dataclasses.dataclass(frozen=True, slots=True)
class WildLoose(Call):
    """A wild stands alone in a Midway: its owner must move it to a ride or discard it now."""

    player: str = ""
    count: int = 0
    rides: tuple[str, ...] = ()


@event_type("wild_moved")
@dataclasses.dataclass(frozen=True, slots=True)
class WildMoved(Call):
    """A wild moved to another ride (or was discarded: ``to_ride`` None)."""

    player: str = ""
    from_ride: str | None = None
    to_ride: str | None = None


@event_type("built")
@dataclasses.dataclass(frozen=True, slots=True)
class Built(Call):
    """Cards went onto a ride; ``complete`` once it holds its four cards."""

    player: str = ""
    ride: str = ""
    cards: tuple[str, ...] = ()
    complete: bool = False
    complete_rides: int = 0


@event_type("natural_set")
@dataclasses.dataclass(frozen=True, slots=True)
class NaturalSet(Call):
    """A ride of the four parts without a wild: flipped and locked; maybe a Ticket back."""

    player: str = ""
    ride: str = ""
    ticket_gained: bool = False
    tickets: int = 0


@event_type("deck_reshuffled")
@dataclasses.dataclass(frozen=True, slots=True)
class DeckReshuffled(Call):
    """The deck ran out: the discard pile but its top card became the new deck."""

    deck: int = 0


@event_type("turn_ended")
@dataclasses.dataclass(frozen=True, slots=True)
class TurnEnded(Call):
    """Step 5 done: ``drew`` cards filled the hand up to three."""

    player: str = ""
    drew: int = 0
    hand: int = 0


@event_type("winner")
@dataclasses.dataclass(frozen=True, slots=True)
class Winner(Call):
    """A player has four complete rides: the game ends at once (Fim de Jogo)."""

    player: str = ""
    complete_rides: dict[str, int] = dataclasses.field(default_factory=dict)


VOCABULARY = Vocabulary(
    "carnival",
    observations=(
        GameStart,
        RefillDiscard,
        Discard,
        WildExchange,
        Roll,
        Assign,
        Declare,
        Ticket,
        Action,
        MoveWild,
        Build,
        EndTurn,
    ),
    calls=(
        GameStarted,
        TurnStarted,
        DiscardRefilled,
        Discarded,
        WildExchanged,
        Rolled,
        DiceUnreadable,
        DiceAssigned,
        ActionDeclared,
        ActionBlocked,
        ActionDone,
        ActionImpossible,
        WildLoose,
        WildMoved,
        Built,
        NaturalSet,
        DeckReshuffled,
        TurnEnded,
        Winner,
    ),
)


# ------------------------------------------------------------------- the working table


class _Rejected(Exception):
    """Inside a handler: the observation is refused (the message says why)."""


@dataclasses.dataclass
class _Player:
    name: str
    hand_count: int
    hand_known: list[str]
    midway: dict[str, dict[str, Any]]  # ride -> {"parts": set, "wilds": int, "natural": bool}
    tickets: int
    loose_wilds: int


class _Table:
    """A mutable working copy of a :class:`CarnivalState` for one ``apply``; never shared."""

    def __init__(self, s: CarnivalState):
        self.s = s
        self.players = [
            _Player(
                p.name,
                p.hand_count,
                list(p.hand_known),
                {
                    name: {"parts": set(r.parts), "wilds": r.wilds, "natural": r.natural}
                    for name, r in zip(RIDES, p.midway)
                },
                p.tickets,
                p.loose_wilds,
            )
            for p in s.players
        ]
        self.deck = s.deck
        self.discard = list(s.discard)
        self.ticket_discards = s.ticket_discards
        self.calls: list[Call] = []
        self.t = 0.0  # time (s) of the observation being applied
        self.winner: str | None = None

    def freeze(self, **changes: Any) -> CarnivalState:
        """The immutable :class:`CarnivalState` of this working copy, with ``changes`` applied."""
        players = tuple(
            PlayerState(
                p.name,
                p.hand_count,
                tuple(sorted(p.hand_known)),
                tuple(
                    Ride(tuple(sorted(p.midway[r]["parts"])), p.midway[r]["wilds"], p.midway[r]["natural"])
                    for r in RIDES
                ),
                p.tickets,
                p.loose_wilds,
            )
            for p in self.players
        )
        return dataclasses.replace(
            self.s,
            players=players,
            deck=self.deck,
            discard=tuple(self.discard),
            ticket_discards=self.ticket_discards,
            **changes,
        )

    def player(self, name: str | None) -> _Player:
        """The working copy of the player ``name``; an unknown name rejects the observation."""
        for p in self.players:
            if p.name == name:
                return p
        raise _Rejected(
            f"unknown player {name!r} (players: {', '.join(p.name for p in self.players)})"
        )

    def unaccounted(self, card: str) -> int:
        """:meth:`CarnivalState.unaccounted` of the state as it stands now (frozen first)."""
        return self.freeze().unaccounted(card)

    # -- hands ---------------------------------------------------------------------------

    def take_from_hand(self, p: _Player, card: str) -> None:
        """The player names a card leaving the hand: it must be one they may hold."""
        try:
            parse_card(card)
        except ValueError as exc:
            raise _Rejected(str(exc)) from None
        if p.hand_count < 1:
            # An action against an empty hand is refused (issue: bad input).
            raise _Rejected(f"{p.name} has no card in hand")
        if card in p.hand_known:
            p.hand_known.remove(card)
        else:
            if p.hand_count - len(p.hand_known) < 1:
                raise _Rejected(
                    f"{card} is not in {p.name}'s hand (the table saw every card in it: "
                    f"{', '.join(sorted(p.hand_known)) or 'none'})"
                )
            if self.unaccounted(card) < 1:
                raise _Rejected(f"every {card} in play is already seen elsewhere on the table")
        p.hand_count -= 1

    def draw(self, n: int) -> int:
        """Draw up to ``n`` hidden cards from the deck; the number drawn.

        Ruling (docs/carnival.md): an empty deck is renewed from the discard pile but its top.
        """
        drawn = 0
        for _ in range(n):
            if self.deck == 0:
                self.reshuffle()
            if self.deck == 0:
                break
            self.deck -= 1
            drawn += 1
        return drawn

    def reshuffle(self) -> None:
        """Step 1: the discard pile but its top card becomes the face-down deck (Fluxo do Jogo 1)."""
        if len(self.discard) > 1:
            self.deck = len(self.discard) - 1
            self.discard = self.discard[-1:]
            self.calls.append(DeckReshuffled(t=self.t, deck=self.deck))

    # -- Midways ---------------------------------------------------------------------------

    def established_incomplete(self, p: _Player, exclude: str | None = None) -> list[str]:
        """Rides of ``p``'s Midway that are started but not complete (Cartas Wild), but ``exclude``."""
        return [
            r
            for r in RIDES
            if r != exclude and p.midway[r]["parts"] and len(p.midway[r]["parts"]) + p.midway[r]["wilds"] < 4
        ]

    def remove_from_midway(self, p: _Player, card: str, ride: str | None) -> None:
        """A card leaves ``p``'s Midway (taken or given away)."""
        parsed = parse_card(card)
        if parsed is None:
            if ride not in RIDES:
                raise _Rejected(f"a wild in a Midway: name the ride it stands on (one of {', '.join(RIDES)})")
            if p.midway[ride]["wilds"] < 1:
                raise _Rejected(f"{p.name}'s {ride} has no wild")
            p.midway[ride]["wilds"] -= 1
            return
        r, part = parsed
        slot = p.midway[r]
        if part not in slot["parts"]:
            raise _Rejected(f"{p.name}'s Midway has no {card}")
        # The four parts of a natural set can be neither traded nor taken (Construção de Atrações).
        if slot["natural"]:
            raise _Rejected(f"{p.name}'s {r} is a natural set, locked for the rest of the game")
        slot["parts"].discard(part)
        if not slot["parts"] and slot["wilds"]:
            # A wild is never left alone: it must be moved or discarded at once (Cartas Wild).
            p.loose_wilds += slot["wilds"]
            slot["wilds"] = 0

    def add_to_midway(self, p: _Player, card: str) -> None:
        """A card arrives in ``p``'s Midway from another Midway."""
        problem = midway_accepts(self.freeze().player(p.name), card)  # type: ignore[arg-type]
        if problem:
            # Never a duplicate in a Midway (Ações de Rolagem de Dados: Midway Trade/Steal).
            raise _Rejected(problem)
        parsed = parse_card(card)
        if parsed is None:
            # The receiver puts a wild on any established, incomplete ride (Cartas Wild).
            p.loose_wilds += 1
            return
        r, part = parsed
        slot = p.midway[r]
        slot["parts"].add(part)
        if len(slot["parts"]) + slot["wilds"] > len(PARTS):
            # Ruling: the part takes the place a wild stood in for; that wild must move.
            slot["wilds"] -= 1
            p.loose_wilds += 1

    def after_midway_change(self) -> None:
        """Natural sets, loose wilds and the winner after any Midway changed."""
        for p in self.players:
            for r in RIDES:
                slot = p.midway[r]
                if len(slot["parts"]) == len(PARTS) and not slot["natural"]:
                    # A natural set: flipped, locked, and a Ticket back from the Ticket
                    # discards if the player holds fewer than three (Fluxo do Jogo 4; Tickets).
                    slot["natural"] = True
                    gained = p.tickets < MAX_TICKETS and self.ticket_discards > 0
                    if gained:
                        p.tickets += 1
                        self.ticket_discards -= 1
                    self.calls.append(
                        NaturalSet(t=self.t, player=p.name, ride=r, ticket_gained=gained, tickets=p.tickets)
                    )
            if p.loose_wilds:
                rides = self.established_incomplete(p)
                self.calls.append(WildLoose(t=self.t, player=p.name, count=p.loose_wilds, rides=tuple(rides)))
        # Victory at four complete rides, with or without wilds, whoever's turn (Fim de Jogo).
        order = self.players[self.s.active :] + self.players[: self.s.active]
        for p in order:
            done = sum(1 for r in RIDES if len(p.midway[r]["parts"]) + p.midway[r]["wilds"] == 4)
            if done >= RIDES_TO_WIN:
                self.winner = p.name
                self.calls.append(
                    Winner(
                        t=self.t,
                        player=p.name,
                        complete_rides={
                            q.name: sum(
                                1 for r in RIDES if len(q.midway[r]["parts"]) + q.midway[r]["wilds"] == 4
                            )
                            for q in self.players
                        },
                    )
                )
                return


def _start_step(s: CarnivalState) -> Step:
    """The first step the active player must take (Fluxo do Jogo 1-3)."""
    if not s.discard and s.deck > 0:
        return "refill_discard"
    if s.active_player.hand_count > HAND_LIMIT:
        return "discard_down"
    return "choose"


# ------------------------------------------------------------------------- the engine


class CarnivalReferee:
    """The Carnival rules engine: pure, ``apply(state, observation) -> (state, calls)``.

    Args:
        copies_per_part, white_tip_copies, wilds, white_tip_wilds: the box's cards
            (:class:`DeckSpec`; defaults: the English edition and the rulings of
            docs/carnival.md); the ``[carnival]`` section of the configuration file.

    Raises:
        companion.config.ConfigError: white-tip counts that no box can have.

    Observations and calls: docs/carnival.md. Bad input never raises: it gives an
    ``invalid_observation`` call and leaves the state as it was.

    Example::

        ref = CarnivalReferee()
        state = ref.initial_state()
        state, calls = ref.apply(state, GameStart(t=0.0, players=("Ana", "Ben"),
                                                  discard=("carousel:seats", "wild")))
    """

    name = "carnival"
    #: Calls that ask the table for the game's next step, said again when a game resumes after a
    #: restart if the newest step that made calls made one of them (the service's rule): whose
    #: turn it is and what it expects first, the dice rolled and the two to choose, the dice to
    #: show again. A turn further under way (dice chosen, actions done) asks nothing again.
    prompts = frozenset({"turn", "rolled", "dice_unreadable"})
    vocabulary = VOCABULARY

    def __init__(
        self,
        copies_per_part: int = 4,
        white_tip_copies: int = 1,
        wilds: int = 6,
        white_tip_wilds: int = 0,
    ):
        from companion.config import ConfigError

        # Options come from the [carnival] section of the configuration file: a combination
        # that no box can have is reported as a configuration error, in one line.
        if not 0 <= white_tip_copies < copies_per_part:
            raise ConfigError(
                f"[carnival] white_tip_copies: expected 0 to copies_per_part - 1 ({copies_per_part - 1}), "
                f"got {white_tip_copies}"
            )
        if not 0 <= white_tip_wilds <= wilds - 4:
            raise ConfigError(
                f"[carnival] white_tip_wilds: expected 0 to wilds - 4 ({wilds - 4}: every player starts "
                f"with a wild), got {white_tip_wilds}"
            )
        self.spec = DeckSpec(copies_per_part, white_tip_copies, wilds, white_tip_wilds)

    # -- the Referee protocol --------------------------------------------------------------

    def initial_state(self) -> CarnivalState:
        """Waiting for ``game_start``."""
        return CarnivalState()

    def next_deadline(self, state: CarnivalState) -> float | None:
        """Carnival has no timed rule: always None."""
        return None

    def is_over(self, state: CarnivalState) -> bool:
        """True once somebody has four complete rides."""
        return state.phase == "over"

    def summary(self, state: CarnivalState) -> dict[str, Any]:
        """Phase, whose turn and step, each Midway, hand sizes, Tickets, complete rides per
        player (the score of Fim de Jogo) and the winner, for the views. ``dice``: the assigned
        dice whose actions are still to be carried out; ``rolled``: the three dice of the roll
        while two of them are still to be chosen (step ``assign``), else ``[]``."""
        return {
            "phase": state.phase,
            "turn": state.turn,
            "player": state.active_player.name if state.players else None,
            "step": state.step,
            "dice": list(state.dice),
            "rolled": list(state.roll) if state.step == "assign" else [],
            "deck": state.deck,
            "discard_top": state.discard[-1] if state.discard else None,
            "midways": {p.name: {r: str(x) for r, x in zip(RIDES, p.midway)} for p in state.players},
            "hands": {p.name: p.hand_count for p in state.players},
            "tickets": {p.name: p.tickets for p in state.players},
            "complete_rides": {p.name: p.complete_rides for p in state.players},
            "winner": state.winner,
        }

    def expected(self, state: CarnivalState) -> tuple[str, ...]:
        """The observation types that may come next (``game_start`` ... ``end_turn``)."""
        if state.phase == "waiting":
            return ("game_start",)
        if state.phase == "over":
            return ()
        if any(p.loose_wilds for p in state.players):
            return ("move_wild",)
        if state.declared is not None:
            return ("ticket", "action")
        return {
            "refill_discard": ("refill_discard",),
            "discard_down": ("discard",),
            "choose": ("wild_exchange", "roll", "move_wild"),
            "assign": ("assign", "roll"),
            "actions": ("declare", "move_wild", "end_turn"),
            "build": ("build", "move_wild", "end_turn"),
        }[state.step]

    def apply(
        self, state: CarnivalState, observation: Observation
    ) -> tuple[CarnivalState, list[Call]]:
        """Apply one observation at its time ``observation.t`` (seconds).

        Observations must come in time order; an earlier ``t`` than the last one is rejected.
        """
        t = observation.t
        if t < state.last_t:
            return state, [
                _invalid(observation, f"time went backwards: t={t} after t={state.last_t}")
            ]
        if isinstance(observation, Tick):
            return dataclasses.replace(state, last_t=t), []
        handler = self._handlers.get(type(observation))
        if handler is None:
            return state, [_invalid(observation, f"{observation.type!r} is not a Carnival observation")]
        if state.phase == "over":
            return state, [_invalid(observation, "the game is over")]
        if state.phase == "waiting" and not isinstance(observation, GameStart):
            return state, [_invalid(observation, "no game yet: the first observation must be game_start")]
        if state.phase == "playing" and isinstance(observation, GameStart):
            return state, [_invalid(observation, "the game has already started")]
        loose = [p.name for p in state.players if p.loose_wilds]
        if loose and not isinstance(observation, MoveWild):
            # A wild left alone must be placed or discarded at once, before play goes on
            # (Cartas Wild).
            return state, [
                _invalid(
                    observation,
                    f"{' and '.join(loose)} must first place or discard a loose wild (move_wild)",
                )
            ]
        table = _Table(state)
        table.t = t
        try:
            new = handler(self, state, table, observation)
        except _Rejected as exc:
            return state, [_invalid(observation, str(exc))]
        if new is state:  # nothing changed (a die read as unknown)
            return state, table.calls
        return dataclasses.replace(new, last_t=t), table.calls

    # -- handlers -----------------------------------------------------------------------

    def _game_start(self, state: CarnivalState, table: _Table, obs: GameStart) -> CarnivalState:
        players = obs.players
        # Carnival is for 2 to 4 players (Preparação 1).
        if not 2 <= len(players) <= 4:
            raise _Rejected(f"players: expected 2 to 4 names, got {len(players)}")
        if len(set(players)) != len(players) or not all(p.strip() for p in players):
            raise _Rejected("players: names must be distinct and non-empty")
        totals = self.spec.totals(len(players))
        # As many face-up cards start the discard pile as there are players (Preparação 2).
        if len(obs.discard) != len(players):
            raise _Rejected(
                f"discard: expected {len(players)} face-up cards (one per player), got {len(obs.discard)}"
            )
        for c in obs.discard:
            try:
                parse_card(c)
            except ValueError as exc:
                raise _Rejected(f"discard: {exc}") from None
        counts = collections.Counter(obs.discard)
        counts[WILD] += len(players)
        for c, n in counts.items():
            if n > totals[c]:
                raise _Rejected(f"discard: {n} x {c} but only {totals[c]} in play")
        n = len(players)
        # Each player: one wild plus five dealt cards, three Tickets, five Midway cards
        # (Preparação 2-3).
        empty = tuple(Ride() for _ in RIDES)
        deck = sum(totals.values()) - n * (1 + _STARTING_HAND) - n
        new = CarnivalState(
            phase="playing",
            players=tuple(PlayerState(p, 1 + _STARTING_HAND, (WILD,), empty) for p in players),
            active=0,
            turn=1,
            totals=tuple(sorted(totals.items())),
            deck=deck,
            discard=tuple(obs.discard),
            last_t=obs.t,
        )
        new = dataclasses.replace(new, step=_start_step(new))
        table.calls += [
            GameStarted(t=obs.t, players=players, first=players[0], discard_top=obs.discard[-1], deck=deck),
            TurnStarted(t=obs.t, player=players[0], turn=1, step=new.step, hand=new.players[0].hand_count),
        ]
        return new

    def _check_turn(self, state: CarnivalState, player: str, *steps: str) -> None:
        if state.player(player) is None:
            raise _Rejected(
                f"player: unknown player {player!r} (players: {', '.join(p.name for p in state.players)})"
            )
        if player != state.active_player.name:
            raise _Rejected(f"it is {state.active_player.name}'s turn, not {player}'s")
        if state.declared is not None:
            die, target = state.declared
            raise _Rejected(
                f"{ACTIONS[die]} against {target or 'the table'} was declared: carry it out "
                "(action) or block it (ticket) first"
            )
        if state.step not in steps:
            raise _Rejected(f"not now: {_STEP_WORDS[state.step]}")

    def _refill_discard(self, state: CarnivalState, table: _Table, obs: RefillDiscard) -> CarnivalState:
        # Step 1: only when the discard pile is empty (Fluxo do Jogo 1).
        if state.step != "refill_discard":
            raise _Rejected("the discard pile is not empty" if state.discard else f"not now: {_STEP_WORDS[state.step]}")
        try:
            parse_card(obs.card)
        except ValueError as exc:
            raise _Rejected(f"card: {exc}") from None
        if table.unaccounted(obs.card) < 1:
            raise _Rejected(f"card: every {obs.card} in play is already seen elsewhere")
        table.deck -= 1
        table.discard.append(obs.card)
        table.calls.append(DiscardRefilled(t=obs.t, card=obs.card, deck=table.deck))
        new = table.freeze()
        return dataclasses.replace(new, step=_start_step(new))

    def _discard(self, state: CarnivalState, table: _Table, obs: Discard) -> CarnivalState:
        self._check_turn(state, obs.player, "discard_down")
        p = table.player(obs.player)
        # Step 2: discard down to exactly six cards (Fluxo do Jogo 2).
        need = p.hand_count - HAND_LIMIT
        if len(obs.cards) != need:
            raise _Rejected(f"cards: {p.name} holds {p.hand_count}: discard exactly {need} to keep {HAND_LIMIT}")
        for c in obs.cards:
            table.take_from_hand(p, c)
            table.discard.append(c)
        table.calls.append(Discarded(t=obs.t, player=p.name, cards=obs.cards, hand=p.hand_count))
        return dataclasses.replace(table.freeze(), step="choose")

    def _wild_exchange(self, state: CarnivalState, table: _Table, obs: WildExchange) -> CarnivalState:
        self._check_turn(state, obs.player, "choose")
        p = table.player(obs.player)
        # Step 3, option 1: a wild from the hand or the Midway, with any number of hand cards;
        # as many cards drawn from the deck (Fluxo do Jogo 3.1).
        if obs.wild_from == "hand":
            table.take_from_hand(p, WILD)
        elif obs.wild_from in RIDES:
            table.remove_from_midway(p, WILD, obs.wild_from)
        else:
            raise _Rejected(f"wild_from: expected 'hand' or a ride ({', '.join(RIDES)}), got {obs.wild_from!r}")
        table.discard.append(WILD)
        for c in obs.cards:
            table.take_from_hand(p, c)
            table.discard.append(c)
        drew = table.draw(1 + len(obs.cards))
        p.hand_count += drew
        table.calls.append(WildExchanged(t=obs.t, player=p.name, cards=(WILD, *obs.cards), drew=drew))
        table.after_midway_change()
        return dataclasses.replace(table.freeze(), step="build")

    def _roll(self, state: CarnivalState, table: _Table, obs: Roll) -> CarnivalState:
        # A re-read of the dice before they are assigned replaces the roll.
        self._check_turn(state, obs.player, "choose", "assign")
        if len(obs.dice) != 3:
            raise _Rejected(f"dice: expected 3 dice (Fluxo do Jogo 3.2), got {len(obs.dice)}")
        for d in obs.dice:
            if d != "unknown" and not (isinstance(d, int) and 1 <= d <= 6):
                raise _Rejected(f"dice: expected 1-6 or 'unknown', got {d!r}")
        if "unknown" in obs.dice:
            # A die read as unknown: nothing is decided until the dice are read again.
            table.calls.append(DiceUnreadable(t=obs.t, player=obs.player, dice=obs.dice))
            return state
        dice = tuple(int(d) for d in obs.dice)
        # Three of a kind: the third die goes to the bullseye, all three actions must be
        # carried out (Fluxo do Jogo 3.2).
        triple = len(set(dice)) == 1
        table.calls.append(
            Rolled(t=obs.t, player=obs.player, dice=dice, actions=tuple(dice_actions(dice)), triple=triple)
        )
        if triple:
            table.calls.append(
                DiceAssigned(
                    t=obs.t, player=obs.player, dice=dice, actions=tuple(dice_actions(dice)), bullseye=dice[0]
                )
            )
            return dataclasses.replace(table.freeze(), step="actions", roll=dice, dice=dice)
        return dataclasses.replace(table.freeze(), step="assign", roll=dice, dice=())

    def _assign(self, state: CarnivalState, table: _Table, obs: Assign) -> CarnivalState:
        self._check_turn(state, obs.player, "assign")
        # Choose two of the three dice; every die is placed before any action (Fluxo do Jogo 3.2).
        if len(obs.dice) != 2:
            raise _Rejected(f"dice: choose 2 of the roll {list(state.roll)}, got {len(obs.dice)}")
        rest = list(state.roll)
        for d in obs.dice:
            if d not in rest:
                raise _Rejected(f"dice: {d} is not among the roll {list(state.roll)}")
            rest.remove(d)
        dice = tuple(obs.dice)
        table.calls.append(DiceAssigned(t=obs.t, player=obs.player, dice=dice, actions=tuple(dice_actions(dice))))
        return dataclasses.replace(table.freeze(), step="actions", dice=dice)

    def _declare(self, state: CarnivalState, table: _Table, obs: Declare) -> CarnivalState:
        self._check_turn(state, obs.player, "actions")
        # Only an assigned die's action may be carried out; in any order (Ações e Como Jogar).
        if obs.die not in state.dice:
            raise _Rejected(f"die: {obs.die} is not an assigned die still to play ({list(state.dice) or 'none left'})")
        problem = self._impossible(state, obs.die, obs.target, declared=True)
        if problem:
            raise _Rejected(problem)
        table.calls.append(
            ActionDeclared(t=obs.t, player=obs.player, action=ACTIONS[obs.die], die=obs.die, target=obs.target)
        )
        return dataclasses.replace(table.freeze(), declared=(obs.die, obs.target))

    def _ticket(self, state: CarnivalState, table: _Table, obs: Ticket) -> CarnivalState:
        blocker = table.player(obs.player)
        # A Ticket only blocks a dice action just declared; using a Ticket can itself never be
        # blocked (Tickets).
        if state.declared is None:
            raise _Rejected("no action is declared: a Ticket only blocks a declared dice action (and a Ticket cannot be blocked)")
        # It blocks another player's action (Tickets).
        if blocker.name == state.active_player.name:
            raise _Rejected("a player cannot block their own action")
        # One Ticket, and only one, per player per turn (Tickets).
        if blocker.name in state.ticket_users:
            raise _Rejected(f"{blocker.name} has already used a Ticket this turn (one a turn)")
        if blocker.tickets < 1:
            raise _Rejected(f"{blocker.name} has no Ticket left")
        blocker.tickets -= 1
        table.ticket_discards += 1
        die, _ = state.declared
        table.calls.append(
            ActionBlocked(
                t=obs.t, player=state.active_player.name, action=ACTIONS[die], blocker=blocker.name, tickets=blocker.tickets
            )
        )
        return self._spend(
            dataclasses.replace(table.freeze(), ticket_users=state.ticket_users + (blocker.name,)), die
        )

    def _action(self, state: CarnivalState, table: _Table, obs: Action) -> CarnivalState:
        if state.declared is None:
            raise _Rejected("declare the action and its target first, so that others may block it (Ações e Como Jogar)")
        if obs.player != state.active_player.name:
            raise _Rejected(f"it is {state.active_player.name}'s turn, not {obs.player}'s")
        die, target_name = state.declared
        me = table.player(obs.player)
        kind = ACTIONS[die]
        extra = {"take": obs.take, "give": obs.give, "discard": obs.discard}
        wanted = {
            "deck_draw": (),
            "discard_draw": (),
            "hand_draw": (),
            "hand_trade": (),
            "midway_trade": ("take", "give"),
            "midway_steal": ("take", "discard"),
        }[kind]
        for key, value in extra.items():
            if value is not None and key not in wanted:
                raise _Rejected(f"{key}: {kind} has no {key}")
        took = gave = discarded = None
        if kind == "deck_draw":
            # Deck Draw: the top card of the deck (Ações de Rolagem de Dados).
            me.hand_count += table.draw(1)
        elif kind == "discard_draw":
            # Discard Draw: the top card of the discard pile, seen by all.
            took = table.discard.pop()
            me.hand_count += 1
            me.hand_known.append(took)
        elif kind in ("hand_draw", "hand_trade"):
            # Hand Draw: a random card from a player's hand; Hand Trade: then one card of
            # one's own hand back to that player. Both cards stay hidden.
            victim = table.player(target_name)
            victim.hand_count -= 1
            victim.hand_known.clear()
            me.hand_count += 1
            if kind == "hand_trade":
                me.hand_known.clear()
                me.hand_count -= 1
                victim.hand_count += 1
        else:
            victim = table.player(target_name)
            if obs.take is None:
                raise _Rejected(f"take: name the card taken from {victim.name}'s Midway")
            try:
                parse_card(obs.take)
            except ValueError as exc:
                raise _Rejected(f"take: {exc}") from None
            # Midway Trade/Steal: the card taken goes into the taker's Midway; never a
            # duplicate in any Midway, natural sets locked (Ações de Rolagem de Dados).
            table.remove_from_midway(victim, obs.take, obs.take_ride)
            table.add_to_midway(me, obs.take)
            took = obs.take
            if kind == "midway_trade":
                if obs.give is None:
                    raise _Rejected(f"give: name the card of your Midway given to {victim.name}")
                try:
                    parse_card(obs.give)
                except ValueError as exc:
                    raise _Rejected(f"give: {exc}") from None
                if obs.give == obs.take and obs.give != WILD:
                    raise _Rejected("give: the card just taken cannot go straight back")
                table.remove_from_midway(me, obs.give, obs.give_ride)
                table.add_to_midway(victim, obs.give)
                gave = obs.give
            else:
                # Midway Steal: then one card of the hand onto the discard pile.
                if obs.discard is None:
                    if me.hand_count:
                        raise _Rejected("discard: name the hand card put on the discard pile")
                else:
                    table.take_from_hand(me, obs.discard)
                    table.discard.append(obs.discard)
                    discarded = obs.discard
        table.calls.append(
            ActionDone(
                t=obs.t,
                player=me.name,
                action=kind,
                target=target_name,
                took=took,
                gave=gave,
                discarded=discarded,
                hands={p.name: p.hand_count for p in table.players},
            )
        )
        table.after_midway_change()
        new = self._spend(dataclasses.replace(table.freeze()), die)
        return self._finish(new, table)

    def _move_wild(self, state: CarnivalState, table: _Table, obs: MoveWild) -> CarnivalState:
        p = table.player(obs.player)
        if obs.from_ride is None:
            # A loose wild: placed or discarded at once by its owner, even on another's turn.
            if p.loose_wilds < 1:
                raise _Rejected(f"{p.name} has no loose wild (give from_ride for a wild on a ride)")
            p.loose_wilds -= 1
        else:
            # Wilds are reassigned by their owner during their own turn (Cartas Wild).
            if any(q.loose_wilds for q in state.players):
                raise _Rejected("first place or discard the loose wild(s)")
            if p.name != state.active_player.name:
                raise _Rejected(f"{p.name} can move wilds only in their own turn")
            if state.declared is not None:
                raise _Rejected("an action is declared: carry it out or block it first")
            if obs.from_ride not in RIDES:
                raise _Rejected(f"from_ride: expected a ride ({', '.join(RIDES)}), got {obs.from_ride!r}")
            if p.midway[obs.from_ride]["wilds"] < 1:
                raise _Rejected(f"{p.name}'s {obs.from_ride} has no wild")
            if obs.to_ride is None:
                raise _Rejected("to_ride: a wild on a ride is moved to another ride (discard it with wild_exchange)")
            p.midway[obs.from_ride]["wilds"] -= 1
        if obs.to_ride is None:
            table.discard.append(WILD)
        else:
            if obs.to_ride not in RIDES:
                raise _Rejected(f"to_ride: expected a ride ({', '.join(RIDES)}) or null, got {obs.to_ride!r}")
            # Only onto an established, incomplete ride (Cartas Wild).
            if obs.to_ride not in table.established_incomplete(p, exclude=obs.from_ride):
                raise _Rejected(f"to_ride: {p.name}'s {obs.to_ride} is not an established, incomplete ride")
            p.midway[obs.to_ride]["wilds"] += 1
        table.calls.append(WildMoved(t=obs.t, player=p.name, from_ride=obs.from_ride, to_ride=obs.to_ride))
        table.after_midway_change()
        return self._finish(table.freeze(), table)

    def _build(self, state: CarnivalState, table: _Table, obs: Build) -> CarnivalState:
        self._check_turn(state, obs.player, "build", "actions")
        if state.step == "actions" and state.dice:
            possible = [d for d in state.dice if self._impossible(state, d, None, declared=False) is None]
            if possible:
                raise _Rejected(
                    f"carry out the assigned actions first ({', '.join(dice_actions(possible))}); "
                    "building is step 4 (Fluxo do Jogo)"
                )
            # Actions nobody can carry out are dropped when building starts (ruling).
            self._drop_impossible(state, table, obs)
            state = table.s = dataclasses.replace(state, dice=())
        p = table.player(obs.player)
        if obs.ride not in RIDES:
            raise _Rejected(f"ride: expected one of {', '.join(RIDES)}, got {obs.ride!r}")
        if not obs.cards:
            raise _Rejected("cards: play at least one card")
        slot = p.midway[obs.ride]
        for c in obs.cards:
            try:
                parse_card(c)
            except ValueError as exc:
                raise _Rejected(f"cards: {exc}") from None
        if not slot["parts"]:
            # A new ride: two different parts of it from the hand, one may be a wild
            # (Construção de Atrações).
            problem = can_start_ride(obs.ride, obs.cards)
            if problem:
                raise _Rejected(problem)
        else:
            # Adding to an existing, incomplete ride; a single part already in the Midway lets
            # a ride grow with fewer than two cards from the hand (Construção de Atrações).
            if len(slot["parts"]) + slot["wilds"] >= len(PARTS):
                raise _Rejected(f"{p.name}'s {obs.ride} is complete")
            seen = set(slot["parts"])
            for c in obs.cards:
                parsed = parse_card(c)
                if parsed is None:
                    continue
                if parsed[0] != obs.ride:
                    raise _Rejected(f"cards: {c} is not a part of the {obs.ride}")
                if parsed[1] in seen:
                    raise _Rejected(f"cards: {p.name}'s {obs.ride} already has {c} (no duplicate in a Midway)")
                seen.add(parsed[1])
            if len(slot["parts"]) + slot["wilds"] + len(obs.cards) > len(PARTS):
                raise _Rejected(f"cards: a ride holds {len(PARTS)} cards")
        for c in obs.cards:
            table.take_from_hand(p, c)
            parsed = parse_card(c)
            if parsed is None:
                slot["wilds"] += 1
            else:
                slot["parts"].add(parsed[1])
        complete = len(slot["parts"]) + slot["wilds"] == len(PARTS)
        done = sum(1 for r in RIDES if len(p.midway[r]["parts"]) + p.midway[r]["wilds"] == 4)
        table.calls.append(
            Built(t=obs.t, player=p.name, ride=obs.ride, cards=obs.cards, complete=complete, complete_rides=done)
        )
        table.after_midway_change()
        return self._finish(dataclasses.replace(table.freeze(), step="build"), table)

    def _end_turn(self, state: CarnivalState, table: _Table, obs: EndTurn) -> CarnivalState:
        self._check_turn(state, obs.player, "build", "actions")
        # Every assigned action must be carried out (Ações e Como Jogar); one that nobody can
        # carry out is dropped (ruling).
        self._drop_impossible(state, table, obs)
        p = table.player(obs.player)
        # Step 5: fill the hand up to three from the deck (Fluxo do Jogo 5).
        drew = table.draw(max(0, HAND_REFILL - p.hand_count))
        p.hand_count += drew
        table.calls.append(TurnEnded(t=obs.t, player=p.name, drew=drew, hand=p.hand_count))
        nxt = (state.active + 1) % len(state.players)
        new = dataclasses.replace(
            table.freeze(), active=nxt, turn=state.turn + 1, roll=(), dice=(), declared=None, ticket_users=()
        )
        new = dataclasses.replace(new, step=_start_step(new))
        table.calls.append(
            TurnStarted(t=obs.t, player=new.active_player.name, turn=new.turn, step=new.step, hand=new.active_player.hand_count)
        )
        return new

    _handlers: dict[type, Any] = {
        GameStart: _game_start,
        RefillDiscard: _refill_discard,
        Discard: _discard,
        WildExchange: _wild_exchange,
        Roll: _roll,
        Assign: _assign,
        Declare: _declare,
        Ticket: _ticket,
        Action: _action,
        MoveWild: _move_wild,
        Build: _build,
        EndTurn: _end_turn,
    }

    # -- rules shared by several handlers -----------------------------------------------

    def _drop_impossible(self, state: CarnivalState, table: _Table, obs: Observation) -> None:
        """Drop the assigned actions that nobody can carry out; refuse if one still can be."""
        for die in state.dice:
            problem = self._impossible(state, die, None, declared=False)
            if problem is None:
                raise _Rejected(
                    f"{ACTIONS[die]} is still to be carried out (dice roll actions must be performed)"
                )
        for die in state.dice:
            problem = self._impossible(state, die, None, declared=False)
            table.calls.append(
                ActionImpossible(t=obs.t, player=state.active_player.name, action=ACTIONS[die], reason=problem or "")
            )

    def _spend(self, state: CarnivalState, die: int) -> CarnivalState:
        dice = list(state.dice)
        dice.remove(die)
        return dataclasses.replace(state, dice=tuple(dice), declared=None)

    def _finish(self, state: CarnivalState, table: _Table) -> CarnivalState:
        if table.winner is not None:
            return dataclasses.replace(state, phase="over", winner=table.winner, declared=None)
        return state

    def _impossible(self, state: CarnivalState, die: int, target: str | None, declared: bool) -> str | None:
        """Why the action of ``die`` cannot be carried out (against ``target``), or None.

        With ``declared`` False, None means "possible against some target".

        Raises:
            _Rejected: with ``declared``, a target that the action cannot have (none for a
                targeted action, one for a draw, oneself, an unknown player).
        """
        me = state.active_player
        kind = ACTIONS[die]
        others = [p for p in state.players if p.name != me.name]
        if die not in TARGETED_ACTIONS:
            if declared and target is not None:
                raise _Rejected(f"target: {kind} has no target")
            if kind == "deck_draw" and state.deck == 0 and len(state.discard) <= 1:
                return "no card left to draw"
            if kind == "discard_draw" and not state.discard:
                return "the discard pile is empty"
            return None
        if declared:
            if target is None:
                raise _Rejected(f"target: {kind} needs a target player")
            victim = state.player(target)
            if victim is None:
                raise _Rejected(f"target: unknown player {target!r}")
            if victim.name == me.name:
                raise _Rejected(f"target: {kind} is aimed at another player")
            candidates = [victim]
        else:
            candidates = others
        reasons = []
        for v in candidates:
            if kind in ("hand_draw", "hand_trade"):
                # An action against an empty hand cannot be carried out.
                if v.hand_count == 0:
                    reasons.append(f"{v.name} has no card in hand")
                    continue
                return None
            cards = takeable(v)
            if not cards:
                reasons.append(f"{v.name}'s Midway has no card that may be taken")
                continue
            if kind == "midway_steal":
                if any(midway_accepts(me, c) is None for c in cards):
                    return None
                reasons.append(f"every card of {v.name}'s Midway would duplicate one of {me.name}'s")
                continue
            if any(
                midway_accepts(me, c) is None
                and any(
                    g != c and midway_accepts(without_card(v, c), g) is None
                    for g in takeable(with_card(me, c))
                )
                for c in cards
            ):
                return None
            reasons.append(f"no trade with {v.name} leaves both Midways without a duplicate")
        return "; ".join(reasons) or "no other player"


_STEP_WORDS = {
    "refill_discard": "the discard pile is empty: turn the top deck card face up first (step 1)",
    "discard_down": "discard down to six cards first (step 2)",
    "choose": "exchange a wild or roll the dice first (step 3)",
    "assign": "choose two dice for the tableau first",
    "actions": "carry out the assigned actions first",
    "build": "the dice actions are over for this turn",
}


def takeable(p: PlayerState) -> list[str]:
    """Cards of ``p``'s Midway that may be taken: all but natural sets (Construção de Atrações)."""
    out = []
    for name, r in zip(RIDES, p.midway):
        if r.natural:
            continue
        out += [card_text(name, part) for part in r.parts]
        if r.wilds:
            out.append(WILD)
    return out


def without_card(p: PlayerState, card: str) -> PlayerState:
    """``p`` with the parts card ``card`` gone from its ride (a wild: ``p`` unchanged)."""
    parsed = parse_card(card)
    if parsed is None:
        return p
    i = RIDES.index(parsed[0])
    r = p.midway[i]
    ride = dataclasses.replace(r, parts=tuple(x for x in r.parts if x != parsed[1]))
    return dataclasses.replace(p, midway=p.midway[:i] + (ride,) + p.midway[i + 1 :])


def with_card(p: PlayerState, card: str) -> PlayerState:
    """``p`` with the parts card ``card`` added to its ride (a wild: ``p`` unchanged)."""
    parsed = parse_card(card)
    if parsed is None:
        return p
    i = RIDES.index(parsed[0])
    r = p.midway[i]
    ride = dataclasses.replace(r, parts=tuple(sorted(r.parts + (parsed[1],))))
    return dataclasses.replace(p, midway=p.midway[:i] + (ride,) + p.midway[i + 1 :])


_invalid = InvalidObservation.rejecting

