"""The GPIO encoder counts quadrature edges, 4 per line, like the Pico and the simulated shaft:
one unit (counts per turn = 4 x ``[encoder] lines_per_rev``) on every backend. Driven on
gpiozero's mock pins (the shared ``mock_factory`` fixture)."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import pytest

from companion.clock import ManualClock
from companion.config import validate
from companion.rotation import reader_from_config, source_from_config
from companion.rotation.gpio import INVALID, TRANSITIONS, GpioEncoder, quadrature_step
from companion.rotation.samples import CountSample, IndexPulse

ROOT = Path(__file__).resolve().parents[1]
FORWARD = (0, 1, 3, 2)  # pin states (B << 1) | A, "A leads B"


def _firmware_quadrature():
    spec = importlib.util.spec_from_file_location("fw_quadrature", ROOT / "firmware" / "quadrature.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _drive(a, b, state):
    """Set the mock pins to pin state ``state`` (one channel at a time, as a real encoder)."""
    for pin, level in ((a, state & 1), (b, state >> 1 & 1)):
        if pin.state != level:
            pin.drive_high() if level else pin.drive_low()


def _turn(a, b, edges, start=3):
    """``edges`` quadrature edges forward (negative: backward) from pin state ``start``."""
    i = FORWARD.index(start)
    step = 1 if edges >= 0 else -1
    for _ in range(abs(edges)):
        i = (i + step) % 4
        _drive(a, b, FORWARD[i])
    return FORWARD[i]


def test_the_transition_table_is_the_picos():
    fw = _firmware_quadrature()
    assert TRANSITIONS == fw.TRANSITIONS and INVALID == fw.INVALID
    assert [quadrature_step(p, c) for p, c in zip(FORWARD, FORWARD[1:] + FORWARD[:1])] == [1, 1, 1, 1]
    assert quadrature_step(0, 3) == INVALID and quadrature_step(2, 2) == 0


def test_one_turn_of_a_600_line_encoder_is_2400_counts_on_every_backend(mock_factory):
    """The bug: gpiozero's RotaryEncoder gave 600 per turn where 2400 are configured."""
    config = validate({"encoder": {"backend": "gpio", "lines_per_rev": 600, "index": True}})
    readers = {b: reader_from_config(config, b, pin_factory=mock_factory) for b in ("gpio", "pico", "sim")}
    assert {b: r.counts_per_rev for b, r in readers.items()} == {"gpio": 2400, "pico": 2400, "sim": 2400}
    enc = readers["gpio"]
    enc.rate_hz = None  # no heartbeat thread: only the pins' edges (and the first count)
    got = []
    enc.start(got.append, ManualClock())
    a, b, idx = (mock_factory.pin(n) for n in (17, 27, 4))
    assert (a.state, b.state) == (1, 1)  # pull-ups: at rest both channels read high
    state = _turn(a, b, 2400)  # 600 full quadrature cycles = one turn
    idx.drive_low()
    idx.drive_high()
    counts = [s.count for s in got if isinstance(s, CountSample)]
    assert counts[-1] == 2400 and len(counts) == 2400 + 1  # one sample per edge, and the first
    assert counts[1:] == list(range(1, 2401))
    assert [s.count for s in got if isinstance(s, IndexPulse)] == [2400]
    _turn(a, b, -600, start=state)  # a quarter turn back
    assert enc.count == 1800 and enc.missed_edges == 0
    enc.stop()


def test_tracker_from_config_measures_one_turn_as_one_revolution(mock_factory):
    clock = ManualClock()
    config = validate({"encoder": {"backend": "gpio", "lines_per_rev": 24, "index": False, "settle_s": 0.1,
                                   "deadband_counts": 1}})
    src = source_from_config(config, pin_factory=mock_factory)
    src.reader.rate_hz = None  # heartbeats by hand, on the manual clock
    obs = []
    src.start(obs.append, clock)
    a, b = mock_factory.pin(17), mock_factory.pin(27)
    state = 3
    for _ in range(96):  # 24 lines = 96 edges, one every 5 ms
        clock.advance(0.005)
        state = _turn(a, b, 1, start=state)
    for _ in range(30):
        clock.advance(0.01)
        src.reader.heartbeat()
    assert [o.type for o in obs] == ["spin_started", "spin_stopped"]
    assert obs[1].revolutions == pytest.approx(1.0, abs=1 / 96)
    src.stop()


def test_chatter_on_one_channel_cancels_and_a_missed_edge_moves_nothing(mock_factory):
    enc = GpioEncoder(17, 27, None, lines_per_rev=24, pin_factory=mock_factory, rate_hz=None)
    enc.start(lambda s: None, ManualClock())
    a, b = mock_factory.pin(17), mock_factory.pin(27)
    state = _turn(a, b, 10)
    for _ in range(7):  # contact bounce at rest: one channel flips back and forth
        a.drive_low() if a.state else a.drive_high()
        a.drive_low() if a.state else a.drive_high()
    assert enc.count == 10
    enc._a_changed(0.0, a.state)  # a callback reporting the level the channel already had
    assert enc.count == 10 and enc.missed_edges == 1
    _turn(a, b, 5, start=state)
    assert enc.count == 15
    enc.stop()
    enc.stop()


def test_the_gpio_count_agrees_with_the_picos_decoder_on_a_random_walk(mock_factory):
    fw = _firmware_quadrature()
    rng = random.Random(3)
    enc = GpioEncoder(17, 27, None, lines_per_rev=600, pin_factory=mock_factory, rate_hz=None)
    enc.start(lambda s: None, ManualClock())
    a, b = mock_factory.pin(17), mock_factory.pin(27)
    pico = fw.QuadratureDecoder(state=3)
    state = 3
    for _ in range(2000):
        state = _turn(a, b, rng.choice((-1, 1, 1)), start=state)
        pico.feed(state)
    assert enc.count == pico.count and pico.errors == 0 and abs(enc.count) > 100
    enc.stop()


def test_bad_lines_per_rev_is_refused():
    with pytest.raises(ValueError, match="lines_per_rev"):
        GpioEncoder(17, 27, lines_per_rev=0)
