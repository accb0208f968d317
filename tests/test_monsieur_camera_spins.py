"""Spins seen by the camera alone (companion/rotation/camera_spin.py): a start when the marker
leaves its rest, a stop after the settle time, the turns counted only when followed."""

from __future__ import annotations

import pytest

from companion.rotation.camera_spin import CameraSpinTracker


def feed(tracker, readings):
    out = []
    for t, a in readings:
        out += tracker.feed(t, a)
    return out


def rest(tracker, t0, angle, n=6, dt=0.1):
    return feed(tracker, [(round(t0 + i * dt, 3), angle) for i in range(n)])


def test_a_followed_spin_counts_its_turns_and_rests_after_the_swing_back():
    tr = CameraSpinTracker(settle_s=0.5)
    assert rest(tr, 0.0, 10.0) == [] and tr.rest_deg == pytest.approx(10.0)
    # 1.5 turns counter-clockwise in steps of 45 degrees a frame, then 1 degree back
    spin = [(round(0.5 + 0.1 * i, 3), (10.0 + 45.0 * i) % 360) for i in range(1, 13)] + [(1.8, 190.5), (1.9, 190.0)]
    events = feed(tr, spin)
    assert [e.kind for e in events] == ["started"]
    assert events[0].t == pytest.approx(0.5) and events[0].angle_deg == pytest.approx(10.0)
    events = rest(tr, 2.0, 190.0, n=5)
    assert [e.kind for e in events] == ["stopped"]
    stop = events[0]
    assert stop.followed and stop.direction == "ccw"
    assert stop.turns == pytest.approx(1.5, abs=0.01) and stop.angle_deg == pytest.approx(190.0)
    assert tr.rest_deg == pytest.approx(190.0) and not tr.moving


def test_a_clockwise_spin_and_noise_at_rest():
    tr = CameraSpinTracker(settle_s=0.3)
    rest(tr, 0.0, 100.0)
    assert feed(tr, [(0.6, 100.8), (0.7, 99.4), (0.8, 100.3)]) == []  # reading noise is no spin
    events = feed(tr, [(round(0.8 + 0.1 * i, 3), (100.0 - 60.0 * i) % 360) for i in range(1, 8)])
    events += rest(tr, 1.6, (100.0 - 420.0) % 360, n=5)
    stop = events[-1]
    assert stop.kind == "stopped" and stop.direction == "cw" and stop.turns == pytest.approx(-420 / 360, abs=0.01)


def test_a_marker_lost_during_the_spin_is_not_followed():
    tr = CameraSpinTracker(settle_s=0.3)
    rest(tr, 0.0, 0.0)
    events = feed(tr, [(0.6, 40.0), (0.7, None), (0.8, None), (0.9, None), (1.0, 300.0)])
    events += rest(tr, 1.1, 300.0, n=5)
    assert [e.kind for e in events] == ["started", "stopped"]
    assert not events[-1].followed and events[-1].turns is None


def test_a_step_too_large_to_unwrap_is_not_followed():
    tr = CameraSpinTracker(settle_s=0.3, max_step_deg=100.0)
    rest(tr, 0.0, 0.0)
    events = feed(tr, [(0.6, 50.0), (0.7, 170.0)]) + rest(tr, 0.8, 170.0, n=5)
    assert not events[-1].followed


def test_a_hand_over_the_roof_at_rest_is_no_spin():
    tr = CameraSpinTracker(settle_s=0.3)
    rest(tr, 0.0, 42.0)
    events = feed(tr, [(0.6 + 0.1 * i, None) for i in range(20)]) + rest(tr, 2.6, 42.3)
    assert events == [] and tr.rest_deg == pytest.approx(42.0)
    # but put back elsewhere: a spin the camera did not follow
    events = feed(tr, [(3.5, None), (3.6, None), (3.7, 130.0)]) + rest(tr, 3.8, 130.0)
    assert [e.kind for e in events] == ["started", "stopped"] and not events[-1].followed


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError):
        CameraSpinTracker(max_step_deg=200)
