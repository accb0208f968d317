"""``python -m tests.mock_pins_main ARGS...``: ``companion ARGS...`` in a child process whose real
table (``--table hardware``) may play on gpiozero's mock pins when its configuration says
``[service] pin_factory = "mock"`` (:func:`companion.pins.mock_pins_for_tests`), as the
``mock_factory`` fixture allows in the test process. Run it from the repository's root (the
``tests`` folder is found from there). Exit status: the command's."""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    """Run ``companion argv`` with mock pins lent to real tables; return its exit status."""
    from gpiozero.pins.mock import MockFactory, MockPWMPin

    from companion.cli import main as companion
    from companion.pins import mock_pins_for_tests

    with mock_pins_for_tests(MockFactory(pin_class=MockPWMPin)):
        return companion(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
