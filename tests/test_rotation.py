"""Angle model, spin detector, layout mapping, simulated shaft, gpiozero reader, tracker."""

from __future__ import annotations

import math

import pytest

from companion.clock import ManualClock
from companion.events import Vocabulary
from companion.rotation.angle import AngleModel
from companion.rotation.layout import AMBIGUOUS, LayoutError, RotaryLayout, Sector, load_layout
from companion.rotation.observations import SpinStarted, SpinStopped
from companion.rotation.samples import CountSample, IndexPulse, LinkLost, LinkRestored
from companion.rotation.simulated import SimulatedShaft
from companion.rotation.spin import SpinDetector, min_decel_counts_s2
from companion.rotation.tracker import RotationTracker

# ---- angle model ------------------------------------------------------------------------


def test_angle_from_counts_and_direction():
    a = AngleModel(2400, has_index=False)
    assert a.angle_deg(600) == 90.0 and a.angle_deg(-600) == 270.0
    assert AngleModel(2400, direction=-1, has_index=False).angle_deg(600) == 270.0


def test_unreferenced_until_first_index_then_index_angle():
    a = AngleModel(2400, index_angle_deg=30.0)
    assert not a.referenced
    check = a.on_index(1000)
    assert check.first and a.referenced
    assert a.angle_deg(1000) == pytest.approx(30.0)
    assert a.angle_deg(1600) == pytest.approx(120.0)


def test_small_drift_is_corrected_at_the_index():
    a = AngleModel(2400)
    a.on_index(0)
    check = a.on_index(2405)  # 5 counts slipped in a turn
    assert check.accepted and check.drift_counts == 5
    assert a.angle_deg(2405) == pytest.approx(0.0)


def test_large_disagreement_is_flagged():
    a = AngleModel(2400)
    a.on_index(0)
    assert not a.on_index(2400 + 300).accepted


def test_missed_index_pulse_detected_after_one_and_a_half_turns():
    a = AngleModel(2400)
    a.on_index(0)
    assert not a.check_missed_index(3500)
    assert a.check_missed_index(3700)


def test_marker_reference():
    a = AngleModel(2400)
    a.set_reference(123, 45.0)
    assert a.referenced and a.angle_deg(123) == pytest.approx(45.0)


# ---- spin detector ----------------------------------------------------------------------


def _run(detector, samples):
    out = []
    for t, c in samples:
        out += detector.feed(t, c)
    return out


def test_jitter_at_rest_is_not_a_spin():
    d = SpinDetector(0.25, deadband_counts=3)
    out = _run(d, [(i * 0.01, 100 + (i % 3) - 1) for i in range(500)])
    assert out == []


def test_spin_start_and_stop_after_settle_time():
    d = SpinDetector(0.25, 3)
    samples = [(i * 0.01, 0) for i in range(10)]
    samples += [(0.1 + i * 0.01, 10 * i) for i in range(1, 100)]
    samples += [(1.1 + i * 0.01, 990) for i in range(60)]
    out = _run(d, samples)
    assert [k for k, _ in out] == ["started", "stopped"]
    stop = out[1][1]
    assert stop.stop_count == 990
    assert stop.stop_t - 1.09 == pytest.approx(0.25, abs=0.011)


@pytest.mark.parametrize("decel_rps2", [0.3, 0.5, 1.0, 3.0])
def test_a_slowing_spin_is_never_taken_for_a_stop(decel_rps2):
    """Constant deceleration from 2 turns/s to rest: exactly one stop, after the last motion."""
    cpr = 2400
    d = SpinDetector(0.25, 3)
    a = decel_rps2 * cpr
    v0 = 2 * cpr
    t_end = v0 / a
    samples = [(0.0, 0)]
    t = 0.0
    while t < t_end + 1.0:
        t += 0.001
        tt = min(t, t_end)
        samples.append((t, math.floor(v0 * tt - a * tt * tt / 2)))
    out = _run(d, samples)
    assert [k for k, _ in out] == ["started", "stopped"]
    assert out[1][1].stop_t >= t_end


def test_settle_time_bound():
    assert min_decel_counts_s2(0.25, 3) == pytest.approx(128.0)


def _spinning(d, until=0.5):
    """Rest at 0, then 10 counts every 10 ms until ``until`` (s); returns the events."""
    out = _run(d, [(0.0, 0), (0.01, 0)])
    t, c = 0.01, 0
    while t < until - 1e-9:
        t, c = round(t + 0.01, 2), c + 10
        out += d.feed(t, c)
    return out


