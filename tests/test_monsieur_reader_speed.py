"""The Monsieur Carrousel reader's faster steps give what the plain computations give, to the
bit: the die's board-print floor percentile from one partition, the second decoding's codes
from one look-up table, the edge blur's linear grey crop and the seats' fit points built a
coordinate at a time (docs/BENCHMARKS.md, the Monsieur reader's time per frame)."""

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision import monsieur_cast, monsieur_die
from companion.vision.colour import srgb_to_linear
from companion.vision.monsieur import MonsieurReader
from companion.vision.monsieur_tone import relit, srgb_decode, srgb_encode

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "monsieur-table"
needs_photos = pytest.mark.skipif(not (DATA / "truth.json").exists(), reason="the Monsieur photographs are not here")


def test_the_floor_percentile_is_numpys_own():
    # float32 chroma values as the die's board-print floor takes them: smooth, with ties, one value
    rng = np.random.default_rng(5)
    cases = [(np.array([7.5], np.float32), 1)]
    for j in range(400):
        c = rng.gamma(2.0, 10.0, int(rng.integers(1, 5000))).astype(np.float32)
        if j % 3 == 0:
            c = np.round(c, 1)
        cases.append((c, int(rng.integers(1, len(c) + 1))))
    for c, keep in cases:
        before = c.copy()
        assert monsieur_die._percentile90_of_least(c, keep) == float(np.percentile(np.sort(c)[:keep], 90))
        assert np.array_equal(c, before)  # (the caller's values untouched)
    assert monsieur_die._PERCENTILE_RULE == [True]  # the partition's rule is this numpy's


def test_the_second_decoding_table_gives_the_plain_decoding():
    rng = np.random.default_rng(6)
    for _ in range(200):
        px = rng.integers(0, 256, (int(rng.integers(1, 3000)), 3), dtype=np.uint8)
        white = rng.uniform(0.05, 1.2, 3).astype(np.float32)
        gain = float(rng.uniform(0.05, 1.0))
        table = srgb_decode(np.arange(256, dtype=np.float64) / gain)
        w = np.maximum(srgb_decode(srgb_encode(white.astype(np.float64)) / gain), 1e-6)
        plain = np.minimum(table[px] / w, 1.0).astype(np.float32)
        got = relit(px, white, gain)
        assert got.dtype == np.float32 and np.array_equal(got, plain)
    assert relit(np.zeros((0, 3), np.uint8), white, 0.5).shape == (0, 3)


def test_the_edge_blur_grey_is_the_mean_of_the_channels_light():
    rng = np.random.default_rng(7)
    frame = rng.integers(0, 256, (90, 120, 3), dtype=np.uint8)
    crop = frame[7:70, 11:101]
    lin3 = cv2.LUT(crop, monsieur_cast._LUT3)
    summed = (lin3[..., 0] + lin3[..., 1]) + lin3[..., 2]
    summed /= np.float32(3)
    assert np.array_equal(summed, srgb_to_linear(crop).mean(axis=2, dtype=np.float32))


@needs_photos
@pytest.mark.parametrize("i", [0, 5, 11])
def test_the_fit_points_are_the_broadcast_sums(i):
    truth = json.loads((DATA / "truth.json").read_text())
    frame = cv2.imread(str(DATA / "images" / truth["images"][i]["image"]))
    reader = MonsieurReader()
    reading = reader.read(frame)
    if reading.camera is None or reading.carousel_angle_deg is None:
        pytest.skip("no roof reading on this photograph")
    cam, angle = reading.camera, reading.carousel_angle_deg
    white, _ = reader._white(frame, reading.registration)
    steps = np.arange(-2.5, 2.5 + 1e-9, 0.5)
    seen = []
    real = cam.to_image

    def spy(pts, z):
        seen.append(np.array(pts))
        return real(pts, z)

    object.__setattr__(cam, "to_image", spy)
    try:
        reader._fit_scores(frame, cam, angle, white, steps)
    finally:
        object.__delattr__(cam, "to_image")
    g = reader.geometry
    k = np.arange(g.n_seats)
    a = np.radians(angle + steps[:, None] + g.seat_first_deg + g.seat_pitch_deg * k[None, :])
    centres = np.asarray(g.axis_mm) + g.seat_ring_radius_mm * np.stack([np.cos(a), np.sin(a)], axis=-1)
    offs = np.concatenate([reader._fit_in, reader._fit_out])
    plain = (centres[:, :, None, :] + offs[None, None, :, :]).reshape(-1, 2)
    assert len(seen) == 1 and np.array_equal(seen[0], plain)


