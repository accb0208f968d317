"""A simulated game that cannot keep up with ``--speed`` says so: once when it is 2 s of real
time late, with the speed the machine keeps, and again only when the delay doubles. Real time
is a fake monotonic clock moved by hand: nothing sleeps."""

from __future__ import annotations

import logging
import threading

import pytest

from companion.clock import PacedClock


@pytest.fixture
def real():
    """A fake real clock, moved by hand; each PacedClock is given it (``monotonic=``)."""
    return [100.0]


def paced_clock(real, speed):
    return PacedClock(0.0, speed=speed, monotonic=lambda: real[0])


class Sleep(threading.Event):
    """An event never set whose ``wait(timeout)`` moves the fake real time by ``timeout``:
    the sleep of a clock that is early."""

    def __init__(self, real):
        super().__init__()
        self.real = real

    def wait(self, timeout=None):
        self.real[0] += timeout
        return False


def test_falling_behind_is_said_once_then_at_each_doubling(real, caplog):
    caplog.set_level(logging.WARNING, logger="companion.clock")
    paced = paced_clock(real, 10.0)
    event = threading.Event()
    said = lambda: [r.getMessage() for r in caplog.records if "falls behind" in r.getMessage()]  # noqa: E731
    assert paced.wait(Sleep(real), until=0.0) is False  # the game's first wait
    # each event takes 1 s of real time where --speed 10 gives it 0.5 s: 0.5 s later each step
    for k in range(1, 30):
        real[0] += 1.0
        assert paced.wait(event, until=5.0 * k) is False and paced.now() == 5.0 * k
    # late 0.5 s per step: 2 s at step 4, 4 s at step 8, 8 s at step 16; not yet 16 s at step 29
    assert len(said()) == 3, said()
    assert said()[0].startswith("the simulated game falls behind --speed 10: 2.0 s of real time late")
    assert "keeps about 5.0 x real time" in said()[0]
    assert paced.behind_s == pytest.approx(14.5)


def test_a_game_that_keeps_up_says_nothing(real, caplog):
    caplog.set_level(logging.WARNING, logger="companion.clock")
    paced = paced_clock(real, 10.0)
    sleep = Sleep(real)
    assert paced.wait(sleep, until=0.0) is False
    for k in range(1, 30):
        real[0] += 0.4  # each event takes 0.4 s where --speed 10 gives it 0.5 s: the clock sleeps
        assert paced.wait(sleep, until=5.0 * k) is False and paced.now() == 5.0 * k
        assert real[0] == pytest.approx(100.0 + 0.5 * k)  # on time after each sleep
    assert not [r for r in caplog.records if "falls behind" in r.getMessage()]
    assert paced.behind_s == 0.0


def test_the_start_up_is_not_counted_and_a_delay_under_two_seconds_says_nothing(real, caplog):
    caplog.set_level(logging.WARNING, logger="companion.clock")
    paced = paced_clock(real, 10.0)
    real[0] += 5.0  # the service's start-up (the parts opened, the first frame rendered)
    assert paced.wait(Sleep(real), until=0.0) is False and paced.behind_s == 0.0
    real[0] += 1.9  # one long event (a slow first frame): late, but under 2 s
    assert paced.wait(Sleep(real), until=0.5) is False
    assert paced.behind_s == pytest.approx(1.85)
    assert not [r for r in caplog.records if "falls behind" in r.getMessage()]
