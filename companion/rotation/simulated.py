"""The simulated shaft: a carousel with inertia, friction and contact bounce, spun by a
simulated child now and then. A first-class backend (``[encoder] backend = "sim"``), used by
``companion run`` on a machine without hardware, by ``companion encoder monitor --backend sim``
and by the tests and benchmarks.

Physics (SI units): the part has moment of inertia ``inertia_kgm2``; a flick is an angular
impulse giving it ``flick_rps`` turns per second; it slows under Coulomb friction (constant
torque ``coulomb_nm``) and viscous friction (``viscous_nms`` x speed) until the speed is below
what Coulomb friction holds, where it stops.

Elastic return (what real hand spins of a light carousel show): while friction slows the part,
its pivot and base twist a little under the friction torque; when the part stops, the twist
springs back and carries it back against its spin by ``return_deg`` (drawn from a range, 0.7
to 1.5 degrees by default), and it comes to rest ``return_s`` (0.27 to 0.34 s) after the swing
back began. The swing is one half-cycle of the elastic mode held by dry friction at its end
(a spring-mass with Coulomb friction moves along a cosine in each half-cycle and stays where the
spring no longer overcomes static friction): the angle behind the forward stop is
``A (1 - cos(pi tau / T)) / 2`` for ``tau`` from 0 to ``T``, zero speed at both ends, the
slowest count changes at the turn and at the end. With ``inertia_kgm2`` I the swing's half
period T means a torsional stiffness of ``I (pi / T)²`` (0.004 kg m² and 0.3 s: 0.44 N m/rad).
A spin ends with a swing back with probability ``return_p``.

Chatter and bounce: each count change is followed, with probability ``bounce_p``, by a
one-count step back reported on the next sample (what a mechanical contact does at an edge); at
rest the count jitters by one count with probability ``jitter_p`` per sample (chatter). The
index pulse fires each time the part passes ``index_count``.
"""

from __future__ import annotations

import math
import random
import threading

from companion.clock import Clock
from companion.rotation.samples import (
    CountSample,
    IndexPulse,
    LinkLost,
    LinkRestored,
    OnSample,
)

__all__ = ["SimulatedShaft"]