@needs_photos
@pytest.mark.parametrize("i", [2, 8, 15])
def test_the_plans_ray_tests_by_blocks_are_the_tests_of_every_sample(i):
    from companion.vision.monsieur import _Rays

    truth = json.loads((DATA / "truth.json").read_text())
    frame = cv2.imread(str(DATA / "images" / truth["images"][i]["image"]))
    reader = MonsieurReader()
    reading = reader.read(frame)
    if reading.camera is None:
        pytest.skip("no camera on this photograph")
    g, cam = reader.geometry, reading.camera
    z = g.disc_top_z_mm
    top = z + g.kid_height_mm
    seat, _part, off = reader._layout
    heads = reader._part_slices[2]
    blocks = (reader._block_seat, reader._block_len, reader._block_reach, reader._block_upper)
    every = slice(0, len(seat))
    for angle in (0.0, 47.0, 133.5, 251.0):
        a = np.radians(angle + g.seat_first_deg + g.seat_pitch_deg * np.arange(g.n_seats))
        centres = np.asarray(g.axis_mm) + g.seat_ring_radius_mm * np.stack([np.cos(a), np.sin(a)], axis=1)
        pts = np.take(centres, seat, axis=0) + off
        rays = _Rays(cam.centre_mm, pts, np.array([z, top - 3.0]), heads)
        reach = g.kid_base_radius_mm + g.kid_max_offset_mm + 1.0
        tests = [(z, top, np.roll(centres, 1, axis=0), reach), (z, top, np.roll(centres, -1, axis=0), reach),
                 (g.roof_bottom_z_mm, g.roof_top_z_mm, np.asarray(g.axis_mm, dtype=np.float64), g.roof_radius_mm + 1.0),
                 (z, g.figure_top_z_mm, np.asarray(g.figure_mm, dtype=np.float64), g.figure_radius_mm + 1.0),
                 (z, top, np.asarray(g.axis_mm, dtype=np.float64), 80.0)]  # (one that many blocks reach)
        plain = np.zeros(len(seat), dtype=bool)
        for z_lo, z_hi, axes, radius in tests:
            per_point = np.take(axes, seat, axis=0) if np.ndim(axes) == 2 else axes
            plain |= rays.passes(every, z_lo, z_hi, per_point, radius)
        assert plain.any() and not plain.all()
        assert np.array_equal(rays.passes_any(blocks, centres, tests), plain)


@needs_photos
def test_the_clipped_whites_bound_kept_for_a_registration_is_the_one_worked_out_again():
    truth = json.loads((DATA / "truth.json").read_text())
    frame = cv2.imread(str(DATA / "images" / truth["images"][4]["image"]))
    reader = MonsieurReader()
    reg, g = reader.read(frame).registration, reader.geometry
    gain = 256.0 / reader._white(frame, reg)[1][1]  # the paper's green clipped, its blue and red not
    frame[..., 1] = np.clip(frame[..., 1].astype(np.float32) * gain, 0, 255).astype(np.uint8)
    reg = reader.read(frame).registration
    white, code = reader._white(frame, reg)
    assert code[1] >= monsieur_cast.SATURATED > code[0]
    monsieur_cast._EDGE_PIXELS.clear()
    fresh = monsieur_cast.white_upper_bound(frame, reg, g.markers, white, code, g.marker_size_mm)
    assert fresh is not None and fresh[1] > white[1]
    kept = monsieur_cast._EDGE_PIXELS[0][3]
    darker = (frame.astype(np.float32) * 0.97).astype(np.uint8)  # the next frame of the stream
    again = monsieur_cast.white_upper_bound(darker, reg, g.markers, white, code, g.marker_size_mm)
    assert monsieur_cast._EDGE_PIXELS[0][3] is kept  # the pixels kept, not worked out again
    monsieur_cast._EDGE_PIXELS.clear()
    assert np.array_equal(again, monsieur_cast.white_upper_bound(darker, reg, g.markers, white, code, g.marker_size_mm))
