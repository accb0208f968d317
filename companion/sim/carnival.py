"""The simulated Carnival table: seeded players who play a whole legal game.

:func:`carnival_game` is a pure generator: given a seed it yields the observations of one game
of Carnival, each with its session time ``t`` (seconds), exactly as the camera's dice reader and
the players' reports would give them on a real table (``docs/carnival.md``). It knows what the
table cannot see (the order of the deck, the cards in each hand) and plays every turn of the
rulebook (``shared/rules/carnival.pt.txt``): step 1 refills the discard pile, step 2 discards
down to six, step 3 exchanges a wild or rolls three dice (a triple forces all three actions),
opponents block declared actions with Tickets, step 4 builds, step 5 refills the hand.

The players are simple and greedy: they keep the dice whose actions help them most, take parts
they miss, build whatever they can and use a wild to finish a ride. Fault injection: with
``unreadable_rate`` a roll is first reported with a die ``"unknown"`` (as the dice reader does
when unsure) and then read again.

Every observation is checked against :class:`~companion.games.carnival.CarnivalReferee` as it
is made, so the stream is legal by construction; a refusal is a bug and raises RuntimeError.
Same seed, same game. :class:`SimulatedCarnivalTable` wraps the generator as a scheduled source
for the service loop (``start``/``stop``/``next_time``/``advance``).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator, Sequence
from typing import Any

from companion.events import InvalidObservation, Observation
from companion.games.carnival import (
    ACTIONS,
    HAND_LIMIT,
    HAND_REFILL,
    PARTS,
    RIDES,
    WILD,
    Action,
    Assign,
    Build,
    CarnivalReferee,
    CarnivalState,
    Declare,
    Discard,
    EndTurn,
    GameStart,
    MoveWild,
    PlayerState,
    RefillDiscard,
    Roll,
    Ticket,
    WildExchange,
    takeable,
    with_card,
    without_card,
    can_start_ride,
    card_text,
    midway_accepts,
    parse_card,
)

__all__ = ["carnival_game", "SimulatedCarnivalTable", "DEFAULT_PLAYERS"]

DEFAULT_PLAYERS: tuple[str, ...] = ("Ana", "Ben", "Caio")


class _Game:
    """The hidden truth of the simulated table plus the referee's view of it."""

    def __init__(
        self,
        seed: int,
        players: Sequence[str],
        move_time_s: float,
        block_rate: float,
        unreadable_rate: float,
        referee: CarnivalReferee,
    ):
        self.rng = random.Random(seed)
        self.players = list(players)
        self.move_time_s = move_time_s
        self.block_rate = block_rate
        self.unreadable_rate = unreadable_rate
        self.ref = referee
        self.state: CarnivalState = referee.initial_state()
        self.t = 0.0
        self.hands: dict[str, list[str]] = {p: [] for p in players}
        self.deck: list[str] = []  # top is the end of the list
        self.discard: list[str] = []  # top is the end of the list

    # -- plumbing ---------------------------------------------------------------------------

    def emit(self, obs: Observation) -> Observation:
        """Apply ``obs`` to the referee (the oracle) and return it; RuntimeError if it is refused."""
        self.state, calls = self.ref.apply(self.state, obs)
        for c in calls:
            if isinstance(c, InvalidObservation):
                raise RuntimeError(f"simulated table made an illegal observation: {c.reason}")
        return obs

    def tick(self, lo: float = 0.4, hi: float | None = None) -> float:
        """Advance the table's time by a random pause (seconds, ``lo`` to ``hi``); return the new time."""
        hi = self.move_time_s * 2 if hi is None else hi
        self.t = round(self.t + self.rng.uniform(lo, max(lo, hi)), 3)
        return self.t

    def draw(self, n: int) -> list[str]:
        """Mirror of the referee's draw: an empty deck is renewed from the discard pile but
        its top card (ruling, docs/carnival.md)."""
        out = []
        for _ in range(n):
            if not self.deck and len(self.discard) > 1:
                self.deck = self.discard[:-1]
                self.discard = self.discard[-1:]
                self.rng.shuffle(self.deck)
            if not self.deck:
                break
            out.append(self.deck.pop())
        return out

    def me(self, name: str) -> PlayerState:
        """The referee's state of the player ``name`` (AssertionError if unknown)."""
        p = self.state.player(name)
        assert p is not None
        return p

    # -- judgement ------------------------------------------------------------------------

    def wants(self, name: str, card: str) -> bool:
        """The card would go on a ride of ``name`` that lacks it."""
        parsed = parse_card(card)
        if parsed is None:
            return True
        r = self.me(name).ride(parsed[0])
        return not r.natural and not r.is_complete and parsed[1] not in r.parts

    def worst(self, name: str, cards: Sequence[str]) -> str:
        """The least useful card of ``cards`` for ``name``."""
        hand = self.hands[name]

        def score(c: str) -> float:
            if c == WILD:
                return 10.0
            if not self.wants(name, c):
                return 0.0
            ride = parse_card(c)[0]  # type: ignore[index]
            mates = sum(1 for x in hand if x != c and x != WILD and x.startswith(ride + ":"))
            return 1.0 + mates + len(self.me(name).ride(ride).parts) + self.rng.random() * 0.5

        return min(cards, key=score)

    # -- a whole game -----------------------------------------------------------------------

    def play(self, max_turns: int) -> Iterator[Observation]:
        """Yield the observations of a whole game: setup, then turns until a winner (at most ``max_turns``)."""
        n = len(self.players)
        totals = self.ref.spec.totals(n)
        pool = [c for c, k in totals.items() for _ in range(k - (n if c == WILD else 0))]
        self.rng.shuffle(pool)
        self.deck = pool
        for p in self.players:
            # One wild each plus five dealt cards (Preparação 2).
            self.hands[p] = [WILD] + [self.deck.pop() for _ in range(5)]
        self.discard = [self.deck.pop() for _ in range(n)]
        yield self.emit(GameStart(t=self.t, players=tuple(self.players), discard=tuple(self.discard)))
        while self.state.phase == "playing" and self.state.turn <= max_turns:
            yield from self.turn()

    def turn(self) -> Iterator[Observation]:
        """Yield the observations of the active player's turn (rulebook: Fluxo do Jogo, steps 1-5)."""
        name = self.state.active_player.name
        hand = self.hands[name]
        if self.state.step == "refill_discard":
            card = self.deck.pop()
            self.discard.append(card)
            yield self.emit(RefillDiscard(t=self.tick(), card=card))
        if self.state.step == "discard_down":
            cards = []
            while len(hand) > HAND_LIMIT:
                c = self.worst(name, hand)
                hand.remove(c)
                cards.append(c)
                self.discard.append(c)
            yield self.emit(Discard(t=self.tick(), player=name, cards=tuple(cards)))
        useless = [c for c in hand if c != WILD and not self.wants(name, c)]
        if WILD in hand and len(useless) >= 2 and self.rng.random() < 0.4:
            yield from self.exchange(name, useless)
        else:
            yield from self.roll(name)
        if self.state.phase != "playing":
            return
        yield from self.build(name)
        if self.state.phase != "playing":
            return
        yield self.emit(EndTurn(t=self.tick(), player=name))
        hand += self.draw(max(0, HAND_REFILL - len(hand)))

    def exchange(self, name: str, useless: list[str]) -> Iterator[Observation]:
        """Step 3, option 1: the wild and the useless cards for as many new ones."""
        hand = self.hands[name]
        hand.remove(WILD)
        self.discard.append(WILD)
        for c in useless:
            hand.remove(c)
            self.discard.append(c)
        yield self.emit(WildExchange(t=self.tick(), player=name, wild_from="hand", cards=tuple(useless)))
        hand += self.draw(1 + len(useless))

    def roll(self, name: str) -> Iterator[Observation]:
        """Step 3, option 2: roll, assign, then declare and carry out every action."""
        dice = tuple(self.rng.randint(1, 6) for _ in range(3))
        if self.rng.random() < self.unreadable_rate:
            blurred: list[int | str] = list(dice)
            blurred[self.rng.randrange(3)] = "unknown"
            yield self.emit(Roll(t=self.tick(1.0, 2.0), player=name, dice=tuple(blurred)))
        yield self.emit(Roll(t=self.tick(1.0, 2.0), player=name, dice=dice))
        if self.state.step == "assign":
            chosen = sorted(dice, key=lambda d: self.die_value(name, d), reverse=True)[:2]
            yield self.emit(Assign(t=self.tick(), player=name, dice=tuple(chosen)))
        while self.state.dice and self.state.phase == "playing":
            progressed = False
            for die in sorted(set(self.state.dice), key=lambda d: -self.die_value(name, d)):
                target = self.pick_target(name, die)
                if target is False:
                    continue
                yield from self.action(name, die, target)  # type: ignore[arg-type]
                progressed = True
                break
            if not progressed:
                break  # the rest are impossible: dropped at the end of the turn

    def die_value(self, name: str, die: int) -> float:
        """How much the simulated player wants a die's action (higher first), with a little noise."""
        return {6: 6.0, 5: 5.0, 2: 3.0, 1: 2.5, 3: 2.0, 4: 1.0}[die] + self.rng.random() * 0.1

    def pick_target(self, name: str, die: int) -> str | None | bool:
        """A target for the action of ``die`` (None: no target needed; False: impossible)."""
        me = self.me(name)
        others = [p for p in self.state.players if p.name != name]
        self.rng.shuffle(others)
        kind = ACTIONS[die]
        if kind == "deck_draw":
            return None if self.deck or len(self.discard) > 1 else False
        if kind == "discard_draw":
            return None if self.discard else False
        if kind in ("hand_draw", "hand_trade"):
            with_cards = [p for p in others if p.hand_count]
            return max(with_cards, key=lambda p: p.hand_count).name if with_cards else False
        best, best_score = False, -1.0
        for v in others:
            for c in takeable(v):
                if midway_accepts(me, c) is not None:
                    continue
                if kind == "midway_trade" and not self.trade_gift(name, v, c):
                    continue
                s = (2.0 if self.wants(name, c) else 0.5) + self.rng.random()
                if s > best_score:
                    best, best_score = v.name, s
        return best

    def trade_gift(self, name: str, victim: PlayerState, took: str) -> list[tuple[str, str | None]]:
        """Cards of ``name``'s Midway (with their ride for a wild) that ``victim`` may receive
        once ``took`` has changed hands."""
        me_after = with_card(self.me(name), took)
        victim_after = without_card(victim, took)
        gifts = []
        for ride_name, r in zip(RIDES, me_after.midway):
            if r.natural:
                continue
            for part in r.parts:
                c = card_text(ride_name, part)
                if c != took and midway_accepts(victim_after, c) is None:
                    gifts.append((c, None))
            if r.wilds and took != WILD and midway_accepts(victim_after, WILD) is None:
                gifts.append((WILD, ride_name))  # the referee's rule: a gift the victim may hold
        return gifts

    def action(self, name: str, die: int, target: str | None) -> Iterator[Observation]:
        """Yield the observations of one die action declared by ``name`` (Ações de Rolagem de Dados)."""
        kind = ACTIONS[die]
        yield self.emit(Declare(t=self.tick(), player=name, die=die, target=target))
        # Opponents may block with a Ticket, the target most willingly (Tickets).
        for p in self.state.players:
            if p.name == name or p.tickets < 1 or p.name in self.state.ticket_users:
                continue
            rate = self.block_rate * (2.0 if p.name == target and die >= 5 else 0.3)
            if self.rng.random() < rate:
                yield self.emit(Ticket(t=self.tick(0.3, 1.0), player=p.name))
                return
        hand = self.hands[name]
        fields: dict[str, Any] = {}
        if kind == "deck_draw":
            hand += self.draw(1)
        elif kind == "discard_draw":
            hand.append(self.discard.pop())
        elif kind in ("hand_draw", "hand_trade"):
            other = self.hands[target]  # type: ignore[index]
            card = other.pop(self.rng.randrange(len(other)))
            hand.append(card)
            if kind == "hand_trade":
                give = self.worst(name, hand)
                hand.remove(give)
                other.append(give)
        else:
            victim = self.me(target)  # type: ignore[arg-type]
            options = [c for c in takeable(victim) if midway_accepts(self.me(name), c) is None]
            if kind == "midway_trade":
                options = [c for c in options if self.trade_gift(name, victim, c)]
            wanted = [c for c in options if self.wants(name, c)]
            take = self.rng.choice(wanted or options)
            fields["take"] = take
            if take == WILD:
                fields["take_ride"] = self.rng.choice(
                    [r for r, x in zip(RIDES, victim.midway) if x.wilds and not x.natural]
                )
            if kind == "midway_trade":
                gifts = self.trade_gift(name, victim, take)
                useless = [g for g in gifts if g[0] != WILD and not self.wants(name, g[0])]
                give, give_ride = self.rng.choice(useless or gifts)
                fields["give"] = give
                if give_ride is not None:
                    fields["give_ride"] = give_ride
            elif hand:
                c = self.worst(name, hand)
                hand.remove(c)
                self.discard.append(c)
                fields["discard"] = c
        yield self.emit(Action(t=self.tick(), player=name, **fields))
        if self.state.phase == "playing":
            yield from self.place_loose_wilds()

    def place_loose_wilds(self) -> Iterator[Observation]:
        """Every wild left alone goes onto a ride that can take it, or is discarded."""
        for p in self.state.players:
            for _ in range(p.loose_wilds):
                if self.state.phase != "playing":
                    return
                p = self.me(p.name)
                rides = [
                    r for r, x in zip(RIDES, p.midway) if x.is_established and not x.is_complete
                ]
                to = max(rides, key=lambda r: p.ride(r).size) if rides else None
                if to is None:
                    self.discard.append(WILD)
                yield self.emit(MoveWild(t=self.tick(0.3, 1.0), player=p.name, from_ride=None, to_ride=to))
        if self.state.phase == "playing" and any(q.loose_wilds for q in self.state.players):
            yield from self.place_loose_wilds()

    def build(self, name: str) -> Iterator[Observation]:
        """Step 4: every build the hand allows; a wild finishes a ride of three."""
        hand = self.hands[name]
        changed = True
        while changed and self.state.phase == "playing":
            changed = False
            for ride in RIDES:
                r = self.me(name).ride(ride)
                if r.is_complete:
                    continue
                mine = sorted({c for c in hand if c != WILD and c.startswith(ride + ":")})
                mine = [c for c in mine if parse_card(c)[1] not in r.parts][: len(PARTS) - r.size]  # type: ignore[index]
                cards = list(mine)
                if not r.is_established:
                    if len(cards) == 1 and WILD in hand and self.rng.random() < 0.6:
                        cards.append(WILD)
                    if can_start_ride(ride, cards) is not None:
                        continue
                if r.size + len(cards) == len(PARTS) - 1 and WILD in hand and WILD not in cards:
                    cards.append(WILD)
                if not cards:
                    continue
                for c in cards:
                    hand.remove(c)
                yield self.emit(Build(t=self.tick(), player=name, ride=ride, cards=tuple(cards)))
                changed = True
                break


