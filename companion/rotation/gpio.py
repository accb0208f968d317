"""The encoder read straight from the Pi's GPIO with gpiozero, for slow knobs only.

Counts are quadrature edges, 4 per encoder line, as on the Pico (``firmware/quadrature.py``) and
the simulated shaft, so ``counts_per_rev`` is ``4 x lines_per_rev`` on every backend and one
``[encoder] calibration`` file fits them all. gpiozero's own ``RotaryEncoder`` is not used for
the count: it counts one step per full quadrature cycle (a 600-line encoder would give 600 per
turn where 2400 are configured) and only once both channels are back at rest. gpiozero still
owns the pins (pin factory, pull-ups, edge callbacks); this module only decodes the two
channels' levels with the same transition table as the Pico.

Python edge callbacks miss edges above roughly one turn a second (gpiozero issue 1062): use the
Pico for a carousel spun by hand. A callback that finds its channel already at the level it
reports (its previous edge was missed) moves nothing and is counted in
:attr:`GpioEncoder.missed_edges`.

Wiring (BCM numbers, defaults in ``hardware/pins.toml``): A to GPIO 17, B to GPIO 27, common
to GND (internal pull-ups); hall sensor output (active low) to GPIO 4, VCC to 3V3.

Source: the quadrature state table of an incremental-encoder datasheet (Broadcom HEDS-5500
"Output waveforms"); gpiozero's ``Pin.when_changed`` (called with ``ticks, state``).
"""

from __future__ import annotations

import threading

from companion.clock import Clock
from companion.rotation.samples import CountSample, IndexPulse, OnSample

__all__ = ["GpioEncoder", "TRANSITIONS", "INVALID", "quadrature_step", "COUNTS_PER_LINE"]

#: Quadrature edges per encoder line (4x decoding): counts per turn = 4 x lines.
COUNTS_PER_LINE = 4

#: Marks a change of both channels at once in :data:`TRANSITIONS` (an edge was missed).
INVALID = 2

#: Step for each (previous, current) pin state, indexed by ``(previous << 2) | current`` with
#: ``state = (B << 1) | A`` (raw levels, 1 = high): +1 forward ("A leads B": 0, 1, 3, 2, 0),
#: -1 backward, 0 no change, :data:`INVALID` for a double change. The same table as the Pico's
#: ``firmware/quadrature.py`` (a test checks it), so both count the same way.
TRANSITIONS = (
    0, 1, -1, INVALID,   # previous 0 (A=0 B=0) -> current 0, 1, 2, 3
    -1, 0, INVALID, 1,   # previous 1 (A=1 B=0)
    1, INVALID, 0, -1,   # previous 2 (A=0 B=1)
    INVALID, -1, 1, 0,   # previous 3 (A=1 B=1)
)


def quadrature_step(previous: int, current: int) -> int:
    """The count step from pin state ``previous`` to ``current`` (each ``(B << 1) | A``, 0-3):
    -1, 0, +1, or :data:`INVALID` when both channels changed (direction unknown)."""
    return TRANSITIONS[((previous & 3) << 2) | (current & 3)]


