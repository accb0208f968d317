"""Stub of MicroPython's ``machine`` module (``Pin`` only) for testing the firmware off the Pico.

Runs under the MicroPython unix port and CPython. Tests set input levels with :func:`drive`
and fire edge interrupts the way the RP2040 would (falling/rising edges call the handler).
"""

_levels = {}
_pins = {}


def level(n):
    """The level (0/1) of GPIO ``n``; an input with a pull-up reads 1 until driven."""
    return _levels.get(n, 1)


def pin_number(pin):
    return pin.id


def drive(n, v):
    """Set the level of GPIO ``n`` and fire its interrupt handler on a matching edge."""
    old = level(n)
    _levels[n] = 1 if v else 0
    pin = _pins.get(n)
    if pin is not None and pin._handler is not None and old != _levels[n]:
        if (_levels[n] == 0 and pin._trigger & Pin.IRQ_FALLING) or (
            _levels[n] == 1 and pin._trigger & Pin.IRQ_RISING
        ):
            pin._handler(pin)


def reset():
    """Forget every pin (between tests)."""
    _levels.clear()
    _pins.clear()


class Pin:
    IN = 0
    OUT = 1
    PULL_UP = 1
    PULL_DOWN = 2
    IRQ_FALLING = 4
    IRQ_RISING = 8

    def __init__(self, id, mode=-1, pull=-1):
        self.id = id
        self.mode = mode
        self.pull = pull
        self._handler = None
        self._trigger = 0
        _pins[id] = self

    def value(self, v=None):
        if v is None:
            return level(self.id)
        _levels[self.id] = 1 if v else 0
        return None

    def irq(self, handler=None, trigger=IRQ_FALLING | IRQ_RISING, hard=False):
        self._handler = handler
        self._trigger = trigger
