"""Calibration files with a value of the right type but no physical sense (a negative radius, a
zero size, a singular camera matrix): every loader refuses it in one line naming the file, the
field and what was expected, so no reader runs with it (a wrong value gave wrong readings with
``"status": "ok"``, a cv2 traceback, or "board not visible" for a singular lens)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from companion.calibration_dir import SHIPPED_DIR
from companion.readers.dice_tray import TrayGeometry, TrayGeometryError
from companion.vision.calibration import Intrinsics, load_lens
from companion.vision.carrossel import CarrosselGeometry
from companion.vision.carrousel import CarrouselGeometry
from companion.vision.monsieur_geometry import MonsieurGeometry

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
CORNERS = [(100, 80), (540, 90), (560, 420), (90, 400)]


def _edit(name: str, field: str, new: str) -> str:
    """The shipped TOML file with ``field`` (``section.key``) given the value ``new``."""
    section, key = field.rsplit(".", 1)
    out, here, n = [], "", 0
    for line in (SHIPPED_DIR / name).read_text().splitlines(keepends=True):
        if line.startswith("["):
            here = line.strip().strip("[]")
        elif here == section and re.match(rf"{re.escape(key)} = ", line):
            line, n = f"{key} = {new}\n", n + 1
        out.append(line)
    assert n == 1, (name, field)
    return "".join(out)


def _refused(load, path: Path, field: str) -> str:
    with pytest.raises(ValueError) as info:
        load(path)
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(f"{path}: ") and field in msg and "expected" in msg, msg
    return msg


MONSIEUR = [
    ("seats.ring_radius_mm", "-85.0", "seats.ring_radius_mm"),
    ("seats.ring_radius_mm", "1e308", "seats.ring_radius_mm"),
    ("seats.ring_radius_mm", "100.0", "seats.ring_radius_mm"),  # seats off the 110 mm disc
    ("markers.size_mm", "0", "markers.size_mm"),
    ("markers.paper_mm", "20.0", "markers.paper_mm"),
    ("carousel.disc_radius_mm", "-110.0", "carousel.disc_radius_mm"),
    ("carousel.roof_marker_size_mm", "0.0", "carousel.roof_marker_size_mm"),
    ("carousel.roof_marker_z_mm", "0.0", "carousel.roof_marker_z_mm"),
    ("carousel.roof_top_z_mm", "-400.0", "carousel.roof_top_z_mm"),
    ("seats.count", "12.5", "seats.count"),
    ("seats.pitch_deg", "45.0", "seats.pitch_deg"),
    ("seats.first_angle_deg", "1e9", "seats.first_angle_deg"),
    ("seats.diameter_mm", "-34.0", "seats.diameter_mm"),
    ("kids.max_offset_mm", "-2.5", "kids.max_offset_mm"),
    ("board.die_area_mm", "[188.0, -138.0, -188.0, 138.0]", "board.die_area_mm"),
    ("carousel.axis_mm", "[900.0, 0.0]", "carousel.axis_mm"),
    ("markers.paper_srgb", "0", "markers.paper_srgb"),
    ("zones.sun_to_deg", "0.0", "zones.sun_to_deg"),
]


@pytest.mark.parametrize("line,value,field", MONSIEUR, ids=[f"{f}={v}" for _, v, f in MONSIEUR])
def test_monsieur_board_out_of_range(tmp_path: Path, line: str, value: str, field: str) -> None:
    path = tmp_path / "monsieur-board.toml"
    path.write_text(_edit("monsieur-board.toml", line, value))
    _refused(MonsieurGeometry.load, path, field)


CARROSSEL = [
    ("round_board.centre_marker_size_mm", "-30.0", "round_board.centre_marker_size_mm"),
    ("round_board.centre_marker_size_mm", "0", "round_board.centre_marker_size_mm"),
    ("sectors.half_width_deg", "-45", "sectors.half_width_deg"),
    ("sectors.half_width_deg", "60", "sectors.half_width_deg"),  # four sectors of 120 deg overlap
    ("sectors.ambiguous_margin_deg", "50", "sectors.ambiguous_margin_deg"),
    ("round_board.radius_mm", "-180", "round_board.radius_mm"),
    ("round_board.radius_mm", "100", "cells.row_u_mm"),  # the cells off the board
    ("round_board.top_z_mm", "-400", "round_board.top_z_mm"),
    ("round_board.camera_height_mm", "20", "round_board.camera_height_mm"),
    ("cells.row_u_mm", "[84.0, 116.0, 178.0]", "cells.row_u_mm"),
    ("tiles.paper_white_srgb", "300", "tiles.paper_white_srgb"),
    ("round_board.centre_marker_id", "10", "round_board.centre_marker_id"),  # a fixed marker's id
]


@pytest.mark.parametrize("line,value,field", CARROSSEL, ids=[f"{f}={v}" for _, v, f in CARROSSEL])
def test_carrossel_board_out_of_range(tmp_path: Path, line: str, value: str, field: str) -> None:
    path = tmp_path / "carrossel-board.toml"
    path.write_text(_edit("carrossel-board.toml", line, value))
    _refused(CarrosselGeometry.load, path, field)


def test_carrossel_tiles_top_below_the_board_names_the_tiles(tmp_path: Path) -> None:
    path = tmp_path / "carrossel-board.toml"
    path.write_text(_edit("carrossel-board.toml", "tiles.top_z_mm", "-400"))
    _refused(CarrosselGeometry.load, path, "tiles.top_z_mm")


@pytest.mark.parametrize("key,value", [("marker_size_mm", float("nan")), ("marker_size_mm", "40"),
                                       ("marker_size_mm", -40), ("marker_size_mm", 60), ("markers", {}),
                                       ("mat_size_mm", 100.0)])
def test_carrousel_board_out_of_range(tmp_path: Path, key: str, value: object) -> None:
    d = json.loads((SHIPPED_DIR / "carrousel-board.json").read_text())
    d[key] = value
    path = tmp_path / "carrousel-board.json"
    path.write_text(json.dumps(d))
    _refused(CarrouselGeometry.load, path, key if key != "mat_size_mm" else "markers.")


@pytest.mark.parametrize("field,value", [("inner_radius_mm", 80.0), ("outer_radius_mm", -68.0)])
def test_carrousel_white_reference_annulus(tmp_path: Path, field: str, value: float) -> None:
    d = json.loads((SHIPPED_DIR / "carrousel-board.json").read_text())
    d["white_reference"][field] = value
    path = tmp_path / "carrousel-board.json"
    path.write_text(json.dumps(d))
    _refused(CarrouselGeometry.load, path, "white_reference.")


SINGULAR = [[0, 0, 0], [0, 0, 0], [0, 0, 1]]
GOOD_K = [[554.0, 0.0, 320.0], [0.0, 554.0, 240.0], [0.0, 0.0, 1.0]]


@pytest.mark.parametrize("k", [SINGULAR, [[0, 0, 0]] * 3, [[-554, 0, 320], [0, 554, 240], [0, 0, 1]],
                               [[554, 0, 900], [0, 554, 240], [0, 0, 1]], [[2, 0, 320], [0, 2, 240], [0, 0, 1]],
                               [[554, 0, 320], [0, 554, 240], [0, 1, 1]]],
                         ids=["singular", "zeros", "negative-fx", "cx-outside", "fov-too-wide", "not-a-camera"])
def test_camera_json_needs_a_lens_matrix(tmp_path: Path, k: list) -> None:
    path = tmp_path / "camera.json"
    path.write_text(json.dumps({"camera_matrix": k, "dist_coeffs": [0, 0, 0, 0, 0], "image_size": [640, 480]}))
    _refused(load_lens, path, "camera_matrix")


def test_camera_json_good_matrix_loads(tmp_path: Path) -> None:
    path = tmp_path / "camera.json"
    path.write_text(json.dumps({"camera_matrix": GOOD_K, "dist_coeffs": [0.1, -0.2, 0, 0, 0], "image_size": [640, 480]}))
    k, dist = load_lens(path)
    assert k[0, 0] == 554.0 and dist.size == 5


def test_camera_json_distortion_must_be_finite(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="dist_coeffs: expected"):
        Intrinsics.from_json({"camera_matrix": GOOD_K, "dist_coeffs": [float("nan")] * 5, "image_size": [640, 480]},
                             "camera.json")


def _tray(tmp_path: Path, k: str | None = None, floor: str | None = None) -> Path:
    g = TrayGeometry.from_corners(CORNERS, (220, 160), (640, 480), hfov_deg=60.0)
    text = g.to_toml("tray.jpg", corners_px=CORNERS, size_mm=(220, 160))
    if k is not None:
        text, n = re.subn(r"(?m)^K = [^#\n]*", f"K = {k}", text)
        assert n == 1
    if floor is not None:
        text, n = re.subn(r"(?m)^floor_mm = [^#\n]*", f"floor_mm = {floor}", text)
        assert n == 1
    path = tmp_path / "dice-tray.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("k", ["[[0,0,0],[0,0,0],[0,0,0]]", "[[554,0,320],[0,-554,240],[0,0,1]]",
                               "[[554,0,-50],[0,554,240],[0,0,1]]"])
def test_dice_tray_needs_a_lens_matrix(tmp_path: Path, k: str) -> None:
    path = _tray(tmp_path, k=k)
    with pytest.raises(TrayGeometryError) as info:
        TrayGeometry.from_toml(path)
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(f"{path}: [geometry] K: expected"), msg


def test_dice_tray_floor_of_no_area(tmp_path: Path) -> None:
    path = _tray(tmp_path, floor="[[0, 0], [10, 0], [20, 0]]")
    with pytest.raises(TrayGeometryError, match=r"\[geometry\] floor_mm: expected an outline of area above 0"):
        TrayGeometry.from_toml(path)


def test_the_shipped_and_calibrated_files_still_load(tmp_path: Path) -> None:
    MonsieurGeometry.load(SHIPPED_DIR / "monsieur-board.toml")
    CarrosselGeometry.load(SHIPPED_DIR / "carrossel-board.toml")
    CarrouselGeometry.load(SHIPPED_DIR / "carrousel-board.json")
    assert TrayGeometry.from_toml(_tray(tmp_path)) is not None


def _run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    return subprocess.run([sys.executable, "-m", "companion", *args], check=False, capture_output=True, text=True,
                          timeout=60,
                          env=env)


def _user_file(home: Path, name: str, text: str) -> Path:
    cal = home / ".local" / "share" / "carousel-companion" / "calibration"
    cal.mkdir(parents=True, exist_ok=True)
    (cal / name).write_text(text)
    return cal / name


@pytest.mark.skipif(not (DATA / "monsieur-table" / "images" / "monsieur_000.jpg").is_file(),
                    reason="the Monsieur Carrousel photographs are not here")
def test_read_refuses_a_negative_seat_ring(tmp_path: Path) -> None:
    """The attack: a user's monsieur-board.toml with the seats' ring at -85 mm read every photo
    with "status": "ok" and the kids on the wrong seats."""
    bad = _user_file(tmp_path, "monsieur-board.toml", _edit("monsieur-board.toml", "seats.ring_radius_mm", "-85.0"))
    r = _run(tmp_path, "read", "monsieur-carrousel", str(DATA / "monsieur-table" / "images" / "monsieur_000.jpg"))
    assert r.returncode != 0 and '"status"' not in r.stdout, r.stdout
    assert r.stderr.strip().count("\n") == 0 and f"{bad}: seats.ring_radius_mm: expected" in r.stderr, r.stderr


def test_read_carrossel_with_a_negative_centre_marker_is_one_line(tmp_path: Path) -> None:
    """Was a cv2.error traceback from generateImageMarker in CarrosselReader.__init__."""
    import cv2
    import numpy as np

    bad = _user_file(tmp_path, "carrossel-board.toml", _edit("carrossel-board.toml", "round_board.centre_marker_size_mm", "-30.0"))
    img = tmp_path / "img.png"
    cv2.imwrite(str(img), np.zeros((480, 640, 3), np.uint8))
    r = _run(tmp_path, "read", "carrossel", str(img))
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.strip().count("\n") == 0 and f"{bad}: round_board.centre_marker_size_mm: expected" in r.stderr


def test_dice_with_a_singular_tray_matrix_is_one_line(tmp_path: Path) -> None:
    import cv2
    import numpy as np

    path = _tray(tmp_path, k="[[0,0,0],[0,0,0],[0,0,0]]")
    img = tmp_path / "img.png"
    cv2.imwrite(str(img), np.zeros((480, 640, 3), np.uint8))
    r = _run(tmp_path, "dice", "--calibration", str(path), str(img))
    assert r.returncode != 0 and "Singular" not in r.stderr and "Warning" not in r.stderr, r.stderr
    assert r.stderr.strip().count("\n") == 0 and f"{path}: [geometry] K: expected" in r.stderr, r.stderr


@pytest.mark.parametrize("game,name,line,value", [
    ("monsieur-carrousel", "monsieur-board.toml", "seats.ring_radius_mm", "-85.0"),
    ("carrossel", "carrossel-board.toml", "sectors.half_width_deg", "-45"),
])
def test_doctor_checks_the_games_board(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, game: str, name: str,
                                       line: str, value: str) -> None:
    from companion import config as config_mod
    from companion.commands.doctor import check_boards, needs

    monkeypatch.setenv("HOME", str(tmp_path))
    bad = _user_file(tmp_path, name, _edit(name, line, value))
    config = config_mod.load(None)
    checks = {c.part: c for c in check_boards(config)}
    part = "monsieur board" if game == "monsieur-carrousel" else "carrossel board"
    assert not checks[part].ok and checks[part].detail.startswith(f"{bad}: ") and "expected" in checks[part].detail
    other = "carrossel board" if game == "monsieur-carrousel" else "monsieur board"
    assert checks[other].ok
    assert part in needs(game, config) and other not in needs(game, config)
    assert part not in needs("carrousel", config)


@pytest.mark.parametrize("lab", [[-5.0, 0.0, 0.0], [150.0, 0.0, 0.0], [50.0, 400.0, 0.0]])
def test_carrousel_colours_are_lab(tmp_path: Path, lab: list[float]) -> None:
    from companion.vision.carrousel import load_references

    d = json.loads((SHIPPED_DIR / "carrousel-colours.json").read_text())
    colour = next(iter(d["horses"]))
    d["horses"][colour] = lab
    path = tmp_path / "carrousel-colours.json"
    path.write_text(json.dumps(d))
    _refused(load_references, path, f"horses.{colour}")


@pytest.mark.parametrize("dist", [[5, -9, 0, 0, 40], [-1.5, 0, 0, 0, 0], [0.8, 0, 0, 0, 0]],
                         ids=["wild", "folds", "too-far-out"])
def test_camera_json_distortion_no_lens_has(tmp_path: Path, dist: list) -> None:
    """[5, -9, 0, 0, 40] was taken and every photo then read "board not visible"."""
    path = tmp_path / "camera.json"
    path.write_text(json.dumps({"camera_matrix": GOOD_K, "dist_coeffs": dist, "image_size": [640, 480]}))
    _refused(load_lens, path, "dist_coeffs")


@pytest.mark.parametrize("dist", [[-0.299, 0.153, 0.001, 0.0, -0.077], [-0.35, 0.12, 0, 0, 0], [0.1, -0.2, 0, 0, 0]])
def test_camera_json_real_lenses_load(tmp_path: Path, dist: list) -> None:
    """The first: OpenCV's left*.jpg chessboard views calibrated here (a strong barrel lens)."""
    path = tmp_path / "camera.json"
    path.write_text(json.dumps({"camera_matrix": [[533.5, 0, 340.4], [0, 533.7, 234.5], [0, 0, 1]],
                                "dist_coeffs": dist, "image_size": [640, 480]}))
    assert load_lens(path)[1].size == 5


