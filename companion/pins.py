"""Choosing gpiozero's pin factory: real pins on a Raspberry Pi, mock pins anywhere else.

Every pin of the service goes through gpiozero (``LED``, ``TonalBuzzer``, ``Button``,
``RotaryEncoder``); this module only picks the factory they are built with, once:

* ``auto`` (default): on a Raspberry Pi (``/proc/device-tree/model`` says so) gpiozero's own
  choice (lgpio on Bookworm); elsewhere, or when the real factory cannot start, gpiozero's
  ``MockFactory`` with ``MockPWMPin`` (so the buzzer's PWM works), and one log line says so;
* ``mock``, ``lgpio``, ``rpigpio``, ``native``: that factory, or a clear error.

A real table (``--table hardware``) never plays on pretend pins: ``mock`` there is refused in
one line (:func:`companion.assembly.table_pins`), as ``companion doctor`` reports it. The one
way in is for tests, from Python only: :func:`mock_pins_for_tests` (the test suite's
``mock_factory`` fixture uses it), which no configuration, option or environment variable
reaches.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["make_pin_factory", "is_raspberry_pi", "PinFactoryError", "mock_pins_for_tests", "pins_for_tests"]

log = logging.getLogger("companion.pins")


#: The pin factory a test lends to real tables (:func:`mock_pins_for_tests`), or None.
_PINS_FOR_TESTS: Any = None


@contextlib.contextmanager
def mock_pins_for_tests(factory: Any) -> Iterator[Any]:
    """Tests only: while this context is open, a real table (``--table hardware``) assembled
    in this process whose ``[service] pin_factory`` is ``"mock"`` uses ``factory`` (gpiozero's
    ``MockFactory``, whose pins the test drives) instead of being refused.

    The test suite's ``mock_factory`` fixture opens it; ``tests/mock_pins_main.py`` does it for
    a ``companion`` run in a child process. Nothing else opens it: the command line, the
    configuration and the environment cannot, so an appliance never plays on pretend pins.

    Args:
        factory: a gpiozero pin factory (``MockFactory(pin_class=MockPWMPin)``).

    Yields:
        ``factory``. The previous one (None outside tests) is restored on exit.
    """
    global _PINS_FOR_TESTS
    saved, _PINS_FOR_TESTS = _PINS_FOR_TESTS, factory
    try:
        yield factory
    finally:
        _PINS_FOR_TESTS = saved


def pins_for_tests() -> Any:
    """The factory lent by :func:`mock_pins_for_tests`, or None (always None outside tests)."""
    return _PINS_FOR_TESTS


class PinFactoryError(Exception):
    """The pin factory named in the configuration cannot be started (the message says why)."""


def is_raspberry_pi(model_file: str = "/proc/device-tree/model") -> bool:
    """True when the device-tree model names a Raspberry Pi."""
    try:
        return "raspberry pi" in Path(model_file).read_text(errors="replace").lower()
    except OSError:
        return False


def _mock() -> Any:
    """gpiozero's mock pins: the default factory when it is a MockFactory already (a test's,
    whose pins it drives), else a new one with PWM pins (for the buzzer)."""
    from gpiozero import Device
    from gpiozero.pins.mock import MockFactory, MockPWMPin

    if isinstance(Device.pin_factory, MockFactory):
        return Device.pin_factory
    return MockFactory(pin_class=MockPWMPin)


def _default_factory_quietly() -> Any:
    """gpiozero's own choice of factory (``Device._default_pin_factory()``), its fallback
    warnings (``PinFactoryFallback``: one Python warning of several lines per library it could
    not load, ``NativePinFactoryFallback``) kept off stderr: they are put in one log line
    instead (INFO) when a factory was found, or in the error when none was.

    Returns:
        the factory.

    Raises:
        PinFactoryError: no factory loads (gpiozero's ``BadPinFactory``), its message followed
            by each library's reason (``Falling back from lgpio: No module named 'lgpio'``...).
    """
    import warnings

    from gpiozero import Device
    from gpiozero.exc import NativePinFactoryFallback, PinFactoryFallback

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PinFactoryFallback)
        warnings.simplefilter("always", NativePinFactoryFallback)
        try:
            factory = Device._default_pin_factory()
        except Exception as exc:
            reasons = "; ".join(str(w.message) for w in caught)
            raise PinFactoryError(f"{exc} ({reasons})" if reasons else str(exc)) from None
    fallbacks = [str(w.message) for w in caught
                 if issubclass(w.category, (PinFactoryFallback, NativePinFactoryFallback))]
    for w in caught:  # any other warning goes on as it came
        if not issubclass(w.category, (PinFactoryFallback, NativePinFactoryFallback)):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if fallbacks:
        log.info("gpiozero chose %s: %s", type(factory).__name__, "; ".join(fallbacks))
    return factory


def make_pin_factory(name: str = "auto") -> tuple[Any, bool]:
    """Build the pin factory named ``name``.

    Returns:
        ``(factory, is_mock)``.

    Raises:
        PinFactoryError: an explicit real factory (``lgpio``...) cannot start, naming the
            cause (not a Pi, library not installed, no permission on /dev/gpiochip*).
    """
    if name == "mock" or (name == "auto" and not is_raspberry_pi()):
        if name == "auto":
            log.info("no GPIO here (not a Raspberry Pi): running on gpiozero's mock pins")
        return _mock(), True
    wanted = {"lgpio": "LGPIOFactory", "rpigpio": "RPiGPIOFactory", "native": "NativeFactory"}
    try:
        if name == "auto":
            factory = _default_factory_quietly()
        else:
            module = {
                "lgpio": "gpiozero.pins.lgpio",
                "rpigpio": "gpiozero.pins.rpigpio",
                "native": "gpiozero.pins.native",
            }[name]
            import importlib

            factory = getattr(importlib.import_module(module), wanted[name])()
        return factory, False
    except Exception as exc:  # gpiozero raises many kinds here (BadPinFactory, ImportError...)
        if name == "auto":
            log.warning("GPIO unavailable (%s): running on gpiozero's mock pins", exc)
            return _mock(), True
        raise PinFactoryError(f"[service] pin_factory = {name!r} cannot start: {exc}") from None