def test_silence_during_a_spin_is_not_a_stop():
    """No sample for far longer than the settle time (a serial link gone quiet before its
    loss is detected): time alone never declares the stop."""
    d = SpinDetector(0.25, 3)
    assert [k for k, _ in _spinning(d)] == ["started"]
    for i in range(1, 200):
        assert d.tick(0.5 + i * 0.01) == []
    assert d.spinning


def test_a_heartbeat_after_the_settle_time_gives_the_stop():
    """Heartbeats at rest: none before the settle time has passed since the last motion
    declares the stop; the first one after it does, at its own time."""
    d = SpinDetector(0.25, 3)
    _spinning(d)  # last motion at 0.5 s, count 490
    assert d.feed(0.6, 490) == [] and d.tick(0.74) == []
    assert d.feed(0.74, 490) == []  # 0.24 s after the last motion
    assert d.tick(5.0) == []  # late, but the samples do not cover the settle time yet
    ((kind, stop),) = d.feed(0.9, 490)
    assert kind == "stopped" and stop.stop_t == 0.9 and stop.stop_count == 490
    assert d.tick(6.0) == [] and not d.spinning


def test_motion_seen_after_a_silence_continues_the_spin():
    """The first sample after a silence (a reader behind on a busy machine, a link back
    after a drop) shows the part moved meanwhile: the same spin goes on, one stop at the
    end with the whole turn."""
    d = SpinDetector(0.25, 3)
    out = _spinning(d)
    out += [e for i in range(1, 60) for e in d.tick(0.5 + i * 0.01)]
    out += d.feed(1.1, 1490)  # moved 1000 counts during the silence
    for i in range(1, 40):
        out += d.feed(1.1 + i * 0.01, 1490)
    assert [k for k, _ in out] == ["started", "stopped"]
    stop = out[1][1]
    assert stop.start_count == 0 and stop.stop_count == 1490
    assert stop.stop_t == pytest.approx(1.35)  # 0.25 s of samples at rest from the move at 1.1 s


# ---- layout -----------------------------------------------------------------------------


def test_equal_seats_under_a_fixed_pointer():
    seats = RotaryLayout.equal([f"seat{i}" for i in range(12)], margin_deg=4)
    assert seats.facing(0, 15) == "seat0"
    assert seats.facing(30, 15) == "seat11"  # the part turned ccw by one seat
    assert seats.facing(0, 31) == AMBIGUOUS  # 1 degree past a boundary
    assert seats.facing(0, 28) == AMBIGUOUS


def test_sector_crossing_zero_and_players():
    lay = RotaryLayout([Sector("sun", 300, 60), Sector("rain", 60, 300)], margin_deg=5)
    assert lay.facing(0, 0) == "sun"
    assert lay.facing(180, 0) == "rain"
    assert lay.facing_each(0, {"Ana": 0, "Ben": 180, "Cleo": 62}) == {
        "Ana": "sun", "Ben": "rain", "Cleo": AMBIGUOUS}


def test_layout_errors_name_the_field(tmp_path):
    p = tmp_path / "l.toml"
    p.write_text('margin_deg = 2\nsectors = [{ name = "a", start_deg = 0 }]\n')
    with pytest.raises(LayoutError, match=r"l.toml: sectors\[0\]: missing end_deg"):
        load_layout(p)
    with pytest.raises(LayoutError, match="overlap"):
        RotaryLayout([Sector("a", 0, 200), Sector("b", 100, 300)])
    with pytest.raises(LayoutError, match="leaves nothing"):
        RotaryLayout.equal(["a", "b", "c"], margin_deg=60)
    p.write_text('names = ["a", "b"]\nmargin_deg = 1\n')
    assert load_layout(p).facing(0, 90) == "a"


# ---- tracker ----------------------------------------------------------------------------


def _tracker(**kw):
    return RotationTracker(AngleModel(2400, **kw), SpinDetector(0.25, 3))