@pytest.mark.parametrize("key,value", [("templates", float("nan")), ("templates", 400), ("step_mm", 1.0),
                                       ("half_mm", -14.25)])
def test_carrossel_letters_out_of_range(tmp_path: Path, key: str, value: float) -> None:
    from companion.vision.carrossel import LetterTemplates

    d = json.loads((SHIPPED_DIR / "carrossel-letters.json").read_text())
    if key == "templates":
        animal = next(iter(d["templates"]))
        d["templates"][animal][3][4] = value
        key = f"templates.{animal}"
    else:
        d[key] = value
    path = tmp_path / "carrossel-letters.json"
    path.write_text(json.dumps(d))
    _refused(LetterTemplates.load, path, key)
    LetterTemplates.load(SHIPPED_DIR / "carrossel-letters.json")


@pytest.mark.parametrize("text", ["[encoder]\ncounts_per_rev = inf\n", "[encoder]\ncounts_per_rev = -600\n",
                                  "encoder = 5\n"])
def test_encoder_calibration_out_of_range(tmp_path: Path, text: str) -> None:
    from companion.config import ConfigError
    from companion.rotation import calibrated_counts_per_rev

    path = tmp_path / "encoder.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=r"\[encoder\] counts_per_rev: expected a finite number > 0") as info:
        calibrated_counts_per_rev(path)
    assert str(info.value).startswith(f"{path}: ") and "\n" not in str(info.value)
