"""Shared fixtures.

``mock_factory``: gpiozero's :class:`~gpiozero.pins.mock.MockFactory` (with PWM pins, for the
buzzer) as the default pin factory for one test, reset and restored after it (as gpiozero's own
tests do). A service configured with ``[service] pin_factory = "mock"`` uses this same factory,
so a test drives the very pins the service's buttons read (``mock_factory.pin(5).drive_low()``).
It also lends the factory to real tables (``--table hardware``) for the test
(:func:`companion.pins.mock_pins_for_tests`): the tests' emulated hardware is the one way a
real table plays on pretend pins; without it, ``pin_factory = "mock"`` there is refused.
A child process (``python -m tests.mock_pins_main ARGS``) does the same for ``companion ARGS``.

``browser``: Debian's headless Chromium driven by Playwright (tests/web_page.py), one per test
module.
"""

from __future__ import annotations

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPWMPin


@pytest.fixture
def mock_factory():
    """The pin factory of one test: MockFactory with MockPWMPin, set as gpiozero's default and
    lent to real tables (``[service] pin_factory = "mock"`` with ``--table hardware``)."""
    from companion.pins import mock_pins_for_tests

    saved = Device.pin_factory
    factory = MockFactory(pin_class=MockPWMPin)
    Device.pin_factory = factory
    with mock_pins_for_tests(factory):
        yield factory
    factory.reset()
    Device.pin_factory = saved


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium (Playwright with the system browser) for one test module."""
    from tests.web_page import launch_browser

    pw, b = launch_browser()
    yield b
    b.close()
    pw.stop()
