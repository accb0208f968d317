"""Monsieur Carrousel at an emulated real table with a camera and no encoder: `companion run
--game monsieur-carrousel --table hardware` with a video file as the camera (rendered by the
simulated camera from a fixed script), the kids' buttons on gpiozero's mock pins. The die, the
seat taken and the spin come from the video only; the weather is called from the camera's stop."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from companion.games.monsieur_carrousel import load_table, seat_board_angle, zone_at
from companion.sources.monsieur_camera import geometry_for_layout
from companion.vision.monsieur_geometry import MonsieurGeometry
from companion.vision.sim_monsieur import (
    MonsieurConditions,
    MonsieurRenderer,
    MonsieurScene,
    SimulatedMonsieurCamera,
)
from tests.real_table import CallTap, Companion, write_config
from tests.test_monsieur_camera import one_board

FPS = 10


def script_video(path: Path, table_file: Path) -> float:
    """The table filmed from above: the die lifted and landing red, a kid put on seat 2 (a red
    seat of disc side 1A), then 1.4 turns counter-clockwise and the rest. Returns the carousel's
    final angle (degrees)."""
    table = load_table(table_file)
    geometry = geometry_for_layout(MonsieurGeometry.load(), table.layouts["1A"])
    now = [0.0]
    cam = SimulatedMonsieurCamera(seed=21, conditions=MonsieurConditions(tilt_deg=8.0, azimuth_deg=30.0),
                                  clock=lambda: now[0], renderer=MonsieurRenderer(geometry),
                                  scene=MonsieurScene(angle_deg=40.0, die="yellow", die_xy_mm=(150.0, -110.0)))
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), FPS, (640, 480))
    slot = int(round((40.0 + geometry.seat_disc_angle(2) - geometry.seat_first_deg) / geometry.seat_pitch_deg)) % 12
    events = {10: lambda: (cam.set_scene(die=None), cam.set_hands(("die",))),
              18: lambda: (cam.set_scene(die="red", die_xy_mm=(-140.0, 100.0)), cam.set_hands(())),
              35: lambda: cam.set_hands((f"seat:{slot}",)),
              40: lambda: (cam.set_scene(kids=(None, None, "pastel_mint") + (None,) * 9), cam.set_hands(())),
              55: lambda: cam.spin(5.5, 1.4 * 360.0, 2.1)}
    for i in range(95):
        now[0] = i / FPS
        if i in events:
            events[i]()
        writer.write(cam.read().image)
    writer.release()
    return cam.scene.angle_deg


def test_the_camera_alone_referees_a_turn_at_a_real_table(tmp_path, monkeypatch, mock_factory):
    table_file = one_board(tmp_path)
    video = tmp_path / "table.avi"
    final = script_video(video, table_file)
    config = write_config(tmp_path, service={"game": "monsieur-carrousel", "announcers": ["console"]},
                          camera={"source": f"opencv:{video}", "frame_period_s": 1 / FPS, "settle_s": 0.3},
                          encoder={"backend": "sim"}, monsieur_carrousel={"table_file": str(table_file)})
    tap = CallTap(monkeypatch)
    companion = Companion(tap, config, "monsieur-carrousel")
    try:
        seat = tap.next("seat_kid", timeout=60)
        assert seat.colour == "red" and 2 in seat.seats  # the die read from the video
        on = tap.next("kid_seated", timeout=60)
        assert on.seat == 2  # the token seen on seat 2
        call = tap.next("weather", "full_turn_asked", timeout=60)
        if call.TYPE == "full_turn_asked":  # a loaded machine read the spin too slowly to follow it
            pin = mock_factory.pin(23)  # the kids' YES
            pin.drive_low()
            pin.drive_high()
            call = tap.next("weather", timeout=30)
        table = load_table(table_file)
        want = zone_at(table.board, seat_board_angle(table.layouts["1A"].seats[2], final))
        assert call.zone == want
    finally:
        companion.stop()
    assert not any(c.TYPE == "invalid_observation" for c in tap.calls)
    assert np.isfinite(final)
