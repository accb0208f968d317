"""`companion run --game monsieur-carrousel --camera sim`: the referee learns the die, the kids
on seats and the spins from the simulated camera's rendered frames alone (no simulated encoder,
no simulated die reading), and its calls match the simulated table's ground truth; the camera
source's own rules (the full-turn question, a cocked die, the web page's latest frame)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from companion.assembly import assemble
from companion.clock import ManualClock
from companion.config import validate
from companion.games.monsieur_carrousel import (
    Answer,
    MonsieurCarrouselReferee,
    load_table,
)
from companion.journal import Journal
from companion.sources.monsieur_camera import (
    FullTurnAsked,
    MonsieurCameraSource,
    check_same_table,
)
from companion.vision.monsieur import MonsieurReader
from companion.vision.monsieur_geometry import MonsieurGeometry
from companion.vision.sim_monsieur import (
    MonsieurConditions,
    MonsieurScene,
    SimulatedMonsieurCamera,
)

SHIPPED = Path(__file__).resolve().parent.parent / "companion" / "data" / "calibration" / "monsieur_carrousel.toml"


def one_board(tmp_path: Path) -> Path:
    """The layouts file with the finger where the camera's geometry has it (one board)."""
    text = SHIPPED.read_text(encoding="utf-8")
    geometry = MonsieurGeometry.load()
    out = tmp_path / "monsieur_carrousel.toml"
    lines = [f"finger_deg = {geometry.finger_deg:.1f}" if line.startswith("finger_deg") else line
             for line in text.splitlines()]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def test_camera_sim_referees_from_frames_and_matches_the_truth(tmp_path):
    config = validate({"service": {"pin_factory": "mock", "announcers": ["console"]}, "sim": {"seed": 3},
                       "monsieur_carrousel": {"table_file": str(one_board(tmp_path))},
                       "monsieur_carrousel_sim": {"think_s": 1.0}})
    service = assemble("monsieur-carrousel", config, Journal(tmp_path / "j.db"), ManualClock, "sim",
                       players=["Ana", "Ben"], new=True, stream=io.StringIO(), options={"camera": "sim"})
    table = service.scheduled[0]
    truth: list = []
    react = table.react
    table.react = lambda call, t: [o for o in react(call, t) if truth.append(o) or True]
    seen: list = []
    emit = service.emit
    service.emit = lambda obs: (seen.append(obs), emit(obs))
    service.run(until=9.5)
    service.close()
    kinds = [o.TYPE for o in seen]
    # what the table really did, learnt from the frames alone
    true_die = [o.colour for o in truth if o.TYPE == "die_rolled"]
    true_seats = [o.seat for o in truth if o.TYPE == "kid_seated"]
    true_stops = [o for o in truth if o.TYPE == "spin_stopped"]
    rolled = [o.colour for o in seen if o.TYPE == "die_rolled"]
    seated = [o.seat for o in seen if o.TYPE == "kid_seated"]
    stops = [o for o in seen if o.TYPE == "spin_stopped"]
    assert rolled and rolled == true_die[: len(rolled)]
    assert seated and seated == true_seats[: len(seated)]
    assert stops and len(stops) <= len(true_stops)
    for got, want in zip(stops, true_stops):
        assert abs((got.angle_deg - want.angle_deg + 180) % 360 - 180) < 1.5
        assert abs(got.revolutions - want.revolutions) < 0.02 and got.direction == want.direction
        assert not got.uncertain
    assert "spin_started" in kinds and "seats_seen" in kinds
    # the calls made from the camera's observations equal the calls made from the true ones
    truth_by = {"die_rolled": iter(true_die), "kid_seated": iter(true_seats), "spin_stopped": iter(true_stops)}

    def true_of(o):
        if o.TYPE == "die_rolled":
            return type(o)(t=o.t, colour=next(truth_by["die_rolled"]))
        if o.TYPE == "kid_seated":
            return type(o)(t=o.t, seat=next(truth_by["kid_seated"]))
        if o.TYPE == "spin_stopped":
            w = next(truth_by["spin_stopped"])
            return type(o)(t=o.t, angle_deg=w.angle_deg, revolutions=w.revolutions, direction=w.direction)
        return o

    def calls(observations):
        ref = service.referee
        state, out = ref.initial_state(), []
        for o in sorted(observations, key=lambda o: o.t):
            state, c = ref.apply(state, o)
            out += [(x.TYPE, getattr(x, "zone", None), getattr(x, "seat", None)) for x in c]
        return out

    from_camera = calls(seen)
    assert from_camera == calls([true_of(o) for o in seen])
    assert ("weather", "sun", None) in from_camera or ("weather", "rain", None) in from_camera
    assert not any(c[0] == "invalid_observation" for c in from_camera)


@pytest.fixture(scope="module")
def reader():
    return MonsieurReader()


def source_for(camera, reader, **kwargs):
    return MonsieurCameraSource(camera, reader, settle_s=0.3, **kwargs)


