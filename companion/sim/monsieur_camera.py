"""The simulated Monsieur Carrousel table seen through the simulated camera only.

:class:`CameraTable` sits where the simulated shaft sits (``MonsieurCarrouselTable.shaft``: it
wraps the table's ``emit`` and hears each spin's turns with ``expect``) and turns what the
simulated children do into what the camera sees, instead of observations:

* a roll (the table's ``die_rolled``): a hand takes the die off the board, and 0.8 s later the
  die lands elsewhere with that top colour (``unknown``: cocked on an edge);
* a kid put on a seat (``kid_seated``): a hand over that seat for 0.5 s, then the token is on it;
* a spin (``spin_started`` with the turns from ``expect``): the carousel turns that far in that
  time, decelerating, swings back and rests (:meth:`SimulatedMonsieurCamera.spin`);
* ``seats_seen`` and ``spin_stopped`` are dropped: the camera makes its own;
* the kids' answers pass through the camera source (:meth:`MonsieurCameraSource.take_answer`),
  and the kids answer the camera's full-turn question truthfully after a moment;
* told that the camera cannot see the seat (``seat_unseen``: the roof hides the seat the kid
  was put on), the players enter that ``kid_seated`` by hand after a moment, as at a real
  table on the web page (counted in ``fallbacks``);
* told that the camera has read no roll (``die_unseen``), the players enter the colour on top
  by hand after a moment (or, with no colour on top, a cocked die, press the die button: a
  colour drawn from the die's), unless the camera read the roll meanwhile (``fallbacks``).

Each scene change begins at the action's time or at the session time the camera reads now,
whichever is later: the table answers a call at the call's time plus a moment, but with a camera
the service announces a call only after its jitter buffer (``settle_s`` and two frames, 0.9 s by
default), so an action can carry a time already past. Begun in the past, a roll's 0.8 s out of
sight shrank by that much (0.57 s in the tests' game on seed 1, too short to be read at all on
seed 3: the game then waited for a roll nobody could see) and a spin's first frame jumped by the
turn already made (the camera lost count and asked the kids).

So the referee learns the stop angle, the kids on seats and the die's colour from rendered
frames alone. A scheduled source (the service loop times the scene changes); it also listens to
the calls (the full-turn question).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from typing import Any

from companion.clock import Clock
from companion.sources import Emit

__all__ = ["CameraTable"]


class CameraTable:
    """The simulated table's actions as scenes of the simulated camera.

    Args:
        camera: the :class:`~companion.vision.sim_monsieur.SimulatedMonsieurCamera` (its clock
            is the session's).
        source: the :class:`~companion.sources.monsieur_camera.MonsieurCameraSource` reading it.
        kid_colour: ``kid_colour(name) -> token colour`` (a key of the geometry's ``kids.srgb``).
        spin_s_per_rev: seconds a spin takes per turn (the table's setting).
        seed: seeds where the die lands.
        think_s: seconds the kids take to answer the full-turn question, or to enter a seat or
            a die the camera cannot see.
    """

    #: A simulated table plans its next move from the restored state (its resume): the calls a
    #: resumed game says again (:class:`~companion.service.Service` ``restate``) are for people.
    hears_again = False

    def __init__(self, camera: Any, source: Any, kid_colour: Callable[[str], str], spin_s_per_rev: float = 1.5,
                 seed: int = 0, think_s: float = 2.0):
        import numpy as np

        self.camera = camera
        self.source = source
        self.kid_colour = kid_colour
        self.spin_s_per_rev = float(spin_s_per_rev)
        self.think_s = float(think_s)
        self._rng = np.random.default_rng(seed)
        self._expected: list[tuple[float | None, str]] = []
        self._scenes: list[tuple[float, int, Callable[[], None]]] = []
        self._seq = itertools.count()
        self._emit: Emit | None = None
        self.last_revolutions: float | None = None
        self._seated: Any = None  # the last kid_seated the table did (what a fallback enters)
        #: observations entered by hand because the camera could not see them (``seat_unseen``,
        #: ``die_unseen``)
        self.fallbacks: list[Any] = []

    # the shaft's protocol on MonsieurCarrouselTable -------------------------------------
    def expect(self, revolutions: float | None, direction: str) -> None:
        """The table's next spin: ``revolutions`` turns (None: it jams) in ``direction``."""
        self._expected.append((revolutions, direction))

    def wrap(self, emit: Emit) -> Emit:
        """The table's ``emit`` with its actions turned into camera scenes."""
        self._emit = emit

        def wrapped(obs: Any) -> None:
            kind = obs.TYPE
            # not before now: an action answering a call the buffer held back carries a past time
            at = max(float(obs.t), float(self.camera.clock()))
            if kind == "spin_started":
                revolutions, direction = self._expected.pop(0) if self._expected else (None, "ccw")
                if revolutions is not None:
                    sign = 1.0 if direction == "ccw" else -1.0
                    self.last_revolutions = revolutions
                    self.camera.spin(at, sign * revolutions * 360.0, revolutions * self.spin_s_per_rev)
                return
            if kind in ("spin_stopped", "seats_seen"):
                return
            if kind == "die_rolled":
                self._roll(at, obs.colour)
                return
            if kind == "kid_seated":
                self._seated = obs
                self._seat(at, obs.seat, obs.kid)
                return
            if kind == "answer":
                for o in self.source.take_answer(obs):
                    emit(o)
                return
            emit(obs)

        return wrapped

    def _roll(self, t: float, colour: str) -> None:
        from companion.vision.sim_monsieur import die_place

        cam = self.camera
        cam.set_scene(die=None)
        cam.set_hands(("die",))
        place = die_place(self._rng, cam.renderer.geometry)
        yaw = float(self._rng.uniform(0, 360))
        top = "edge" if colour == "unknown" else colour

        def land() -> None:
            cam.set_scene(die=top, die_xy_mm=place, die_yaw_deg=yaw)
            cam.set_hands(())

        self._later(t + 0.8, land)

    def _seat(self, t: float, seat: int, kid: str | None) -> None:
        cam = self.camera
        g = cam.renderer.geometry
        slot = round((cam.angle_at(t) + g.seat_disc_angle(seat) - g.seat_first_deg) / g.seat_pitch_deg) % g.n_seats
        cam.set_hands((f"seat:{slot}",))

        def put() -> None:
            kids = list(cam.scene.kids)
            kids[seat] = self.kid_colour(kid or "")
            cam.set_scene(kids=tuple(kids))
            cam.set_hands(())

        self._later(t + 0.5, put)

    def _later(self, t: float, action: Callable[[], None]) -> None:
        heapq.heappush(self._scenes, (round(t, 6), next(self._seq), action))

    # the call the kids hear --------------------------------------------------------------
    def announce(self, call: Any, summary: Any = None) -> None:
        """The camera's full-turn question: the kids answer what they saw after a moment; the
        camera cannot see the seat or has read no roll: the players enter it by hand after a
        moment."""
        if call.type == "seat_unseen":
            self._enter_seat(round(call.t + self.think_s, 3))
            return
        if call.type == "die_unseen":
            self._enter_die(round(call.t + self.think_s, 3))
            return
        if call.type != "full_turn_asked":
            return
        from companion.games.monsieur_carrousel import Answer

        yes = (self.last_revolutions or 0.0) >= 1.0
        answer = Answer(t=round(call.t + self.think_s, 3), value="yes" if yes else "no")

        def press() -> None:
            if self._emit is not None:
                for o in self.source.take_answer(answer):
                    self._emit(o)

        self._later(answer.t, press)

    def _enter_seat(self, at: float) -> None:
        import dataclasses

        seated = self._seated

        def enter() -> None:
            if seated is None or self._emit is None or int(seated.seat) in self.source.game_seats:
                return  # the camera saw it meanwhile
            obs = dataclasses.replace(seated, t=at)
            self.fallbacks.append(obs)
            self._emit(obs)

        self._later(at, enter)

    def _enter_die(self, at: float) -> None:
        from companion.games.monsieur_carrousel import DieRolled

        def enter() -> None:
            if self._emit is None or not self.source.roll_watched:
                return  # the camera read the roll meanwhile
            colours = self.camera.renderer.geometry.die_colours
            top = self.camera.scene.die
            colour = top if top in colours else str(self._rng.choice(colours))  # cocked or gone: the die button
            obs = DieRolled(t=at, colour=colour)
            self.fallbacks.append(obs)
            self._emit(obs)

        self._later(at, enter)

    def close(self) -> None:
        """Nothing to release."""

    # a scheduled source -------------------------------------------------------------------
    def start(self, emit: Emit, clock: Clock) -> None:
        """Begin (the table's emit is wrapped separately)."""

    def stop(self) -> None:
        """No more scene changes."""
        self._scenes.clear()

    def next_time(self) -> float | None:
        """Session time (s) of the next scene change, or None."""
        return self._scenes[0][0] if self._scenes else None

    def advance(self, t: float) -> None:
        """Make every scene change due at or before ``t`` (s)."""
        while self._scenes and self._scenes[0][0] <= t:
            _, _, action = heapq.heappop(self._scenes)
            action()
