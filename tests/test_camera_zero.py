"""Camera and encoder together (companion/rotation/camera_zero.py): the camera's angle at rest
gives an encoder without an index magnet its absolute zero; a carousel that slipped on its
shaft is called, re-zeroed, and its spin asked again by the referee."""

from __future__ import annotations

import pytest

from companion.games.monsieur_carrousel import (
    DieRolled,
    GameStart,
    KidSeated,
    MonsieurCarrouselReferee,
)
from companion.rotation.angle import AngleModel
from companion.rotation.camera_zero import CameraZero, CarouselSlipped, ZeroedRotation
from companion.rotation.samples import CountSample
from companion.rotation.spin import SpinDetector
from companion.rotation.tracker import RotationTracker

CPR = 2400  # counts per turn


def make():
    tracker = RotationTracker(AngleModel(CPR, has_index=False), SpinDetector(settle_s=0.25, deadband_counts=3))
    told: list = []
    released: list = []
    zero = CameraZero(tracker, tolerance_deg=5.0, hold_s=2.0, tell=told.append)
    emit = zero.wrap(released.append)
    return tracker, zero, emit, told, released


def run(tracker, emit, t0, counts, dt=0.01):
    """Feed counts every ``dt`` seconds from ``t0``; every observation goes to ``emit``."""
    t = t0
    for c in counts:
        for obs in tracker.feed(CountSample(t=round(t, 4), count=int(c))):
            emit(obs)
        t += dt
    return t


def spin(tracker, emit, t0, start, turn_counts, rest_s=0.6):
    """A spin of ``turn_counts`` from ``start`` over 1 s, then ``rest_s`` of rest samples."""
    n = 100
    counts = [start + turn_counts * (1 - (1 - (i + 1) / n) ** 2) for i in range(n)]
    t = run(tracker, emit, t0, counts)
    return run(tracker, emit, t, [start + turn_counts] * int(rest_s / 0.01))


