"""The encoder read straight from the Pi's GPIO with gpiozero, for slow knobs only.

gpiozero's ``RotaryEncoder`` counts one step per full quadrature cycle (so counts per turn =
the encoder's lines) and its Python edge callbacks miss steps above roughly one turn a second
(gpiozero issue 1062): use the Pico for a carousel spun by hand. ``max_steps=0`` makes the
count unbounded (the default 16 would clamp it).

Wiring (BCM numbers, defaults in ``hardware/pins.toml``): A to GPIO 17, B to GPIO 27, common
to GND (internal pull-ups); hall sensor output (active low) to GPIO 4, VCC to 3V3.
"""

from __future__ import annotations

from companion.clock import Clock
from companion.rotation.samples import CountSample, IndexPulse, OnSample

__all__ = ["GpioEncoder"]


class GpioEncoder:
    """Counts from gpiozero's ``RotaryEncoder`` on two GPIO pins, index from a third.

    Example::

        enc = GpioEncoder(17, 27, 4, lines_per_rev=24)
        enc.start(print, MonotonicClock())

    Args:
        pin_a, pin_b: BCM numbers of channels A and B.
        pin_index: BCM number of the hall sensor (active low), or None when not fitted.
        lines_per_rev: encoder lines (pulses per revolution) = counts per turn on this path.
        bounce_s: debounce of the index input, seconds (None = none).
        pin_factory: a gpiozero pin factory (tests: ``MockFactory()``); None = gpiozero's default.
    """

    def __init__(self, pin_a: int, pin_b: int, pin_index: int | None = None,
                 lines_per_rev: int = 24, bounce_s: float | None = 0.005, pin_factory=None):
        self.pins = (pin_a, pin_b, pin_index)
        self.counts_per_rev = float(lines_per_rev)
        self.has_index = pin_index is not None
        self.bounce_s = bounce_s
        self.pin_factory = pin_factory
        self.encoder = None
        self.index = None

    def start(self, on_sample: OnSample, clock: Clock) -> None:
        """Open the pins and report every step and index pulse."""
        from gpiozero import DigitalInputDevice, RotaryEncoder

        a, b, idx = self.pins
        self.encoder = RotaryEncoder(a, b, max_steps=0, pin_factory=self.pin_factory)
        enc = self.encoder
        enc.when_rotated = lambda: on_sample(CountSample(clock.now(), enc.steps))
        if idx is not None:
            self.index = DigitalInputDevice(idx, pull_up=True, bounce_time=self.bounce_s,
                                            pin_factory=self.pin_factory)
            self.index.when_activated = lambda: on_sample(IndexPulse(clock.now(), enc.steps))
        on_sample(CountSample(clock.now(), enc.steps))

    def stop(self) -> None:
        """Release the pins; safe to call twice."""
        for dev in (self.encoder, self.index):
            if dev is not None:
                dev.close()
        self.encoder = self.index = None
