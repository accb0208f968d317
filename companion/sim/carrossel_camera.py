"""The simulated Carrossel table seen through the simulated camera: the referee learns the board's
turns and the plays from rendered frames alone.

It plays the same seeded legal game as :class:`~companion.sim.carrossel.CarrosselSimulation`,
but tells the referee only what players tell at a real table with a camera: ``game_start`` and
the scoring choices are entries, and so is a play with an ability (the camera cannot see the
client card used). Everything else happens on the table the camera films
(:class:`~companion.vision.sim_carrossel.SimulatedCarrosselCamera`): at each reveal the tiles
are laid on their cells (a hand over each first), clients sit down on tiles as standees, the
board is turned (frames taken while it turns are blurred) to the angle the game's stream says.
The camera source reads the plays and the turns from the frames.

The table waits for the referee where a player at a real table would: after a reveal until the
referee has revealed, after a turn until it has judged the turn; then the stream goes on with
its own spacing. A game resumed after a restart goes on once the camera has seen the board at
rest (:meth:`CameraCarrosselTable.camera_at_rest`, the camera source's ``on_rest``): the camera
takes its first angle at rest as the angle the referee expects, so a board turned before the
camera has seen it standing would be taken as not turned and the game would wait for a turn
that was made. Its ``truth`` is the stream: the calls the referee makes from the camera can be
compared with the calls of the stream applied directly (``tests/test_carrossel_camera_run.py``).

Angles: the stream's ``board_turned.angle_deg`` (clockwise from setup) is drawn at the camera
angle ``setup_ccw_deg - angle`` (counter-clockwise, the reader's); ``setup_ccw_deg`` = 270 puts
sector A in front of the south booth at setup.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from companion.clock import Clock
from companion.events import Observation

__all__ = ["CameraCarrosselTable"]


@dataclasses.dataclass
class _Step:
    kind: str  # "entry", "camera_play", "turn"
    obs: Observation
    gap_s: float  # seconds after the step before it
    tiles: dict[str, tuple[str, str, bool]] | None  # the table after this step (None: unchanged)
    revealed: bool = False


class CameraCarrosselTable:
    """A scheduled source (entries) and announcer (it waits for the referee) that lays the
    simulated game out on the simulated camera's table.

    Args:
        camera: the :class:`~companion.vision.sim_carrossel.SimulatedCarrosselCamera` to lay out.
        seed, players: the game (as :class:`~companion.sim.carrossel.CarrosselSimulation`).
        referee: the engine used as oracle (default: the shipped game data).
        play_time_s: mean seconds between two things the players do.
        turn_s: seconds a turn of the board takes (frames meanwhile are blurred).
        place_s: seconds a hand hovers over a cell before its tile lies there.
        setup_ccw_deg: the camera angle (degrees CCW) of the board at setup.
        enter_plain_plays: also enter plays without an ability by hand (the camera then checks them).
        start_t: session time (s) of the game's start.
        wait_s: how long (s) the players wait for the referee to see a reveal or a turn before
            they enter what the camera did not read (counted in ``fallbacks``).
    """

    #: A simulated table plans its next move from the restored state (its resume): the calls a
    #: resumed game says again (:class:`~companion.service.Service` ``restate``) are for people.
    hears_again = False

    def __init__(self, camera: Any, seed: int = 1, players: Sequence[str] = ("Ana", "Ben", "Cleo", "Dev"),
                 referee: Any = None, play_time_s: float = 4.0, turn_s: float = 1.2, place_s: float = 0.6,
                 setup_ccw_deg: float = 270.0, enter_plain_plays: bool = False, start_t: float = 0.0,
                 wait_s: float = 20.0):
        from companion.games.carrossel import CarrosselReferee
        from companion.sim.carrossel import CarrosselSimulation

        self.camera = camera
        self.referee = referee or CarrosselReferee()
        self.simulation = CarrosselSimulation(seed=seed, players=tuple(players), referee=self.referee,
                                              play_time_s=play_time_s)
        self.turn_s, self.place_s, self.setup_ccw_deg = turn_s, place_s, setup_ccw_deg
        self.enter_plain_plays = enter_plain_plays
        self.steps = self._steps()
        self.truth: list[Observation] = [s.obs for s in self.steps]
        self._i = 0
        self._due: float | None = start_t
        self._gate: tuple[str, ...] = ()
        self._gate_deadline: float | None = None
        self._pending: list[Observation] = []  # what the camera should read before the gate opens
        #: observations entered by hand because the camera had not read them within ``wait_s``
        self.fallbacks: list[Observation] = []
        self.wait_s = wait_s
        self._table: list[tuple[float, dict[str, Any]]] = []  # (t, set_table kwargs), in time order
        self._emit: Any = None
        self._angle_cw = 0.0
        self._camera_ready = True  # False after a resume until the camera has seen the board at rest
        self._camera_deadline: float | None = None
        self._missing: list[Observation] = []  # a resumed reveal's plays not yet journaled
        camera.set_table(board_angle_deg=setup_ccw_deg, tiles={}, hands=(), moving=False)

    def _steps(self) -> list[_Step]:
        """The stream, with what the table shows after each observation."""
        ref = self.referee
        state = ref.initial_state()
        out: list[_Step] = []
        last_t = 0.0
        for obs in self.simulation.observations():
            before = state
            state, _ = ref.apply(state, obs)
            gap = obs.t - last_t
            last_t = obs.t
            tiles = self._tiles(state) if state.players else None
            if obs.TYPE == "board_turned":
                out.append(_Step("turn", obs, gap, tiles))
            elif obs.TYPE == "play":
                plain = obs.ability is None and obs.ticket is None and state.side == "four"  # type: ignore[attr-defined]
                kind = "camera_play" if plain and not self.enter_plain_plays else "entry"
                out.append(_Step(kind, obs, gap, tiles, revealed=before.phase == "play" and state.phase != "play"))
            else:
                out.append(_Step("entry", obs, gap, tiles))
        return out

    def _tiles(self, state: Any) -> dict[str, tuple[str, str, bool]]:
        names = self.referee.data.boards[state.side].cell_names
        return {names[i]: (tile[0], tile[1], bool(state.standees[i]))
                for i, tile in enumerate(state.tiles) if tile is not None}

    def resume(self, state: Any, t: float) -> None:
        """Carry on a journaled game after a restart: the steps that led to ``state`` are
        skipped (found by the game as it stands: phase, round, tiles, standees, turns, plays in
        hand, choices), the table is laid out as ``state`` has it, and the next step comes at
        ``t`` (s).

        Raises:
            ValueError: ``state`` is not a point of this seed's game.
        """
        def key(st: Any) -> Any:
            return (st.phase, st.round, st.tiles, st.standees, st.steps, tuple(p.player for p in st.plays),
                    tuple(pp.chosen for pp in st.pending))

        want = key(state)
        current = self.referee.initial_state()
        partial = None
        for i, step in enumerate(self.steps):
            if key(current) == want and i > 0:
                break
            if partial is None and state.plays and not current.plays and key(current)[:5] == want[:5]:
                partial = self._reveal_under_way(i, current, state)
            current, _ = self.referee.apply(current, dataclasses.replace(step.obs, t=max(step.obs.t, current.last_t)))
        else:
            if partial is None:
                raise ValueError("the journaled Carrossel game is not this seed's simulated game")
            i = partial
        self._i = i
        self._due = t
        self._camera_ready = False
        self._camera_deadline = round(t + self.wait_s, 6)
        self._angle_cw = float(state.angle_deg)
        tiles = self.steps[i - 1].tiles if partial is not None and i == partial else self._tiles(state)
        self.camera.set_table(board_angle_deg=self.setup_ccw_deg - self._angle_cw, tiles=tiles)
        if partial is not None and i == partial:
            # The round's tiles lie revealed but the camera had read only some plays when the
            # service stopped: the players tell the rest if the camera does not read them.
            self._gate = ("revealed",)
            self._gate_deadline = round(t + 2 * self.wait_s, 6)
            self._pending = list(self._missing)

    def _reveal_under_way(self, i: int, current: Any, state: Any) -> int | None:
        """A round whose plays were journaled only in part, in another order than the stream's
        (the camera read some tiles of the reveal, the others were still to be told): from the
        round's first play at step ``i`` (``current`` before it), the index after its reveal
        when the journaled plays are some of the round's and ``state`` is those plays applied in
        the journal's order, else None. ``self._missing`` keeps the round's other plays."""
        block = []
        for step in self.steps[i:]:
            if step.obs.TYPE != "play":
                return None
            block.append(step)
            if step.revealed:
                break
        else:
            return None
        by_player = {b.obs.player: b.obs for b in block}  # type: ignore[attr-defined]
        journaled = [p.player for p in state.plays]
        if not set(journaled) < set(by_player):
            return None
        for name in journaled:
            obs = by_player[name]
            current, _ = self.referee.apply(current, dataclasses.replace(obs, t=max(obs.t, current.last_t)))
        if (current.phase, current.round, current.tiles, current.standees, current.steps,
                tuple(p.player for p in current.plays)) != (state.phase, state.round, state.tiles, state.standees,
                                                             state.steps, tuple(journaled)):
            return None
        self._missing = [b.obs for b in block if b.obs.player not in journaled]  # type: ignore[attr-defined]
        return i + len(block)

    def camera_at_rest(self, t: float, ccw_deg: float) -> None:
        """The camera source has seen the board at rest at ``t`` (s) at ``ccw_deg`` (degrees
        CCW; its ``on_rest``): a resumed game goes on from here."""
        if not self._camera_ready:
            self._camera_ready, self._camera_deadline = True, None
            if self._due is not None:
                self._due = round(max(self._due, t), 6)

    # ---------------------------------------------------------------- scheduled source
    def start(self, emit: Any, clock: Clock) -> None:
        """Begin at ``clock.now()``: entries go to ``emit``."""
        self._emit = emit
        if self._due is not None:
            self._due = max(self._due, clock.now())

    def stop(self) -> None:
        """Nothing more happens; safe to call twice."""
        self._due = None
        self._table = []

    def next_time(self) -> float | None:
        """Session time (s) of the next thing the table does, or None."""
        times = [t for t, _ in self._table[:1]]
        if not self._camera_ready and self._camera_deadline is not None:
            times.append(self._camera_deadline)
        elif self._due is not None and not self._gate and self._i < len(self.steps):
            times.append(self._due)
        if self._gate and self._gate_deadline is not None:
            times.append(self._gate_deadline)
        return min(times) if times else None

    def advance(self, t: float) -> None:
        """Do what is due at or before ``t`` (s)."""
        while self._table and self._table[0][0] <= t:
            _, kwargs = self._table.pop(0)
            self.camera.set_table(**kwargs)
        if not self._camera_ready:
            if self._camera_deadline is None or self._camera_deadline > t:
                return
            self._camera_ready = True  # the camera never settled: the players go on anyway
            if self._due is not None:
                self._due = round(max(self._due, self._camera_deadline), 6)
            self._camera_deadline = None
        if self._gate and self._gate_deadline is not None and self._gate_deadline <= t:
            self._gate_deadline = None
            for obs in self._pending:  # the players tell what the referee did not see
                self.fallbacks.append(obs)
                if self._emit is not None:
                    self._emit(dataclasses.replace(obs, t=t))
        while not self._gate and self._due is not None and self._due <= t and self._i < len(self.steps):
            step = self.steps[self._i]
            self._i += 1
            at = self._due
            self._do(step, at)
            if self._i < len(self.steps):
                self._due = round(at + max(self.steps[self._i].gap_s, 0.05), 6)
            else:
                self._due = None

    def _do(self, step: _Step, at: float) -> None:
        obs = dataclasses.replace(step.obs, t=at)
        if step.kind == "entry" and self._emit is not None:
            self._emit(obs)
        elif step.kind == "camera_play":
            self._pending.append(obs)
        if step.kind == "turn":
            target = self.setup_ccw_deg - obs.angle_deg  # type: ignore[attr-defined]
            start = self.setup_ccw_deg - self._angle_cw
            delta = ((target - start + 180.0) % 360.0) - 180.0
            n = 3
            for k in range(1, n + 1):
                self._table.append((round(at + self.turn_s * k / n, 6),
                                    {"board_angle_deg": start + delta * k / n, "moving": k < n}))
            self._angle_cw = obs.angle_deg  # type: ignore[attr-defined]
            if not obs.uncertain:  # type: ignore[attr-defined]
                self._gate = ("board_turned_ok", "wrong_turn", "board_aligned")
                self._gate_deadline = round(at + self.turn_s + self.wait_s, 6)
                self._pending = [obs]
            return
        if step.revealed:
            new = sorted(set(step.tiles or {}) - set(self.camera.tiles))
            self._table.append((at, {"hands": tuple(new[:2])}))
            self._table.append((round(at + self.place_s, 6), {"tiles": step.tiles, "hands": ()}))
            self._table.sort(key=lambda e: e[0])
            self._gate = ("revealed",)
            self._gate_deadline = round(at + self.place_s + self.wait_s, 6)
        elif step.tiles is not None and step.kind == "entry" and step.tiles != self.camera.tiles:
            self._table.append((at, {"tiles": step.tiles}))
            self._table.sort(key=lambda e: e[0])

    # ---------------------------------------------------------------- announcer
    def announce(self, call: Any, summary: Any = None) -> None:
        """A call of the referee: a gate the table waits at opens; the stream goes on from it.
        A play the referee received is no longer one the players would tell after their wait
        (they tell only the plays it did not see)."""
        if call.TYPE == "play_received":
            self._pending = [o for o in self._pending
                             if not (o.TYPE == "play" and o.player == call.player)]  # type: ignore[attr-defined]
        if self._gate and call.TYPE in self._gate:
            self._gate, self._gate_deadline, self._pending = (), None, []
            if self._due is not None and self._i < len(self.steps):
                self._due = round(max(self._due, call.t + max(self.steps[self._i].gap_s, 0.5)), 6)

    def close(self) -> None:
        """Nothing to release."""