class GpioEncoder:
    """Counts quadrature edges of two GPIO pins (4 per encoder line), index from a third.

    gpiozero reports edges only, so at rest it would send nothing; the spin detector declares
    a stop only on a sample showing the settle time without motion. So, like the Pico's
    firmware, this reader also sends a heartbeat: the current count every ``1 / rate_hz``
    seconds from its own thread, whatever the pins do. Edge and heartbeat samples are sent
    under one lock, so their times never go backwards.

    Example::

        enc = GpioEncoder(17, 27, 4, lines_per_rev=24)   # 96 counts per turn
        enc.start(print, MonotonicClock())

    Args:
        pin_a, pin_b: BCM numbers of channels A and B (internal pull-ups, encoder common to GND).
        pin_index: BCM number of the hall sensor (active low), or None when not fitted.
        lines_per_rev: encoder lines (pulses per revolution); ``counts_per_rev`` is 4 x that.
        bounce_s: debounce of the index input, seconds (None = none). A and B are not
            debounced: a bounce is a back-and-forth edge pair, which the decoding cancels.
        pin_factory: a gpiozero pin factory (tests: the ``mock_factory`` fixture); None =
            gpiozero's default.
        rate_hz: heartbeat rate (Hz, session time of the clock given to :meth:`start`);
            None: no heartbeat thread, the caller calls :meth:`heartbeat` (tests).

    Attributes:
        count: the signed count, quadrature edges since :meth:`start` (not wrapped).
        missed_edges: edges the callbacks missed (a channel reported at the level it already
            had; the count did not move).
        counts_per_rev: ``4 x lines_per_rev``, counts per turn of the encoder shaft.

    Raises:
        ValueError: rate_hz not above 0, or lines_per_rev below 1.
    """

    def __init__(self, pin_a: int, pin_b: int, pin_index: int | None = None,
                 lines_per_rev: int = 24, bounce_s: float | None = 0.005, pin_factory=None,
                 rate_hz: float | None = 100):
        if rate_hz is not None and not rate_hz > 0:
            raise ValueError(f"rate_hz must be above 0 (or None), got {rate_hz}")
        if not lines_per_rev >= 1:
            raise ValueError(f"lines_per_rev must be at least 1, got {lines_per_rev}")
        self.pins = (pin_a, pin_b, pin_index)
        self.counts_per_rev = float(COUNTS_PER_LINE * lines_per_rev)
        self.has_index = pin_index is not None
        self.bounce_s = bounce_s
        self.pin_factory = pin_factory
        self.rate_hz = rate_hz
        self.count = 0
        self.missed_edges = 0
        self._state = 0
        self._channels: tuple | None = None
        self.index = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._on: OnSample = lambda s: None
        self._clock: Clock | None = None

    def start(self, on_sample: OnSample, clock: Clock) -> None:
        """Open the pins; report every edge and index pulse, and a heartbeat at ``rate_hz``."""
        from gpiozero import DigitalInputDevice, InputDevice

        self._on = on_sample
        self._clock = clock
        a, b, idx = self.pins
        ch_a = InputDevice(a, pull_up=True, pin_factory=self.pin_factory)
        ch_b = InputDevice(b, pull_up=True, pin_factory=self.pin_factory)
        with self._lock:
            self.count = 0
            self.missed_edges = 0
            self._state = (int(ch_b.pin.state) << 1) | int(ch_a.pin.state)
            self._channels = (ch_a, ch_b)
        for ch, changed in ((ch_a, self._a_changed), (ch_b, self._b_changed)):
            ch.pin.edges = "both"
            ch.pin.when_changed = changed  # a bound method: gpiozero keeps only a weak reference
        if idx is not None:
            self.index = DigitalInputDevice(idx, pull_up=True, bounce_time=self.bounce_s,
                                            pin_factory=self.pin_factory)
            self.index.when_activated = self._index
        self.heartbeat()
        if self.rate_hz is not None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._beat, name="gpio-encoder-heartbeat",
                                            daemon=True)
            self._thread.start()

    def _a_changed(self, ticks: float, level: int) -> None:
        self._edge(0, level)

    def _b_changed(self, ticks: float, level: int) -> None:
        self._edge(1, level)

    def _edge(self, bit: int, level: int) -> None:
        """Channel ``bit`` (0 = A, 1 = B) changed to ``level`` (raw, 0/1): decode the step and
        report the count. A callback that finds the channel already at ``level`` means its
        other edge was missed (the callbacks fell behind): counted in :attr:`missed_edges`,
        the count does not move."""
        with self._lock:
            if self._channels is None:
                return
            old = self._state
            new = (old & ~(1 << bit)) | ((1 if level else 0) << bit)
            if new == old:
                self.missed_edges += 1
                return
            self._state = new
            self.count += quadrature_step(old, new)  # one channel changed: always -1 or +1
            self._on(CountSample(self._clock.now(), self.count))

    def heartbeat(self) -> None:
        """Report the current count now (a :class:`CountSample`); nothing once stopped."""
        with self._lock:
            if self._channels is not None:
                self._on(CountSample(self._clock.now(), self.count))

    def _index(self) -> None:
        with self._lock:
            if self._channels is not None:
                self._on(IndexPulse(self._clock.now(), self.count))

    def _beat(self) -> None:
        period = 1.0 / self.rate_hz
        t = self._clock.now()
        while not self._stop.is_set():
            t = max(t + period, self._clock.now())
            if self._clock.wait(self._stop, t):
                break
            self.heartbeat()

    def stop(self) -> None:
        """Stop the heartbeat and release the pins; safe to call twice."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2)
        self._thread = None
        with self._lock:
            devs = (*(self._channels or ()), self.index)
            self._channels = None
            self.index = None
        for dev in devs:
            if dev is not None:
                dev.close()
