"""A simulated Monsieur Carrousel table: a die, a carousel that spins, and small kids who
listen to the prompts and press YES or NO.

Like OctoPrint's virtual printer, it is a backend of the same interfaces as the real table, not
a test stub: it is a :class:`companion.sources.Source` (it emits the observations the camera,
the rotation reader and the buttons would: ``game_start``, ``die_rolled``, ``kid_seated``,
``seats_seen``, ``spin_started``, ``spin_stopped``, ``answer``) and it listens to the referee's
calls as an announcer does (``announce``), the way kids listen to the spoken prompts. Every
random draw comes from one ``random.Random(seed)``: the same seed plays the same game.

The physical model (units: degrees counter-clockwise, seconds):

* the die is fair over the 6 colours of ``calibration/monsieur_carrousel.toml``;
* a spin turns the carousel by ``revolutions`` turns, drawn uniformly in [1.05, 3.5] (or in
  [0.3, 0.95] with probability ``short_spin_rate``: a child who stops too early), in a random
  direction; it takes ``spin_s_per_rev`` seconds per turn; the carousel's angle at rest is
  where the turn leaves it, so the stop angle is spread over the whole circle;
* the kids remember the seat of a kid with probability ``memory`` (by default from the disc
  side's difficulty), and see a sunbeam fragment fit with probability ``fit_rate``.

Faults to inject (probabilities per event): ``unreadable_die_rate`` (the reader sees two
colours), ``both_buttons_rate`` (YES and NO together), ``stuck_spin_rate`` (a spin that starts
and never reports a stop), ``misread_seats_rate`` (the camera sees a kid on an empty seat).

:func:`simulate` plays a whole game against a referee without threads or a clock (tests, the
benchmark, demonstrations). In the service the table is a scheduled source: the loop asks
:meth:`MonsieurCarrouselTable.next_time` and calls :meth:`MonsieurCarrouselTable.advance`;
time is scheduled, never slept.
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import random
from collections.abc import Sequence
from typing import Any

from companion.clock import Clock
from companion.sources import Emit
from companion.events import Call, Observation, Tick
from companion.games.monsieur_carrousel import (
    Answer,
    DieRolled,
    GameStart,
    KidSeated,
    SeatsSeen,
    SpinStarted,
    SpinStopped,
    TableData,
    load_table,
)

__all__ = [
    "SimSettings",
    "MonsieurCarrouselTable",
    "simulate",
    "SimResult",
    "MEMORY_BY_DIFFICULTY",
    "settings_from_config",
]

#: Assumed chance that a kid of four remembers a seat, by disc side difficulty.
MEMORY_BY_DIFFICULTY = {"easy": 0.85, "medium": 0.7, "hard": 0.55}


@dataclasses.dataclass(frozen=True)
class SimSettings:
    """How the simulated table behaves.

    Attributes:
        seed: seed of every random draw.
        players: names, clockwise, first player first.
        layout: disc side in the carousel (``1A``-``6B``).
        seat_by: ``camera`` (the camera reports ``kid_seated`` and ``seats_seen``) or
            ``button`` (no camera: the kids press YES once the kid sits on the suggested seat).
        memory: chance that the kids remember a seat; None = by the layout's difficulty.
        fit_rate: chance that a fragment completes the sunbeam.
        think_s: mean seconds a child takes to roll, seat a kid or press a button after a
            prompt (spoken prompts last 1-5 s, so the children wait for them).
        spin_s_per_rev: seconds per turn of the carousel.
        short_spin_rate, unreadable_die_rate, both_buttons_rate, stuck_spin_rate,
        misread_seats_rate: fault probabilities (see the module doc).
    """

    seed: int = 1
    players: tuple[str, ...] = ("Ana", "Ben", "Cleo")
    layout: str = "1A"
    seat_by: str = "camera"
    memory: float | None = None
    fit_rate: float = 0.5
    think_s: float = 4.0
    spin_s_per_rev: float = 1.5
    short_spin_rate: float = 0.1
    unreadable_die_rate: float = 0.03
    both_buttons_rate: float = 0.02
    stuck_spin_rate: float = 0.0
    misread_seats_rate: float = 0.0

    def __post_init__(self) -> None:
        for name in ("fit_rate", "short_spin_rate", "unreadable_die_rate", "both_buttons_rate",
                     "stuck_spin_rate", "misread_seats_rate"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name}: expected a probability 0-1, got {getattr(self, name)}")
        if self.memory is not None and not 0.0 <= self.memory <= 1.0:
            raise ValueError(f"memory: expected a probability 0-1, got {self.memory}")
        if self.seat_by not in ("camera", "button"):
            raise ValueError(f"seat_by: expected 'camera' or 'button', got {self.seat_by!r}")


def settings_from_config(config: Any) -> SimSettings:
    """Simulated-table settings from the configuration: ``[monsieur_carrousel_sim]``, the seed
    of ``[sim]``, the names of ``[players]`` and the disc side of ``[monsieur_carrousel]``."""
    section = dict(config["monsieur_carrousel_sim"])
    memory = section.pop("memory")
    return SimSettings(
        seed=config["sim"]["seed"],
        players=tuple(config["players"]["names"]),
        layout=config["monsieur_carrousel"]["layout"],
        memory=None if memory < 0 else memory,
        **section,
    )


class MonsieurCarrouselTable:
    """The simulated table (a Source that also listens to calls).

    Args:
        settings: behaviour and faults.
        table: the seat layouts data (default: the shipped file).

    Raises:
        ValueError: an unknown layout.
    """

    #: A simulated table plans its next move from the restored state (its resume): the calls a
    #: resumed game says again (:class:`~companion.service.Service` ``restate``) are for people.
    hears_again = False

    def __init__(self, settings: SimSettings = SimSettings(), table: TableData | None = None):
        self.settings = settings
        self.table = table or load_table()
        if settings.layout not in self.table.layouts:
            raise ValueError(f"unknown layout {settings.layout!r} (known: {', '.join(self.table.layouts)})")
        self.layout = self.table.layouts[settings.layout]
        self.memory = settings.memory if settings.memory is not None else MEMORY_BY_DIFFICULTY[self.layout.difficulty]
        self.rng = random.Random(settings.seed)
        self.angle_deg = self.rng.uniform(0.0, 360.0)  # where the carousel stands (physical truth)
        #: a :class:`companion.sim.shaft.ShaftSpins`: spins made by the simulated encoder's
        #: physics and reported by the rotation tracker; None: the table reports its spins.
        self.shaft: Any = None
        self.occupied: dict[int, str] = {}  # seat -> kid, what is really on the carousel
        self.over = False
        self._meant = True  # what the kids meant by their last answer
        # the Source side (a ScheduledSource: the service loop times it)
        self._pending: list[tuple[float, int, Observation]] = []
        self._seq = itertools.count()
        self._emit: Emit | None = None
        self._resumed = False

    # -- the pure part: what the table does in answer to a call ---------------------------

    def opening(self, t: float = 0.0) -> list[Observation]:
        """The first observation: the players sit down with the chosen disc side."""
        return [GameStart(t=t, players=tuple(self.settings.players), layout=self.layout.name)]

    def react(self, call: Any, t: float) -> list[Observation]:
        """The observations that follow a call (each with its own future time ``t``, to the
        millisecond)."""
        return [dataclasses.replace(o, t=round(o.t, 3)) for o in self._react(call, t)]

    def _react(self, call: Any, t: float) -> list[Observation]:
        s = self.settings
        rng = self.rng
        kind = call.type
        if self.over:
            return []
        if kind in ("game_won", "game_lost"):
            self.over = True
            self._pending.clear()  # the children stop playing
            return []
        if kind in ("turn", "roll_again", "twins_help"):
            t1 = t + s.think_s * rng.uniform(0.5, 1.5)
            if rng.random() < s.unreadable_die_rate:
                return [DieRolled(t=t1, colour="unknown")]
            return [DieRolled(t=t1, colour=rng.choice(self.table.die_colours))]
        if kind == "seat_kid":
            t1 = t + s.think_s * rng.uniform(0.5, 1.5)
            seats: Sequence[int] = call.seats  # type: ignore[attr-defined]
            kid: str = call.kid  # type: ignore[attr-defined]
            if s.seat_by == "button":
                self.occupied[seats[0]] = kid
                return [self._answer(t1, True)]
            seat = rng.choice(list(seats))
            self.occupied[seat] = kid
            out: list[Observation] = [KidSeated(t=t1, seat=seat, kid=kid)]
            seen = set(self.occupied)
            if rng.random() < s.misread_seats_rate:
                seen.add(rng.choice([i for i in range(len(self.layout.seats)) if i not in self.occupied] or [seat]))
            out.append(SeatsSeen(t=t1 + 0.1, occupied=tuple(sorted(seen))))
            return out
        if kind in ("spin", "spin_again"):
            return self._spin(t + s.think_s * rng.uniform(0.3, 1.0))
        if kind == "memory_guess":
            return [self._answer(t + s.think_s * rng.uniform(1.0, 3.0), rng.random() < self.memory)]
        if kind == "sunbeam_fragment" and call.ask:  # type: ignore[attr-defined]
            return [self._answer(t + s.think_s * rng.uniform(1.0, 2.0), rng.random() < s.fit_rate)]
        if kind == "answer_again":
            # the kids press again, only one button this time, meaning what they meant
            return [self._answer(t + s.think_s, self._meant, faults=False)]
        return []

    def _answer(self, t: float, yes: bool, faults: bool = True) -> Answer:
        self._meant = yes
        if faults and self.rng.random() < self.settings.both_buttons_rate:
            return Answer(t=t, value="both")
        return Answer(t=t, value="yes" if yes else "no")

    def _spin(self, t: float) -> list[Observation]:
        s = self.settings
        rng = self.rng
        direction = rng.choice((1, -1))
        if rng.random() < s.short_spin_rate:
            revolutions = rng.uniform(0.3, 0.95)
        else:
            revolutions = rng.uniform(1.05, 3.5)
        started = SpinStarted(t=t, angle_deg=round(self.angle_deg, 3), direction="ccw" if direction > 0 else "cw")
        jammed = rng.random() < s.stuck_spin_rate
        if self.shaft is not None:  # the spin is made by the simulated shaft's physics
            self.shaft.expect(None if jammed else revolutions, "ccw" if direction > 0 else "cw")
        if jammed:
            return [started]  # the carousel jams: no stop is ever reported
        self.angle_deg = (self.angle_deg + direction * revolutions * 360.0) % 360.0
        stop_t = t + revolutions * s.spin_s_per_rev
        return [started, SpinStopped(t=stop_t, angle_deg=round(self.angle_deg, 3),
                                     revolutions=round(revolutions, 4), direction="ccw" if direction > 0 else "cw")]

    # -- the Source side: the same table on the service's clock ----------------------------

    def start(self, emit: Emit, clock: Clock) -> None:
        """Begin (Source protocol): observations go to ``emit``; the game starts at
        ``clock.now()`` unless :meth:`resume` was called."""
        self._emit = self.shaft.wrap(emit) if self.shaft is not None else emit
        if not self._resumed:
            self._schedule(self.opening(clock.now()))

    def stop(self) -> None:
        """Stop emitting; safe to call twice."""
        self._emit = None

    def next_time(self) -> float | None:
        """Session time (s) of the table's next action, or None (ScheduledSource protocol)."""
        return self._pending[0][0] if self._pending else None

    def advance(self, t: float) -> None:
        """Emit every observation due at or before ``t`` (s), in time order."""
        while self._pending and self._pending[0][0] <= t:
            _, _, obs = heapq.heappop(self._pending)
            if self._emit is not None:
                self._emit(obs)

    def announce(self, call: Call, summary: Any = None) -> None:
        """Hear a call (Announcer protocol) and schedule the table's answer; never blocks."""
        self._schedule(self.react(call, call.t))

    def close(self) -> None:
        """Nothing to release."""

    def resume(self, state: Any, t: float) -> None:
        """Continue a journaled game: take the kids' seats from the engine's ``state`` and
        do what its phase waits for, from session time ``t`` (s)."""
        self._resumed = True
        self.occupied = {i: k for i, k in enumerate(state.seats) if k is not None}
        phase = state.phase
        if phase == "roll":
            self._schedule(self.react(_Cue("turn"), t))
        elif phase == "seat":
            self._schedule(self.react(_Cue("seat_kid", seats=state.choices, kid=state.kid or ""), t))
        elif phase in ("spin_weather", "spin_finger"):
            self._schedule(self.react(_Cue("spin"), t))
        elif phase == "memory":
            self._schedule(self.react(_Cue("memory_guess"), t))
        elif phase == "sunbeam":
            self._schedule(self.react(_Cue("sunbeam_fragment", ask=True), t))

    def _schedule(self, observations: Sequence[Observation]) -> None:
        for obs in observations:
            heapq.heappush(self._pending, (obs.t, next(self._seq), obs))


