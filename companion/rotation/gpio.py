"""The encoder read straight from the Pi's GPIO with gpiozero, for slow knobs only.

gpiozero's ``RotaryEncoder`` counts one step per full quadrature cycle (so counts per turn =
the encoder's lines) and its Python edge callbacks miss steps above roughly one turn a second
(gpiozero issue 1062): use the Pico for a carousel spun by hand. ``max_steps=0`` makes the
count unbounded (the default 16 would clamp it).

Wiring (BCM numbers, defaults in ``hardware/pins.toml``): A to GPIO 17, B to GPIO 27, common
to GND (internal pull-ups); hall sensor output (active low) to GPIO 4, VCC to 3V3.
"""

from __future__ import annotations

import threading

from companion.clock import Clock
from companion.rotation.samples import CountSample, IndexPulse, OnSample

__all__ = ["GpioEncoder"]


class GpioEncoder:
    """Counts from gpiozero's ``RotaryEncoder`` on two GPIO pins, index from a third.

    gpiozero reports edges only, so at rest it would send nothing; the spin detector declares
    a stop only on a sample showing the settle time without motion. So, like the Pico's
    firmware, this reader also sends a heartbeat: the current count every ``1 / rate_hz``
    seconds from its own thread, whatever the pins do. Edge and heartbeat samples are sent
    under one lock, so their times never go backwards.

    Example::

        enc = GpioEncoder(17, 27, 4, lines_per_rev=24)
        enc.start(print, MonotonicClock())

    Args:
        pin_a, pin_b: BCM numbers of channels A and B.
        pin_index: BCM number of the hall sensor (active low), or None when not fitted.
        lines_per_rev: encoder lines (pulses per revolution) = counts per turn on this path.
        bounce_s: debounce of the index input, seconds (None = none).
        pin_factory: a gpiozero pin factory (tests: ``MockFactory()``); None = gpiozero's default.
        rate_hz: heartbeat rate (Hz, session time of the clock given to :meth:`start`);
            None: no heartbeat thread, the caller calls :meth:`heartbeat` (tests).

    Raises:
        ValueError: rate_hz not above 0.
    """

    def __init__(self, pin_a: int, pin_b: int, pin_index: int | None = None,
                 lines_per_rev: int = 24, bounce_s: float | None = 0.005, pin_factory=None,
                 rate_hz: float | None = 100):
        if rate_hz is not None and not rate_hz > 0:
            raise ValueError(f"rate_hz must be above 0 (or None), got {rate_hz}")
        self.pins = (pin_a, pin_b, pin_index)
        self.counts_per_rev = float(lines_per_rev)
        self.has_index = pin_index is not None
        self.bounce_s = bounce_s
        self.pin_factory = pin_factory
        self.rate_hz = rate_hz
        self.encoder = None
        self.index = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._on: OnSample = lambda s: None
        self._clock: Clock | None = None

    def start(self, on_sample: OnSample, clock: Clock) -> None:
        """Open the pins; report every step and index pulse, and a heartbeat at ``rate_hz``."""
        from gpiozero import DigitalInputDevice, RotaryEncoder

        self._on = on_sample
        self._clock = clock
        a, b, idx = self.pins
        self.encoder = RotaryEncoder(a, b, max_steps=0, pin_factory=self.pin_factory)
        self.encoder.when_rotated = self.heartbeat
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

    def heartbeat(self) -> None:
        """Report the current count now (a :class:`CountSample`); nothing once stopped."""
        with self._lock:
            enc = self.encoder
            if enc is not None:
                self._on(CountSample(self._clock.now(), enc.steps))

    def _index(self) -> None:
        with self._lock:
            enc = self.encoder
            if enc is not None:
                self._on(IndexPulse(self._clock.now(), enc.steps))

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
            devs = (self.encoder, self.index)
            self.encoder = self.index = None
        for dev in devs:
            if dev is not None:
                dev.close()
