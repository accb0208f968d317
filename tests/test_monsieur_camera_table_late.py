"""The simulated table seen through the camera (companion/sim/monsieur_camera.py) acts no earlier
than the session time it hears a call: with a camera the service announces each call only after
its jitter buffer (0.9 s by default), and the table's answer carries the call's time plus a
moment, often already past. A roll begun in the past stayed out of sight too briefly to be read
(the game waited for a roll nobody could see: only ``game_started`` and ``turn`` by 6 s on seed
3), a spin begun in the past jumped at its first frame. Session time given by hand; nothing
sleeps."""

from __future__ import annotations

from companion.games.monsieur_carrousel import DieRolled, KidSeated, SpinStarted
from companion.sim.monsieur_camera import CameraTable
from companion.vision.sim_monsieur import MonsieurScene, SimulatedMonsieurCamera
from tests.test_monsieur_camera_unseen import camera_game


def _table(now):
    cam = SimulatedMonsieurCamera(seed=3, clock=lambda: now[0], scene=MonsieurScene(angle_deg=40.0, die="yellow",
                                                                                  die_xy_mm=(150.0, -110.0)))
    table = CameraTable(cam, source=None, kid_colour=lambda kid: "pastel_mint", spin_s_per_rev=1.5)
    emitted: list = []
    return cam, table, table.wrap(emitted.append), emitted


def test_a_roll_heard_late_is_out_of_sight_its_whole_time_from_now():
    now = [0.9]  # the turn was called at 0.0 and announced at 0.9; the kids' roll says 0.674
    cam, table, emit, emitted = _table(now)
    emit(DieRolled(t=0.674, colour="red"))
    assert cam.scene.die is None and cam.conditions.hands == ("die",) and emitted == []
    assert table.next_time() == 1.7  # 0.8 s from when it was heard (was 1.474: 0.574 s unseen)
    table.advance(1.69)
    assert cam.scene.die is None
    table.advance(1.7)
    assert cam.scene.die == "red" and cam.conditions.hands == ()


def test_a_roll_stamped_ahead_keeps_its_own_time():
    now = [0.9]
    cam, table, emit, _ = _table(now)
    emit(DieRolled(t=1.2, colour="blue"))
    assert table.next_time() == 2.0


def test_a_spin_heard_late_starts_from_where_the_carousel_rests_now():
    now = [11.3]  # the spin was called at 10.4, announced at 11.3; the kids' push says 10.8
    cam, table, emit, _ = _table(now)
    table.expect(2.0, "ccw")
    emit(SpinStarted(t=10.8, angle_deg=40.0, direction="ccw"))
    assert cam.angle_at(11.3) == 40.0  # not 0.5 s of a fast spin already turned at the first frame
    assert cam.angle_at(11.4) > 40.0


def test_a_kid_seated_late_is_under_the_hand_for_half_a_second_from_now():
    now = [5.0]
    cam, table, emit, _ = _table(now)
    emit(KidSeated(t=4.4, seat=2, kid="Lulu"))
    assert cam.conditions.hands and cam.conditions.hands[0].startswith("seat:")
    assert table.next_time() == 5.5
    table.advance(5.5)
    assert cam.scene.kids[2] == "pastel_mint" and cam.conditions.hands == ()


def test_the_camera_reads_a_quick_roll_of_seed_3(tmp_path):
    """Seed 3's first roll says 0.522 s, heard at 0.9: begun in the past it was out of sight for
    0.4 s, one frame too few to count as a roll; the game stood at ``turn``."""
    service, calls = camera_game(tmp_path, 3, "sim")
    seen = service.scheduled[1]
    service.run(until=6.0)
    service.close()
    assert service.failure is None, service.failure
    kinds = [c.TYPE for c in calls]
    assert kinds[:3] == ["game_started", "turn", "seat_kid"], kinds  # the roll read from the frames
    assert not seen.fallbacks and "die_unseen" not in kinds