def test_spin_stopped_fields_and_vocabulary_round_trip():
    tr = _tracker()
    obs = tr.feed(IndexPulse(0.0, 0))
    for i in range(1, 61):
        obs += tr.feed(CountSample(i * 0.01, 60 * i))  # 1.5 turns ccw
    for i in range(1, 41):
        obs += tr.feed(CountSample(0.6 + i * 0.01, 3600))  # heartbeats at rest
    started, stopped = obs
    assert isinstance(started, SpinStarted) and isinstance(stopped, SpinStopped)
    assert stopped.revolutions == pytest.approx(1.5) and stopped.direction == "ccw"
    assert stopped.angle_deg == pytest.approx(180.0) and not stopped.uncertain
    voc = Vocabulary("test", [SpinStarted, SpinStopped], [])
    assert voc.observation(stopped.to_json()) == stopped


def test_no_reference_makes_the_stop_uncertain():
    tr = _tracker()
    obs = []
    for i in range(1, 21):
        obs += tr.feed(CountSample(i * 0.01, -30 * i))
    for i in range(1, 60):
        obs += tr.feed(CountSample(0.2 + i * 0.01, -600))  # heartbeats at rest
    assert obs[-1].uncertain and obs[-1].direction == "cw"
    assert "reference" in obs[-1].reason


def test_no_stop_while_the_link_is_down_and_restart_rebases():
    tr = _tracker()
    tr.feed(IndexPulse(0.0, 0))
    tr.feed(CountSample(0.01, 100))
    tr.feed(LinkLost(0.02, "unplugged"))
    assert tr.tick(5.0) == []
    tr.feed(LinkRestored(5.0, False))
    assert not tr.angle.referenced
    obs = [o for i in range(1, 31) for o in tr.feed(CountSample(5.0 + i * 0.01, 100))]  # at rest
    obs += tr.tick(5.5)
    assert obs[-1].uncertain and "restarted" in obs[-1].reason


def test_tracker_declares_no_stop_from_silence_while_the_link_still_counts_as_up():
    """The Pico reader counts its link lost only after 1 s without a line; meanwhile the
    tracker, still connected, must not take the silence for a stop."""
    tr = _tracker()
    obs = tr.feed(IndexPulse(0.0, 0))
    for i in range(1, 31):
        obs += tr.feed(CountSample(i * 0.01, 40 * i))
    for i in range(1, 90):
        obs += tr.tick(0.3 + i * 0.01)
    assert tr.connected and [o.type for o in obs] == ["spin_started"]
    obs += tr.feed(CountSample(1.2, 2400))  # it turned on meanwhile
    for i in range(1, 40):
        obs += tr.feed(CountSample(1.2 + i * 0.01, 2400))  # heartbeats at rest
    assert [o.type for o in obs] == ["spin_started", "spin_stopped"]
    stop = obs[-1]
    assert stop.t == pytest.approx(1.45)  # 0.25 s after the move seen at 1.2 s
    assert stop.revolutions == pytest.approx(1.0) and not stop.uncertain


def test_marker_reference_at_rest_only():
    tr = _tracker()
    assert tr.marker_reference(10.0) is None  # no count yet
    tr.feed(CountSample(0.0, 0))
    assert tr.marker_reference(90.0) is not None
    assert tr.angle.referenced and tr.angle_deg() == pytest.approx(90.0)
    tr.feed(CountSample(0.01, 600))  # spinning now
    assert tr.marker_reference(0.0) is None
    assert tr.angle_deg() == pytest.approx(180.0)


# ---- simulated shaft --------------------------------------------------------------------


def test_simulated_flick_slows_down_and_stops_with_index_pulses():
    sim = SimulatedShaft(seed=3, spin_every_s=None, bounce_p=0, jitter_p=0, viscous_nms=0)
    samples = []
    sim.flick(2.0)
    sim.advance(10.0, samples.append)
    counts = [s.count for s in samples if isinstance(s, CountSample)]
    index = [s for s in samples if isinstance(s, IndexPulse)]
    expected_turns = 2.0**2 / (2 * sim.decel_rps2)  # v^2 / 2a with Coulomb friction only
    assert counts[-1] / 2400 == pytest.approx(expected_turns, rel=0.1)
    assert counts[-1] == counts[-50]  # at rest at the end
    assert [p.count for p in index] == [2400 * k for k in range(1, len(index) + 1)]


def test_simulated_shaft_is_deterministic_and_spins_by_itself():
    def run():
        sim = SimulatedShaft(seed=9, spin_every_s=3.0)
        out = []
        sim.advance(30.0, out.append)
        return [s for s in out if isinstance(s, CountSample)]

    a, b = run(), run()
    assert a == b and len({s.count for s in a}) > 100


