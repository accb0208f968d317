"""A simulated Carrossel table: the observation stream of a whole legal game, from a seed.

The players are random but legal: each round every player picks a legal play (sometimes with a
won client's ability), each booth's player picks one of the scoring options, and the board is
turned the expected way, read by a simulated rotation source (``board_turned`` with a little
angle noise). Faults can be injected: a board turned the wrong way or by the wrong amount
(corrected afterwards), an uncertain reading, a slot card played on an occupied slot (then a
legal play). The same seed always gives the same stream.

It uses the rules engine as its oracle (what is legal, what must be chosen), so the stream is a
legal game by construction. :class:`SimulatedCarrosselTable` serves the stream as a source the
service loop schedules (``start``/``stop``, ``next_time``/``advance``, as the simulated
Carrousel table); it is not yet wired into ``companion run``.

Example::

    for obs in CarrosselSimulation(seed=3, players=("Ana", "Ben", "Cleo")).observations():
        print(obs.to_line())
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator, Sequence
from typing import Any

from companion.clock import Clock
from companion.events import Observation
from companion.games.carrossel import (
    ANIMALS,
    BoardTurned,
    CarrosselReferee,
    CarrosselState,
    Choose,
    GameStart,
    Play,
    PlayObserved,
    check_play,
    legal_plays,
    nominal_angle,
    placement,
)

__all__ = ["CarrosselSimulation", "SimulatedCarrosselTable", "generate_game"]


@dataclasses.dataclass
class CarrosselSimulation:
    """A seeded random legal game of Carrossel, as observations.

    Attributes:
        seed: the random seed (same seed, same stream).
        players: 2 to 4 names, seat order.
        ability_rate: chance (0-1) that a player with a usable client uses one in a round.
        wrong_turn_rate: chance (0-1) per rotation that the board is first turned wrongly.
        uncertain_rate: chance (0-1) per rotation of an uncertain reading first.
        illegal_play_rate: chance (0-1) per play that an occupied slot is tried first.
        angle_noise_deg: standard deviation of the simulated angle reading (degrees).
        play_time_s: mean seconds between two observations at the table.
        referee: the engine used as oracle (default: the shipped game data).
    """

    seed: int = 1
    players: Sequence[str] = ("Ana", "Ben", "Cleo", "Dev")
    ability_rate: float = 0.3
    wrong_turn_rate: float = 0.0
    uncertain_rate: float = 0.0
    illegal_play_rate: float = 0.0
    angle_noise_deg: float = 1.5
    play_time_s: float = 4.0
    referee: CarrosselReferee | None = None

    def observations(self) -> Iterator[Observation]:
        """Yield the observations of one whole game, start to final score, in time order."""
        ref = self.referee or CarrosselReferee()
        data = ref.data
        rng = random.Random(self.seed)
        t = 0.0

        def later() -> float:
            nonlocal t
            t = round(t + rng.expovariate(1.0 / self.play_time_s), 3)
            return t

        state = ref.initial_state()
        obs: Observation = GameStart(t=t, players=tuple(self.players), seed=rng.randrange(2**31))
        state, _ = ref.apply(state, obs)
        yield obs
        while not ref.is_over(state):
            batch: list[Observation] = []
            if state.phase == "play":
                for p in state.players:
                    if self.illegal_play_rate and rng.random() < self.illegal_play_rate:
                        wrong = self._occupied_slot_play(ref, state, p.name, rng)
                        if wrong is not None:
                            batch.append(wrong)
                    play = self._pick_play(ref, state, p.name, rng)
                    batch.append(
                        PlayObserved(
                            t=0.0,
                            player=play.player,
                            slot=play.slot,
                            animals=play.animals,
                            ability=play.ability,
                            ticket=play.ticket,
                        )
                    )
            elif state.phase == "score":
                for pp in state.pending:
                    if pp.chosen is None:
                        batch.append(
                            Choose(t=0.0, player=pp.player, option=rng.randint(1, len(pp.options)))
                        )
            elif state.phase == "rotate":
                start = nominal_angle(data, state)
                step = (
                    180.0 if len(state.players) == 2 else data.boards[state.side].step_deg
                ) * state.direction
                if self.uncertain_rate and rng.random() < self.uncertain_rate:
                    batch.append(
                        BoardTurned(t=0.0, angle_deg=(start + step / 2) % 360, uncertain=True)
                    )
                if self.wrong_turn_rate and rng.random() < self.wrong_turn_rate:
                    wrong = -step if len(state.players) != 2 and rng.random() < 0.5 else step * 2
                    if wrong % 360 == 0:
                        wrong = step / 2
                    batch.append(BoardTurned(t=0.0, angle_deg=self._reading(start + wrong, rng)))
                batch.append(BoardTurned(t=0.0, angle_deg=self._reading(start + step, rng)))
            else:  # pragma: no cover - the engine has no other live phase
                raise RuntimeError(f"unexpected phase {state.phase}")
            for o in batch:
                o = dataclasses.replace(o, t=later())
                state, _ = ref.apply(state, o)
                yield o

    def _reading(self, angle: float, rng: random.Random) -> float:
        return round((angle + rng.gauss(0.0, self.angle_noise_deg)) % 360.0, 2)

    def _pick_play(
        self, ref: CarrosselReferee, state: CarrosselState, player: str, rng: random.Random
    ) -> Play:
        """A random legal play: an ability now and then, a slot, tiles the player has."""
        data = ref.data
        p = state.player(player)
        assert p is not None
        usable = [c for c in p.usable if data.clients[c].animal != "dragon"]
        abilities: list[int | None] = [None]
        if usable and rng.random() < self.ability_rate:
            abilities.insert(0, rng.choice(usable))
        n = 2 if len(state.players) == 2 else 1
        have = [a for a in ANIMALS for _ in range(p.tiles[ANIMALS.index(a)])]
        for ability in abilities:
            slots = list(p.slots)
            rng.shuffle(slots)
            for slot in slots:
                for _ in range(4):
                    animals = tuple(rng.sample(have, n)) if len(have) >= n else ()
                    play = Play(player, slot, animals, ability)
                    if check_play(data, state, play) is None:
                        return play
        plays = legal_plays(data, state, player)
        assert plays, f"{player} has no legal play, yet the round started"
        return rng.choice(plays)

    def _occupied_slot_play(
        self, ref: CarrosselReferee, state: CarrosselState, player: str, rng: random.Random
    ) -> PlayObserved | None:
        """A play on an occupied slot without Jump (an illegal play), if the player has one."""
        p = state.player(player)
        assert p is not None
        bad = [s for s in p.slots if isinstance(placement(ref.data, state, player, s, False), str)]
        have = [a for a in ANIMALS if p.has_tile(a)]
        if not bad or not have:
            return None
        n = 2 if len(state.players) == 2 else 1
        return PlayObserved(
            t=0.0, player=player, slot=rng.choice(bad), animals=(rng.choice(have),) * n
        )


def generate_game(
    seed: int, players: Sequence[str] = ("Ana", "Ben", "Cleo", "Dev"), **options: float
) -> list[Observation]:
    """The observations of one whole simulated game (see :class:`CarrosselSimulation`)."""
    return list(CarrosselSimulation(seed=seed, players=players, **options).observations())  # type: ignore[arg-type]


class SimulatedCarrosselTable:
    """The simulated Carrossel table as a scheduled source for the service loop.

    It emits the observations of one :class:`CarrosselSimulation` game at their times, shifted
    to start at the clock's time when started. Time is scheduled, not slept: the loop asks
    :meth:`next_time` and calls :meth:`advance`. After a restart, :meth:`resume` skips what
    the journal already holds and carries on the same seeded game.

    Args:
        seed, players, and the fault rates: as :class:`CarrosselSimulation`.
    """

    def __init__(
        self,
        seed: int = 1,
        players: Sequence[str] = ("Ana", "Ben", "Cleo", "Dev"),
        referee: Any = None,
        **options: float,
    ):
        self.referee = referee
        self.simulation = CarrosselSimulation(seed=seed, players=players, **options)  # type: ignore[arg-type]
        self._queue: list[Observation] = []
        self._emit = None
        self._skip = 0
        self._resume_at: float | None = None

    def resume(self, state: Any, t: float) -> None:
        """Carry on a journaled game after a restart: the same seed gives the same game, so
        the observations that led to ``state`` (already journaled; found with the table's
        ``referee``) are skipped and the next one comes at session time ``t`` (s), the rest
        keeping their spacing.

        Raises:
            ValueError: ``state`` does not come from this seed's game.
        """
        from companion.games.carrossel import CarrosselReferee
        from companion.sim.stream import applied_count

        referee = self.referee or CarrosselReferee()
        self._skip = applied_count(referee, self.simulation.observations(), state)
        self._resume_at = t

    def start(self, emit, clock: Clock) -> None:  # type: ignore[no-untyped-def]
        """Begin: the game's observations go to ``emit``, the first at ``clock.now()``."""
        observations = list(self.simulation.observations())[self._skip :]
        origin = clock.now() if self._resume_at is None else self._resume_at
        shift = origin - (observations[0].t if observations and self._resume_at is not None else 0.0)
        self._emit = emit
        self._queue = [dataclasses.replace(o, t=round(o.t + shift, 6)) for o in observations]
        self._queue.reverse()  # pop from the end

    def stop(self) -> None:
        """Stop: nothing more is emitted; safe to call twice."""
        self._queue = []

    def next_time(self) -> float | None:
        """Session time (s) of the next observation, or None when the game is over."""
        return self._queue[-1].t if self._queue else None

    def advance(self, t: float) -> None:
        """Emit every observation due at or before ``t`` (s), in time order."""
        while self._queue and self._queue[-1].t <= t:
            obs = self._queue.pop()
            if self._emit is not None:
                self._emit(obs)