def test_without_an_index_the_encoder_waits_for_the_camera_then_takes_its_zero():
    tracker, zero, emit, told, released = make()
    assert not tracker.angle.referenced  # the power-on angle is no zero
    t = run(tracker, emit, 0.0, [500] * 50)
    assert zero.at_rest(t, 123.0) == [] and zero.zeroed
    assert tracker.angle_deg() == pytest.approx(123.0)
    # half a turn counter-clockwise: the encoder's stop is held until the camera sees the rest
    t = spin(tracker, emit, t, 500, CPR // 2)
    assert [o.TYPE for o in released] == ["spin_started"]  # the start goes on at once
    out = zero.at_rest(t, 303.4)
    assert len(out) == 1 and released[1:] == out
    stop = out[0]
    assert stop.TYPE == "spin_stopped" and not stop.uncertain
    assert stop.angle_deg == pytest.approx(303.0, abs=0.01) and stop.revolutions == pytest.approx(0.5)
    assert told == [] and zero.slips == 0


def test_a_stop_before_the_first_zero_takes_the_camera_angle():
    tracker, zero, emit, told, released = make()
    t = run(tracker, emit, 0.0, [0] * 30)
    t = spin(tracker, emit, t, 0, CPR * 1.25)
    out = zero.at_rest(t, 200.0)  # the camera's first sight of the carousel at rest
    assert zero.zeroed and out[0].angle_deg == pytest.approx(200.0)
    assert not out[0].uncertain and out[0].revolutions == pytest.approx(1.25)  # the turns were counted
    assert tracker.angle_deg() == pytest.approx(200.0)


def test_a_slipped_carousel_is_called_re_zeroed_and_the_spin_asked_again():
    tracker, zero, emit, told, released = make()
    t = run(tracker, emit, 0.0, [0] * 30)
    zero.at_rest(t, 10.0)
    # the disc turned 1.2 turns, but its shaft slipped: the encoder counted 1.1 turns
    t = spin(tracker, emit, t, 0, int(CPR * 1.1))
    out = zero.at_rest(t, (10.0 + 1.2 * 360) % 360)
    assert zero.slips == 1 and len(told) == 1
    call = told[0]
    assert isinstance(call, CarouselSlipped) and call.TYPE == "carousel_slipped"
    assert call.offset_deg == pytest.approx(36.0, abs=0.1)
    stop = out[0]
    assert stop.uncertain and "slipped" in stop.reason
    assert stop.angle_deg == pytest.approx(82.0, abs=0.01)
    assert tracker.angle_deg() == pytest.approx(82.0)  # recalibrated on the camera
    # the referee asks for the spin again rather than judge a slipped spin
    ref = MonsieurCarrouselReferee()
    state, _ = ref.apply(ref.initial_state(), GameStart(t=0.0, players=("Ana",)))
    state, calls = ref.apply(state, DieRolled(t=1.0, colour="red"))
    seat = calls[-1].seats[0]
    state, _ = ref.apply(state, KidSeated(t=2.0, seat=seat))
    game_stop = ref.vocabulary.observation({**stop.to_json(), "t": 3.0})
    state, calls = ref.apply(state, game_stop)
    assert [c.TYPE for c in calls] == ["spin_again"] and calls[0].reason == "uncertain"
    # the next spin agrees again: no call
    t = spin(tracker, emit, t + 1, int(CPR * 1.1), CPR)
    zero.at_rest(t, 82.3)
    assert zero.slips == 1 and len(told) == 1


def test_a_small_difference_is_no_slip_and_a_stop_the_camera_never_sees_goes_on():
    tracker, zero, emit, told, released = make()
    t = run(tracker, emit, 0.0, [0] * 30)
    zero.at_rest(t, 0.0)
    t = spin(tracker, emit, t, 0, CPR)
    out = zero.at_rest(t, 3.0)  # within the 5 degree tolerance
    assert told == [] and not out[0].uncertain
    t = spin(tracker, emit, t, CPR, CPR // 4)
    assert zero.frame(t + 0.5) == []  # still waiting for the camera (hold 2 s)
    late = zero.frame(t + 2.5)  # a hand over the roof: the stop goes on unchecked
    assert len(late) == 1 and late[0].TYPE == "spin_stopped"


def test_the_wrapper_starts_the_encoder_through_the_check():
    started = []

    class Source:
        tracker = RotationTracker(AngleModel(CPR, has_index=True), SpinDetector())

        def start(self, emit, clock):
            started.append(emit)

        def stop(self):
            started.append("stopped")

        def marker_reference(self, angle):
            return self.tracker.marker_reference(angle)

    src = Source()
    zero = CameraZero(src, convert=lambda o: ("converted", o))
    assert src.tracker.angle.has_index  # with an index magnet the model is left as it is
    out = []
    wrapped = ZeroedRotation(src, zero)
    wrapped.start(out.append, None)
    started[0](type("Obs", (), {"TYPE": "spin_started"})())
    assert out and out[0][0] == "converted"
    wrapped.stop()
    assert started[-1] == "stopped"
    with pytest.raises(ValueError):
        CameraZero(src, tolerance_deg=0)


def test_the_camera_source_zeroes_the_encoder_and_catches_a_slip_from_rendered_frames():
    """The Monsieur camera source's rests (rendered frames read by the reader) drive the check."""
    from companion.sources.monsieur_camera import MonsieurCameraSource
    from companion.vision.monsieur import MonsieurReader
    from companion.vision.sim_monsieur import (
        MonsieurConditions,
        MonsieurScene,
        SimulatedMonsieurCamera,
    )

    tracker, zero, emit, told, released = make()
    now = [0.0]
    cam = SimulatedMonsieurCamera(seed=8, conditions=MonsieurConditions(tilt_deg=6.0, exposure_s=0.002),
                                  clock=lambda: now[0], scene=MonsieurScene(angle_deg=70.0))
    src = MonsieurCameraSource(cam, MonsieurReader(), settle_s=0.3, spins=False, on_rest=zero.at_rest,
                               on_frame=zero.frame)
    count = [0]

    def encoder_until(t_end, target):
        """Encoder samples every 10 ms up to ``t_end``, the count moving towards ``target``."""
        while round(count_t[0], 3) < t_end:
            count[0] += max(-40, min(40, target - count[0]))
            for obs in tracker.feed(CountSample(t=round(count_t[0], 3), count=int(count[0]))):
                emit(obs)
            count_t[0] += 0.01

    count_t = [0.0]
    observations = []
    for i in range(8):  # the carousel at rest: the camera gives the encoder its zero
        now[0] = round(0.1 * i, 3)
        encoder_until(now[0], 0)
        observations += src.step(now[0])
    assert zero.zeroed and tracker.angle_deg() == pytest.approx(70.0, abs=1.5)
    # the disc turns 1.2 turns in 1.5 s, but the encoder on its slipping shaft counts 1.1 turns
    cam.spin(0.8, 1.2 * 360.0, 1.5, rock_back_deg=0.0)
    for i in range(8, 36):
        now[0] = round(0.1 * i, 3)
        encoder_until(now[0], int(1.1 * CPR))
        observations += src.step(now[0])
    assert not [o for o in observations if o.TYPE.startswith("spin")]  # the encoder reports the spins
    assert zero.slips == 1 and told and told[0].TYPE == "carousel_slipped"
    assert abs(told[0].offset_deg - 36.0) < 2.0
    stops = [o for o in released if o.TYPE == "spin_stopped"]
    assert len(stops) == 1 and stops[0].uncertain
    assert abs((tracker.angle_deg() - (70.0 + 1.2 * 360.0) % 360 + 180) % 360 - 180) < 1.5


@pytest.mark.parametrize("lang", ["en", "fr", "pt-BR"])
def test_the_camera_s_service_calls_have_a_sentence_and_a_signal(lang):
    from companion.announcers.signals import Signals
    from companion.announcers.speech import Catalogue
    from companion.sources.monsieur_camera import FullTurnAsked

    catalogue = Catalogue(lang)
    for call in (CarouselSlipped(t=1.0, part="carousel", offset_deg=12.0), FullTurnAsked(t=1.0)):
        text = catalogue.text(call, "monsieur-carrousel")
        assert text and "{" not in text and "_" not in text, (lang, call.TYPE, text)
    assert {"carousel_slipped", "full_turn_asked"} <= Signals().types("monsieur-carrousel")