def carnival_game(
    seed: int = 1,
    players: Sequence[str] = DEFAULT_PLAYERS,
    move_time_s: float = 1.5,
    block_rate: float = 0.25,
    unreadable_rate: float = 0.05,
    max_turns: int = 600,
    referee: CarnivalReferee | None = None,
) -> Iterator[Observation]:
    """Yield the observations of one simulated game of Carnival, in time order.

    Args:
        seed: seeds the deck, the dice and every decision: same seed, same game.
        players: 2 to 4 names in turn order.
        move_time_s: mean seconds between two observations (each at least 0.4 s).
        block_rate: willingness (0-1) of a targeted player to block with a Ticket.
        unreadable_rate: chance (0-1) that a roll is first read with an ``"unknown"`` die.
        max_turns: stop after this many turns if nobody has won yet (the generator then ends
            without a winner).
        referee: the referee that checks every observation (default: ``CarnivalReferee()``).

    Yields:
        :class:`~companion.events.Observation` values of the Carnival vocabulary, ``t`` in
        seconds from 0, non-decreasing.

    Raises:
        ValueError: fewer than 2 or more than 4 players.
        RuntimeError: the simulated table produced an observation the referee refused (a bug).
    """
    if not 2 <= len(players) <= 4:
        raise ValueError(f"Carnival is for 2 to 4 players, got {len(players)}")
    game = _Game(seed, players, move_time_s, block_rate, unreadable_rate, referee or CarnivalReferee())
    yield from game.play(max_turns)