def test_a_spin_under_a_hand_asks_the_kids_and_their_answer_decides(reader):
    now = [0.0]
    cam = SimulatedMonsieurCamera(seed=4, conditions=MonsieurConditions(tilt_deg=5.0, exposure_s=0.002),
                                  clock=lambda: now[0], scene=MonsieurScene(angle_deg=30.0))
    asked: list = []
    src = source_for(cam, reader, ask=asked.append)
    out: list = []

    def frames(t0, t1):
        t = t0
        while t < t1 - 1e-9:
            now[0] = round(t, 3)
            out.extend(src.step(now[0]))
            t += 0.1

    frames(0.0, 0.6)
    cam.set_hands(("roof",))  # a hand over the roof while the carousel turns
    cam.spin(0.6, 500.0, 1.5)
    frames(0.6, 2.4)
    cam.set_hands(())
    frames(2.4, 3.2)
    assert [o.TYPE for o in out] == ["seats_seen", "spin_started"] or "spin_started" in [o.TYPE for o in out]
    assert len(asked) == 1 and isinstance(asked[0], FullTurnAsked) and src.asking
    assert src.latest is not None and src.latest[1].shape == (480, 640, 3)
    again = src.take_answer(Answer(t=4.0, value="both"))
    assert [o.TYPE for o in again] == ["answer"] and len(asked) == 2  # asked again
    answer, stop = src.take_answer(Answer(t=5.0, value="yes"))
    assert stop.TYPE == "spin_stopped" and stop.revolutions == 1.0 and not stop.uncertain
    assert abs((stop.angle_deg - 170.0 + 180) % 360 - 180) < 1.5
    assert not src.asking and src.take_answer(answer) == [answer]


def test_with_nobody_to_ask_an_unfollowed_spin_stops_uncertain_and_a_cocked_die_is_unknown(reader):
    now = [0.0]
    cam = SimulatedMonsieurCamera(seed=6, conditions=MonsieurConditions(tilt_deg=5.0, exposure_s=0.002),
                                  clock=lambda: now[0], scene=MonsieurScene(angle_deg=200.0, die="edge", die_xy_mm=(150.0, -110.0)))
    src = source_for(cam, reader, die_unread_s=1.0)
    from companion.games.monsieur_carrousel import Turn

    src.announce(Turn(t=0.0, player="Ana", number=1, kids_left=12))
    out: list = []
    for i in range(8):
        now[0] = round(0.1 * i, 3)
        out += src.step(now[0])
    cam.set_hands(("roof",))
    cam.spin(0.8, -400.0, 1.5)
    for i in range(8, 40):
        now[0] = round(0.1 * i, 3)
        if i == 27:
            cam.set_hands(())
        out += src.step(now[0])
    die = [o for o in out if o.TYPE == "die_rolled"]
    assert [d.colour for d in die] == ["unknown"]  # the referee asks for another roll
    stop = [o for o in out if o.TYPE == "spin_stopped"]
    assert len(stop) == 1 and stop[0].uncertain and "roof marker" in stop[0].reason


def test_the_camera_and_the_referee_must_see_one_board(tmp_path):
    geometry = MonsieurGeometry.load()
    check_same_table(geometry, load_table(one_board(tmp_path)))
    text = one_board(tmp_path).read_text().replace(f"finger_deg = {geometry.finger_deg:.1f}", "finger_deg = 90.0")
    (tmp_path / "other.toml").write_text(text)
    with pytest.raises(ValueError, match="finger_deg"):
        check_same_table(geometry, load_table(tmp_path / "other.toml"))
    assert MonsieurCarrouselReferee  # the referee's table is the one checked


def test_a_resumed_game_goes_on_from_the_camera(tmp_path):
    """Stopped after the first kid sat down and resumed: the token is on its seat in the frames,
    the camera source knows the referee's seats, and the game goes on from the camera alone."""
    config = validate({"service": {"pin_factory": "mock", "announcers": ["console"]}, "sim": {"seed": 3},
                       "monsieur_carrousel": {"table_file": str(one_board(tmp_path))},
                       "monsieur_carrousel_sim": {"think_s": 1.0}})
    journal = Journal(tmp_path / "j.db")

    def service(new):
        return assemble("monsieur-carrousel", config, journal, ManualClock, "sim", players=["Ana", "Ben"],
                        new=new, stream=io.StringIO(), options={"camera": "sim"})

    first = service(True)
    first.run(until=6.0)
    state = first.state
    first.close()
    assert state.seated == 1
    again = service(False)
    source = again.scheduled[1].source
    assert source.game_seats == {i for i, k in enumerate(state.seats) if k}
    assert again.scheduled[1].camera.scene.kids[next(iter(source.game_seats))] is not None
    calls: list = []
    again.announcers.append(type("Tap", (), {"announce": lambda self, c, s=None: calls.append(c),
                                             "close": lambda self: None})())
    again.run(until=again.clock.now() + 8.0)
    again.close()
    kinds = [c.TYPE for c in calls]
    assert "invalid_observation" not in kinds and "seats_mismatch" not in kinds
    assert "weather" in kinds or "spin_again" in kinds