class _Cue:
    """A stand-in for a call when resuming: just its type and the fields :meth:`react` reads."""

    def __init__(self, type: str, **fields: Any):
        self.type = type
        self.__dict__.update(fields)


@dataclasses.dataclass
class SimResult:
    """A simulated game: every observation and call in order, and the final state."""

    observations: list[Observation]
    calls: list[Call]
    state: Any
    result: str | None


def simulate(referee: Any, settings: SimSettings = SimSettings(), max_steps: int = 5000) -> SimResult:
    """Play a whole game of the simulated table against ``referee``, in simulated time,
    without threads: observations are applied in time order, and a ``tick`` is sent at each
    deadline the referee asks for (a spin that never stops).

    Raises:
        RuntimeError: the game has not ended after ``max_steps`` observations.
    """
    sim = MonsieurCarrouselTable(settings, referee.table)
    state = referee.initial_state()
    heap: list[tuple[float, int, Observation]] = []
    seq = itertools.count()
    for obs in sim.opening(0.0):
        heapq.heappush(heap, (obs.t, next(seq), obs))
    observations: list[Observation] = []
    calls: list[Call] = []
    for _ in range(max_steps):
        if referee.is_over(state):
            break
        deadline = referee.next_deadline(state)
        if heap and (deadline is None or heap[0][0] <= deadline):
            _, _, obs = heapq.heappop(heap)
        elif deadline is not None:
            obs = Tick(t=deadline)
        else:
            raise RuntimeError("the simulated table has nothing more to do and the game is not over")
        observations.append(obs)
        state, new_calls = referee.apply(state, obs)
        for call in new_calls:
            calls.append(call)
            for reply in sim.react(call, call.t):
                heapq.heappush(heap, (reply.t, next(seq), reply))
    else:
        raise RuntimeError(f"the game did not end within {max_steps} observations")
    return SimResult(observations, calls, state, state.result)
