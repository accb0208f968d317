"""The simulated Carrousel table: seeded players who race for their cards at human pace.

A backend like any other (OctoPrint's virtual printer is the model): it sets up the horses,
sends ``game_start`` and ``board`` readings as the camera reader would, and presses the players'
claim buttons - through the real gpiozero ``Button`` objects on mock pins when the service has
them, so the whole loop runs as on a table. The players:

* take turns at human pace (``move_time_s`` on average, each move at least 0.3 s), the player
  closest to their card moving first; each move is the first of a shortest sequence of legal
  moves to their card (breadth-first search over the 840 positions);
* press their claim button 0.3-0.9 s after the first three match their card;
* now and then make an illegal move (``illegal_rate``: three horses rotated), claim wrongly
  (``false_claim_rate``), or stall after a point (``stall_rate``) until the dead end is called,
  when one of them moves the last horse to the front (or, one time in ten, forgets and makes
  another move).

Everything is drawn from ``random.Random(seed)``: the same seed and the same calls give the same
game. Time is scheduled, not slept: the service loop asks :meth:`next_time` and calls
:meth:`advance`.
"""

from __future__ import annotations

import heapq
import itertools
import random
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from companion.clock import Clock
from companion.events import Call
from companion.games.carrousel import (
    COLOURS,
    VOCABULARY,
    Board,
    Card,
    Claim,
    GameStart,
    Move,
    Position,
    classify,
)
from companion.sources import Emit

__all__ = ["SimulatedCarrouselTable", "shortest_path"]


@lru_cache(maxsize=65536)
def shortest_path(spaces: tuple[str, ...], card: Card) -> tuple[Move, ...]:
    """A shortest sequence of legal moves from ``spaces`` to a position whose first three are
    ``card`` (empty when already there). Breadth-first search; at most 3 moves are ever needed
    in practice, so the search stays small."""
    start = Position(spaces)
    if start.first_three == card:
        return ()
    seen = {spaces}
    queue: deque[tuple[Position, tuple[Move, ...]]] = deque([(start, ())])
    while queue:
        pos, path = queue.popleft()
        for move in pos.legal_moves():
            nxt = pos.apply(move)
            if nxt.spaces in seen:
                continue
            if nxt.first_three == card:
                return path + (move,)
            seen.add(nxt.spaces)
            queue.append((nxt, path + (move,)))
    raise ValueError(f"no way from {start} to {card}")  # cannot happen: the graph is connected