class SimulatedShaft:
    """A simulated encoder on a turning part.

    Args:
        counts_per_rev: counts per turn (default 2400: a 600-line encoder at 4x).
        seed: random seed (same seed, same spins).
        rate_hz: samples per second reported (like the Pico's heartbeat).
        inertia_kgm2: moment of inertia of the part (kg m²).
        coulomb_nm: dry friction torque (N m).
        viscous_nms: viscous friction (N m s per rad/s).
        spin_every_s: mean seconds between spontaneous flicks (None: only :meth:`flick`).
        flick_rps: (low, high) speed a flick gives, turns per second.
        bounce_p: chance a count change bounces back one count for one sample.
        jitter_p: chance per sample at rest of a one-count jitter.
        index_count: count (mod counts_per_rev) where the index pulse fires; None: no index.
        start_count: the part's position at start (counts from the index).
        drop_every_s: mean seconds between simulated link drops of 0.5 s (None: never).
        return_p: chance that a spin ends with an elastic swing back (0 to 1; default 0.5).
        return_deg: (low, high) amplitude of the swing back, degrees of the part (drawn
            uniformly for each spin; default 0.7 to 1.5, measured on real hand spins).
        return_s: (low, high) seconds from the start of the swing back to rest (drawn
            uniformly; default 0.27 to 0.34 s, measured on real hand spins).

    Attributes:
        position: the exact position (counts, float); ``count`` is its floor.
        omega: angular speed (rad/s, signed, ccw > 0), also during a swing back.
        last_motion_t: time (s) of the last change of the true count (the true rest, once
            :attr:`at_rest`).

    Raises:
        ValueError: a probability outside 0-1 or a (low, high) range that is not
            0 <= low <= high (a zero-length swing: ``return_s`` low > 0).
    """

    def __init__(self, counts_per_rev: float = 2400, seed: int = 1, rate_hz: float = 100,
                 inertia_kgm2: float = 0.004, coulomb_nm: float = 0.02,
                 viscous_nms: float = 0.0005, spin_every_s: float | None = 8.0,
                 flick_rps: tuple[float, float] = (0.8, 3.0), bounce_p: float = 0.02,
                 jitter_p: float = 0.01, index_count: int | None = 0, start_count: int = 0,
                 drop_every_s: float | None = None, return_p: float = 0.5,
                 return_deg: tuple[float, float] = (0.7, 1.5),
                 return_s: tuple[float, float] = (0.27, 0.34)):
        for name, p in (("bounce_p", bounce_p), ("jitter_p", jitter_p), ("return_p", return_p)):
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"{name} must be a probability from 0 to 1, got {p}")
        for name, (lo, hi), floor in (("return_deg", return_deg, 0.0), ("return_s", return_s, 1e-6)):
            if not floor <= lo <= hi:
                raise ValueError(f"{name} must be (low, high) with {floor:g} <= low <= high, "
                                 f"got ({lo}, {hi})")
        self.counts_per_rev = float(counts_per_rev)
        self.has_index = index_count is not None
        self.rng = random.Random(seed)
        self.rate_hz = rate_hz
        self.inertia = inertia_kgm2
        self.coulomb = coulomb_nm
        self.viscous = viscous_nms
        self.spin_every_s = spin_every_s
        self.flick_rps = flick_rps
        self.bounce_p = bounce_p
        self.jitter_p = jitter_p
        self.index_count = index_count
        self.drop_every_s = drop_every_s
        self.return_p = return_p
        self.return_deg = return_deg
        self.return_s = return_s
        # the swing backs draw from their own generator, so that the bounce and jitter a seed
        # gives stay the same whether swings happen or not
        self._return_rng = random.Random(f"return-{seed}")
        self._swing: tuple[float, float, float, float] | None = None  # t0, start pos, A, T
        self.position = float(start_count)  # counts, exact
        self.omega = 0.0  # rad/s
        self.t = 0.0
        self.last_motion_t = 0.0
        self._next_flick = self._draw(spin_every_s)
        self._next_drop = self._draw(drop_every_s)
        self._down_until: float | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._on: OnSample = lambda s: None
        self._bounce = 0

    def _draw(self, mean: float | None) -> float:
        return math.inf if mean is None else self.t + self.rng.expovariate(1.0 / mean)

    @property
    def count(self) -> int:
        """The true count (counts), without bounce."""
        return math.floor(self.position)

    @property
    def decel_rps2(self) -> float:
        """Deceleration from Coulomb friction alone, turns/s²."""
        return self.coulomb / self.inertia / (2 * math.pi)

    @property
    def at_rest(self) -> bool:
        """True when the part neither turns nor swings back."""
        return self.omega == 0.0 and self._swing is None

    def flick(self, rps: float) -> None:
        """A child flicks the part: it turns at ``rps`` turns per second (signed, ccw > 0).
        A swing back in progress is cut short."""
        self._swing = None
        self.omega = 2 * math.pi * rps

    def _begin_swing(self, t: float, spin_sign: float) -> None:
        """The part stopped at ``t`` (s) after turning with sign ``spin_sign``: maybe swing back."""
        if self.return_p <= 0.0 or self._return_rng.random() >= self.return_p:
            return
        amp_counts = self._return_rng.uniform(*self.return_deg) / 360.0 * self.counts_per_rev
        half_period = self._return_rng.uniform(*self.return_s)
        self._swing = (t, self.position, -spin_sign * amp_counts, half_period)

    def _swing_to(self, t: float) -> None:
        """Move along the swing back to time ``t`` (s); end it (at rest) after its half period."""
        t0, start, amp, half = self._swing
        tau = t - t0
        if tau >= half:
            self.position = start + amp
            self.omega = 0.0
            self._swing = None
            return
        phase = math.pi * tau / half
        self.position = start + amp * (1.0 - math.cos(phase)) / 2.0
        counts_s = amp * math.pi / (2.0 * half) * math.sin(phase)
        self.omega = counts_s / self.counts_per_rev * 2 * math.pi

    def advance(self, t: float, on_sample: OnSample | None = None) -> None:
        """Run the physics up to session time ``t`` (seconds), reporting samples at the rate."""
        emit = on_sample or self._on
        dt = 1.0 / self.rate_hz
        while self.t + dt <= t + 1e-12:
            self._step(dt, emit)

    def _step(self, dt: float, emit: OnSample) -> None:
        t_start = self.t
        self.t += dt
        if self.t >= self._next_flick:
            lo, hi = self.flick_rps
            self.flick(self.rng.choice((1, 1, 1, -1)) * self.rng.uniform(lo, hi))
            self._next_flick = self._draw(self.spin_every_s)
        before = self.position
        sub = 10
        h = dt / sub
        for k in range(sub):  # integrate friction in small steps
            if self._swing is not None:
                self._swing_to(t_start + (k + 1) * h)
                continue
            if self.omega == 0.0:
                break
            torque = self.coulomb + self.viscous * abs(self.omega)
            dw = torque / self.inertia * h
            if dw >= abs(self.omega):  # friction holds it: the forward stop
                sign = math.copysign(1.0, self.omega)
                self.omega = 0.0
                self._begin_swing(t_start + (k + 1) * h, sign)
            else:
                self.omega -= math.copysign(dw, self.omega)
                self.position += self.omega * h / (2 * math.pi) * self.counts_per_rev
        count = math.floor(self.position)
        if count != math.floor(before):
            self.last_motion_t = self.t
        if self.index_count is not None and count != math.floor(before):
            lo, hi = sorted((before, self.position))
            k = math.floor((lo - self.index_count) / self.counts_per_rev) + 1
            at = self.index_count + k * self.counts_per_rev
            if lo < at <= hi and not self._down():
                emit(IndexPulse(self.t, at if isinstance(at, int) else int(at)))
        # link drops (fault injection)
        if self._down_until is not None and self.t >= self._down_until:
            self._down_until = None
            emit(LinkRestored(self.t, True, "sim"))
        if self.t >= self._next_drop:
            self._down_until = self.t + 0.5
            self._next_drop = self._draw(self.drop_every_s)
            emit(LinkLost(self.t, "simulated link drop"))
        if self._down():
            return
        reported = count
        moved = count != math.floor(before)
        if moved and self.rng.random() < self.bounce_p:  # back against the step just made
            self._bounce = -1 if count > math.floor(before) else 1
        elif self._bounce:
            reported += self._bounce
            self._bounce = 0
        elif not moved and self.rng.random() < self.jitter_p:
            reported += self.rng.choice((-1, 1))
        emit(CountSample(self.t, reported))

    def _down(self) -> bool:
        return self._down_until is not None

    def start(self, on_sample: OnSample, clock: Clock) -> None:
        """Run in a thread against ``clock`` (real or accelerated time)."""
        self._on = on_sample
        self.t = clock.now()
        self._next_flick = self._draw(self.spin_every_s) if self.spin_every_s else math.inf
        self._stop.clear()

        def run():
            while not self._stop.is_set():
                target = self.t + 1.0 / self.rate_hz
                if clock.wait(self._stop, target):
                    break
                self.advance(clock.now())

        on_sample(CountSample(self.t, self.count))
        self._thread = threading.Thread(target=run, name="sim-shaft", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread; safe to call twice."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2)
        self._thread = None