class SimulatedCarnivalTable:
    """:func:`carnival_game` as a scheduled source of the service loop.

    Args:
        players, seed, move_time_s, block_rate, unreadable_rate: as :func:`carnival_game`.
        start_t: session time (s) of ``game_start``; later observations keep their spacing.

    The loop calls :meth:`start` with its ``emit``, asks :meth:`next_time` (session seconds) and
    calls :meth:`advance` when that time has come; each due observation is emitted in order.
    """

    def __init__(
        self,
        players: Sequence[str] = DEFAULT_PLAYERS,
        seed: int = 1,
        move_time_s: float = 1.5,
        block_rate: float = 0.25,
        unreadable_rate: float = 0.05,
        start_t: float = 0.0,
        referee: Any = None,
    ):
        self.referee = referee
        self._args = (seed, tuple(players), move_time_s, block_rate, unreadable_rate)
        self._stream = carnival_game(*self._args)
        self._offset = start_t
        self._next: Observation | None = None
        self._emit: Any = None
        self._pull()

    def _pull(self) -> None:
        self._next = next(self._stream, None)

    def resume(self, state: Any, t: float) -> None:
        """Carry on a journaled game after a restart: the same seed gives the same game, so the
        observations that led to ``state`` (already journaled; found with the table's
        ``referee``) are skipped and the next one comes at session time ``t`` (s), the rest
        keeping their spacing.

        Raises:
            ValueError: ``state`` does not come from this seed's game.
        """
        from companion.games.carnival import CarnivalReferee
        from companion.sim.stream import applied_count

        referee = self.referee or CarnivalReferee()
        applied = applied_count(referee, carnival_game(*self._args), state)
        self._stream = carnival_game(*self._args)
        for _ in range(applied):
            next(self._stream, None)
        self._pull()
        if self._next is not None:
            self._offset = t - self._next.t

    def start(self, emit: Any, clock: Any) -> None:
        """Begin: observations go to ``emit``; the clock is not needed (times are scheduled)."""
        self._emit = emit

    def stop(self) -> None:
        """Stop playing: no further observation."""
        self._next = None

    def next_time(self) -> float | None:
        """Session time (s) of the next observation, or None at the end of the game."""
        return None if self._next is None else self._next.t + self._offset

    def advance(self, t: float) -> None:
        """Emit every observation due at or before ``t`` (seconds), in order."""
        while self._next is not None and self._next.t + self._offset <= t:
            obs = self._next
            if self._offset:
                obs = dataclasses.replace(obs, t=round(obs.t + self._offset, 6))
            if self._emit is not None:
                self._emit(obs)
            self._pull()
