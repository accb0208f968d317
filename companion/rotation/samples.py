"""What an encoder reader reports, and the interface every reader implements.

Readers (the Pico over USB serial, gpiozero on the Pi's pins, the simulated shaft) turn their
hardware into a stream of these small records, each stamped with the session time ``t``
(seconds) from the clock they were started with. Counts are *unwrapped*: the reader undoes the
Pico's 32-bit wrap, so a count only ever moves by the shaft's motion.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Protocol

from companion.clock import Clock

__all__ = ["CountSample", "IndexPulse", "LinkLost", "LinkRestored", "LinkFault", "Sample",
           "CountReader", "OnSample"]


@dataclasses.dataclass(frozen=True, slots=True)
class CountSample:
    """The count (counts, unwrapped) at ``t`` (seconds)."""

    t: float
    count: int


@dataclasses.dataclass(frozen=True, slots=True)
class IndexPulse:
    """The index pulse (hall sensor) fired with the count at ``count`` (counts) at ``t`` (s)."""

    t: float
    count: int


@dataclasses.dataclass(frozen=True, slots=True)
class LinkLost:
    """The reader lost its device at ``t`` (seconds): unplugged, a serial error."""

    t: float
    reason: str


@dataclasses.dataclass(frozen=True, slots=True)
class LinkRestored:
    """The device is back at ``t``. ``continuous`` is True when the count went on meanwhile
    (same power-on of the Pico), False when it restarted from an unknown position."""

    t: float
    continuous: bool
    port: str = ""


@dataclasses.dataclass(frozen=True, slots=True)
class LinkFault:
    """A fault the reader cannot get over by itself (incompatible firmware); it has stopped."""

    t: float
    reason: str


Sample = CountSample | IndexPulse | LinkLost | LinkRestored | LinkFault
OnSample = Callable[[Sample], None]


class CountReader(Protocol):
    """An encoder backend.

    While its link is up a reader reports a :class:`CountSample` at least every heartbeat
    period, also when nothing moves (the Pico's count lines at ``rate_hz``, the gpiozero
    reader's own timer, the simulated shaft's samples): the spin detector declares a stop only
    on a sample showing the settle time without motion, never on silence.

    Attributes:
        counts_per_rev: nominal counts per turn of the encoder shaft at this backend's
            resolution (4 x lines for the Pico and the simulation, 1 x lines for gpiozero).
        has_index: whether it reports index pulses.
    """

    counts_per_rev: float
    has_index: bool

    def start(self, on_sample: OnSample, clock: Clock) -> None:
        """Begin reporting (from any thread)."""

    def stop(self) -> None:
        """Stop and release the device; safe to call twice."""