class SimulatedCarrouselTable:
    """Simulated players and horses: a source of ``game_start``, ``board`` and ``claim``
    observations, and a listener of the referee's calls.

    Args:
        players: names in seat order (2-4).
        seed: seeds the starting position, the deck and every decision.
        move_time_s: mean seconds a move takes (each at least 0.3 s).
        illegal_rate: chance (0-1) that a move is illegal.
        false_claim_rate: chance (0-1) after each move that someone claims wrongly.
        stall_rate: chance (0-1) after each point that nobody moves until the dead end.
        dead_end_s: seconds of the dead end, sent in ``game_start``.
        advanced: the advanced rules, sent in ``game_start``.
        press: ``press(seat)`` (1-based) pushes a real claim button (mock pin); None emits
            ``claim`` observations directly.
        start_t: session time (s) of ``game_start``.
        camera: a simulated camera (:class:`companion.vision.sim.SimulatedCamera`): the horses
            and cards are then shown to it (``set_table``) and the referee learns them only
            from the rendered frames; None: ``board`` observations are sent directly.
        seats: with a camera, each player's seat at the table (``south``...), in seat order.
        camera_latency_s: with a camera, how long the reading takes to settle; the players
            do not move again before the camera can have seen their last move (they press
            their buttons as fast as they like: the service's jitter buffer takes care).
    """

    #: A simulated table plans its next move from the restored state (its resume): the calls a
    #: resumed game says again (:class:`~companion.service.Service` ``restate``) are for people.
    hears_again = False

    def __init__(
        self,
        players: Sequence[str],
        seed: int = 1,
        move_time_s: float = 1.5,
        illegal_rate: float = 0.05,
        false_claim_rate: float = 0.04,
        stall_rate: float = 0.08,
        dead_end_s: float = 20.0,
        advanced: bool = False,
        press: Callable[[int], None] | None = None,
        start_t: float = 0.0,
        camera: Any = None,
        seats: Sequence[str] = (),
        camera_latency_s: float = 0.0,
    ):
        self.players = list(players)
        self.seed = seed
        self.rng = random.Random(seed)
        self.move_time_s = move_time_s
        self.illegal_rate = illegal_rate
        self.false_claim_rate = false_claim_rate
        self.stall_rate = stall_rate
        self.dead_end_s = dead_end_s
        self.advanced = advanced
        self.press = press
        self.camera = camera
        self.seats = list(seats)
        self.camera_latency_s = camera_latency_s
        line = list(COLOURS)
        self.rng.shuffle(line)
        self.position = Position.from_line(line, first_space=self.rng.randrange(7))
        self.cards: dict[str, Card | None] = {}
        self.stalled = False
        self.over = False
        self._emit: Emit | None = None
        self._clock: Clock | None = None
        self._queue: list[tuple[float, int, str, Any]] = []
        self._seq = itertools.count()
        self._schedule(start_t, "start", None)

    # -- resuming a journaled game -------------------------------------------------------

    def resume(self, state: Any, t: float) -> None:
        """Carry on a game restored from the journal (``state``, the referee's, with the
        observations still pending applied: :meth:`companion.service.Opened.table_state`):
        the horses stand as last read, the cards as the referee tracks them, and the camera
        is shown that table from its first frame (never the horses or cards of before the
        last point); play goes on at ``t`` (s).

        The decisions after ``t`` come from a fresh stream fixed by the seed and ``t``: the
        random stream of the first run is not replayed, so the game goes on differently from
        an uninterrupted one (every call still follows from what the camera sees)."""
        if state.position is None:
            return  # the game had not started: the table starts it as usual
        self.position = state.position
        self.cards = {p.name: p.active for p in state.players}
        self.over = state.phase == "over"
        self._queue.clear()
        if self.camera is not None:
            self.camera.set_table(spaces=self.position.spaces, cards=self._seat_cards())
        # A different stream of decisions after a restart, still fixed by the seed.
        self.rng = random.Random(f"{self.seed}:{t:.3f}")
        if not self.over:
            self._schedule(t + 0.5, "think", None)

    # -- Source -------------------------------------------------------------------------

    def start(self, emit: Emit, clock: Clock) -> None:
        """Begin: observations go to ``emit``; claim times come from ``clock``."""
        self._emit = emit
        self._clock = clock

    def stop(self) -> None:
        """Stop playing (pending actions are dropped)."""
        self._queue.clear()
        self.over = True

    def next_time(self) -> float | None:
        """Session time (s) of the next scheduled action, or None when there is none."""
        return self._queue[0][0] if self._queue else None

    def advance(self, t: float) -> None:
        """Perform every action due at or before ``t`` (seconds), in time order."""
        while self._queue and self._queue[0][0] <= t:
            at, _, action, arg = heapq.heappop(self._queue)
            getattr(self, "_do_" + action)(at, arg)

    # -- Announcer (the referee's calls come back to the players) ----------------------

    def announce(self, call: Call, summary: Mapping[str, Any]) -> None:
        """Learn the cards from the referee and react to dead ends and the end of the game.

        Only the referee's own calls (:data:`companion.games.carrousel.VOCABULARY`) move the
        cards: a call of the service (a part lost or back, a pause) carries the summary of the
        moment it is told, which after a restart can be the journaled state before the
        pending observations (the cards before a point): the camera must not be shown those."""
        if "cards" in summary and call.TYPE in VOCABULARY.calls:
            self.cards = dict(summary["cards"])
            if self.camera is not None:
                self.camera.set_table(cards=self._seat_cards())
        kind = call.TYPE
        if kind in ("point", "lucky_bird"):
            scorer = getattr(call, "player", None)
            # A player who has just scored does not press for the same card again.
            self._queue = [q for q in self._queue if not (q[2] == "press" and q[3] == scorer)]
            heapq.heapify(self._queue)
            if self.rng.random() < self.stall_rate:
                self.stalled = True  # everybody stares at the horses until the dead end
        elif kind == "dead_end":
            self.stalled = False
            self._drop("think")
            self._schedule(call.t + self._between(0.5, 1.5), "correct", None)
        elif kind == "winner":
            self.over = True
            self._queue.clear()

    def close(self) -> None:
        """Nothing to release."""

    # -- actions --------------------------------------------------------------------------

    def _schedule(self, t: float, action: str, arg: Any) -> None:
        heapq.heappush(self._queue, (t, next(self._seq), action, arg))

    def _seat_cards(self) -> dict[str, Card]:
        """The card in front of each seat (``{seat: card}``), for the camera."""
        return {seat: card for seat, p in zip(self.seats, self.players) if (card := self.cards.get(p)) is not None}

    def _drop(self, action: str) -> None:
        self._queue = [q for q in self._queue if q[2] != action]
        heapq.heapify(self._queue)

    def _between(self, lo: float, hi: float) -> float:
        return round(self.rng.uniform(lo, hi), 3)

    def _move_time(self) -> float:
        # With a camera, a move only after the last one can have settled in its reading.
        least = max(0.3, self.camera_latency_s + 0.2)
        return round(max(least, self.rng.expovariate(1.0 / self.move_time_s)), 3)

    def _send(self, observation: Any) -> None:
        if self._emit is not None:
            self._emit(observation)

    def _do_start(self, t: float, _: Any) -> None:
        if self.camera is not None:
            self.camera.set_table(spaces=self.position.spaces)
        self._send(
            GameStart(
                t=t,
                players=tuple(self.players),
                spaces=self.position.spaces,
                seed=self.seed,
                advanced=self.advanced,
                dead_end_s=self.dead_end_s,
            )
        )
        self._schedule(t + self._move_time(), "think", None)

    def _do_think(self, t: float, _: Any) -> None:
        if self.over or self.stalled:
            return
        if self.rng.random() < self.illegal_rate:
            self._set_position(t, self._illegal(self.position))
        else:
            mover = self._fastest_player()
            card = self.cards.get(mover)
            path = shortest_path(self.position.spaces, card) if card else ()
            move = path[0] if path else self.rng.choice(self.position.legal_moves())
            self._set_position(t, self.position.apply(move))
        self._after_move(t)

    def _do_correct(self, t: float, _: Any) -> None:
        if self.over:
            return
        if self.rng.random() < 0.9:
            last = self.position.line[-1]
            self._set_position(t, self.position.apply(Move("last_to_front", (last,))))
        else:
            self._set_position(t, self.position.apply(self.rng.choice(self.position.legal_moves())))
        self._after_move(t)

    def _do_press(self, t: float, player: str) -> None:
        if self.over:
            return
        if self.press is not None:
            self.press(self.players.index(player) + 1)
        else:
            self._send(Claim(t=t, player=player))

    def _after_move(self, t: float) -> None:
        """Whoever sees their card presses; sometimes someone presses wrongly; play goes on."""
        seen = self.position.first_three
        matching = [p for p in self.players if self.cards.get(p) == seen]
        wait = self._move_time()
        for p in matching:
            press_at = t + self._between(0.3, 0.9)
            self._schedule(press_at, "press", p)
            wait = max(wait, press_at - t + 0.2)
        if not matching and self.rng.random() < self.false_claim_rate:
            self._schedule(t + self._between(0.2, 0.8), "press", self.rng.choice(self.players))
        self._schedule(t + wait, "think", None)

    def _set_position(self, t: float, position: Position) -> None:
        self.position = position
        if self.camera is not None:
            self.camera.set_table(spaces=position.spaces)  # the referee must see it itself
        else:
            self._send(Board(t=t, spaces=position.spaces))

    def _fastest_player(self) -> str:
        """Mostly the player nearest their card; sometimes anyone (a slower grab)."""
        if self.rng.random() < 0.3:
            return self.rng.choice(self.players)
        best = []
        best_len = 99
        for p in self.players:
            card = self.cards.get(p)
            if card is None:
                continue
            n = len(shortest_path(self.position.spaces, card))
            if n == 0:
                continue  # already matching: they are busy pressing
            if n < best_len:
                best, best_len = [p], n
            elif n == best_len:
                best.append(p)
        return self.rng.choice(best or self.players)

    def _illegal(self, position: Position) -> Position:
        """Three horses rotated among their spaces: never one move of the rulebook."""
        spaces = list(position.spaces)
        horses = [i for i, s in enumerate(spaces) if s in COLOURS]
        a, b, c = self.rng.sample(horses, 3)
        spaces[a], spaces[b], spaces[c] = spaces[c], spaces[a], spaces[b]
        after = Position(tuple(spaces))
        assert classify(position, after) is None
        return after