def test_tracker_on_simulated_spins_reports_each_stop_once():
    sim = SimulatedShaft(seed=5, spin_every_s=6.0, bounce_p=0.05, jitter_p=0.05)
    tr = _tracker()
    obs = []
    sim.advance(60.0, lambda s: obs.extend(tr.feed(s)))
    kinds = [o.type for o in obs]
    assert kinds.count("spin_started") >= 4
    assert all(a != b for a, b in zip(kinds, kinds[1:])), kinds  # strictly alternating
    assert tr.angle.referenced
    assert tr.angle_deg() == pytest.approx((sim.count % 2400) * 0.15, abs=0.31)


# ---- gpiozero reader --------------------------------------------------------------------


def test_gpio_encoder_counts_unbounded_with_index(mock_factory):
    from companion.rotation.gpio import GpioEncoder

    enc = GpioEncoder(17, 27, 4, lines_per_rev=24, bounce_s=None, pin_factory=mock_factory,
                      rate_hz=None)
    got = []
    enc.start(got.append, ManualClock())
    a, b, idx = (mock_factory.pin(n) for n in (17, 27, 4))
    for _ in range(30):  # 30 full quadrature cycles forward (more than gpiozero's default 16)
        a.drive_low(); b.drive_low(); a.drive_high(); b.drive_high()
    idx.drive_low()
    counts = [s.count for s in got if isinstance(s, CountSample)]
    assert counts[-1] == 4 * 30  # quadrature edges, as on the Pico
    assert [s.count for s in got if isinstance(s, IndexPulse)] == [counts[-1]]
    enc.stop()
    enc.stop()


def _quadrature_steps(a, b, n):
    for _ in range(n):
        a.drive_low(); b.drive_low(); a.drive_high(); b.drive_high()


def test_gpio_encoder_at_rest_the_heartbeat_gives_the_stop(mock_factory):
    """gpiozero reports edges only: after the last step nothing comes from the pins, so the
    stop is declared by the reader's heartbeat, once the settle time has passed (within
    0.3 s of the last motion at 100 heartbeats a second), never by silence."""
    from companion.rotation.gpio import GpioEncoder
    from companion.rotation.tracker import RotationSource

    clock = ManualClock()
    enc = GpioEncoder(17, 27, None, lines_per_rev=24, pin_factory=mock_factory, rate_hz=None)
    src = RotationSource(enc, RotationTracker(AngleModel(enc.counts_per_rev, has_index=False), SpinDetector(0.25, 1)))
    obs = []
    src.start(obs.append, clock)
    a, b = mock_factory.pin(17), mock_factory.pin(27)
    for _ in range(20):  # a knob turned by hand: a step every 20 ms
        clock.advance(0.02)
        _quadrature_steps(a, b, 1)
    last_motion = clock.now()
    assert [o.type for o in obs] == ["spin_started"]
    assert src.tracker.tick(last_motion + 1.0) == []  # pins quiet: no evidence of rest yet
    while clock.now() < last_motion + 0.5 and len(obs) < 2:
        clock.advance(0.01)
        enc.heartbeat()
    assert [o.type for o in obs] == ["spin_started", "spin_stopped"]
    assert obs[1].revolutions == pytest.approx(20 / 24, abs=1 / 24)
    assert 0.25 <= obs[1].t - last_motion <= 0.3
    src.stop()
    enc.heartbeat()  # stopped: nothing more
    assert len(obs) == 2


def test_gpio_encoder_heartbeat_thread_reports_the_count_at_rest(mock_factory):
    import threading

    from companion.clock import MonotonicClock
    from companion.rotation.gpio import GpioEncoder

    enc = GpioEncoder(17, 27, None, lines_per_rev=24, pin_factory=mock_factory, rate_hz=1000)
    got, enough = [], threading.Event()

    def on(sample):
        got.append(sample)
        if len(got) >= 6:
            enough.set()

    enc.start(on, MonotonicClock())
    try:
        assert enough.wait(5.0), got
    finally:
        enc.stop()
    n = len(got)
    assert all(isinstance(s, CountSample) and s.count == 0 for s in got)
    times = [s.t for s in got]
    assert times == sorted(times) and times[-1] > times[0]
    enc.stop()
    assert len(got) == n  # no heartbeat after stop
    with pytest.raises(ValueError, match="rate_hz"):
        GpioEncoder(17, 27, rate_hz=0)
