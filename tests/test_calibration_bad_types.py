"""Calibration files with a wrong-typed field: every loader gives one line naming the file and
the field, never a traceback (AttributeError, TypeError, IndexError, KeyError)."""

from __future__ import annotations

import copy
import json
import math
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from companion.calibration_dir import SHIPPED_DIR
from companion.readers.dice_tray import TrayGeometry
from companion.sources.dice_camera import load_tray_geometry
from companion.vision.carrossel import CarrosselGeometry
from companion.vision.carrousel import CarrouselGeometry, load_references
from companion.vision.monsieur_geometry import MonsieurGeometry

WRONG: dict[str, Any] = {"number": 5, "string": "x", "null": None, "list": [1, 2], "nan": float("nan"),
                         "bool": True, "table": {}}
CORNERS = [(100, 80), (540, 90), (560, 420), (90, 400)]


def _tray_text() -> str:
    g = TrayGeometry.from_corners(CORNERS, (220, 160), (640, 480), hfov_deg=60.0)
    return g.to_toml("tray.jpg", corners_px=CORNERS, size_mm=(220, 160))


_TRAY = _tray_text()
LOADERS = {
    "carrousel-board.json": (lambda: (SHIPPED_DIR / "carrousel-board.json").read_text(), CarrouselGeometry.load),
    "carrousel-colours.json": (lambda: (SHIPPED_DIR / "carrousel-colours.json").read_text(), load_references),
    "monsieur-board.toml": (lambda: (SHIPPED_DIR / "monsieur-board.toml").read_text(), MonsieurGeometry.load),
    "carrossel-board.toml": (lambda: (SHIPPED_DIR / "carrossel-board.toml").read_text(), CarrosselGeometry.load),
    "dice-tray.toml": (lambda: _TRAY, load_tray_geometry),
}


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "nan" if math.isnan(v) else repr(v)
    if isinstance(v, (int, str)):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v if x is not None) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(x)}" for k, x in v.items() if x is not None) + "}"


def _dump(name: str, d: dict[str, Any]) -> str:
    if name.endswith(".json"):
        return json.dumps(d)  # NaN written as NaN, which Python's json reads back
    # TOML has no null: a null field is left out (a missing field)
    return "".join(f"{json.dumps(k)} = {_toml_value(v)}\n" for k, v in d.items() if v is not None)


def _parse(name: str, text: str) -> dict[str, Any]:
    return json.loads(text) if name.endswith(".json") else tomllib.loads(text)


def _fields(d: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Every top-level key, the keys of its table (or first list item) and one level below."""
    out: list[tuple[Any, ...]] = []
    for k, v in d.items():
        out.append((k,))
        if isinstance(v, dict):
            for k2, v2 in v.items():
                out.append((k, k2))
                if isinstance(v2, dict):
                    out.extend((k, k2, k3) for k3 in v2)
        elif isinstance(v, list) and v and isinstance(v[0], dict):
            out.extend((k, 0, k2) for k2 in v[0])
    return out


TOP_KEYS = [(name, key) for name, (text, _) in LOADERS.items() for key in _parse(name, text())]


def test_the_shipped_files_load(tmp_path: Path) -> None:
    for name, (text, load) in LOADERS.items():
        (tmp_path / name).write_text(text())
        load(tmp_path / name)


@pytest.mark.parametrize("name,key", TOP_KEYS, ids=[f"{n}:{k}" for n, k in TOP_KEYS])
def test_a_wrong_type_is_one_line_naming_the_file(tmp_path: Path, name: str, key: str) -> None:
    """Each top-level key of the shipped file, and the fields under it, set to a number, a
    string, null, a list, NaN, true and an empty table in turn."""
    text, load = LOADERS[name]
    base = _parse(name, text())
    failures = []
    for field in [f for f in _fields(base) if f[0] == key]:
        for wrong, value in WRONG.items():
            d = copy.deepcopy(base)
            obj: Any = d
            for part in field[:-1]:
                obj = obj[part]
            obj[field[-1]] = value
            path = tmp_path / name
            path.write_text(_dump(name, d))
            try:
                load(path)
            except ValueError as exc:  # the loaders' documented error: anything else is a traceback
                msg = str(exc)
                if "\n" in msg or str(path) not in msg:
                    failures.append(f"{field}={wrong}: {msg!r}")
            except Exception as exc:  # noqa: BLE001 - the defect this test is about
                failures.append(f"{field}={wrong}: {type(exc).__name__}: {exc}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("field,wrong", [(f, w) for f in [("markers",), ("cards",)] for w in ("number", "null", "nan")]
                         + [(f, w) for f in [("spaces", 0, "diameter_mm"), ("white_reference", "inner_radius_mm"),
                                             ("cards", 0, "disc_diameter_mm")] for w in ("null", "nan", "string")])
def test_the_carrousel_board_names_the_field(tmp_path: Path, field: tuple[Any, ...], wrong: str) -> None:
    d = json.loads((SHIPPED_DIR / "carrousel-board.json").read_text())
    obj: Any = d
    for part in field[:-1]:
        obj = obj[part]
    obj[field[-1]] = WRONG[wrong]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(d))
    with pytest.raises(ValueError, match=r"expected") as info:
        CarrouselGeometry.load(path)
    assert f"{path}: " in str(info.value) and str(field[-1]) in str(info.value)


@pytest.mark.parametrize("group", ["horses", "cards"])
def test_non_finite_reference_colours_are_refused(tmp_path: Path, group: str) -> None:
    d = json.loads((SHIPPED_DIR / "carrousel-colours.json").read_text())
    colour = next(iter(d[group]))
    d[group][colour] = [float("nan")] * 3
    path = tmp_path / "colours.json"
    path.write_text(json.dumps(d))
    with pytest.raises(ValueError, match=rf"{group}: {colour}: expected \[L, a, b\] \(three finite numbers\)"):
        load_references(path)


def test_a_binary_colours_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "random.bin"
    path.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(ValueError, match="not UTF-8") as info:
        load_references(path)
    assert str(info.value).startswith(f"{path}: ")


def test_companion_read_with_a_bad_geometry_prints_one_line(tmp_path: Path) -> None:
    import cv2
    import numpy as np

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**json.loads((SHIPPED_DIR / "carrousel-board.json").read_text()), "markers": 5}))
    img = tmp_path / "img.png"
    cv2.imwrite(str(img), np.zeros((48, 64, 3), np.uint8))
    r = subprocess.run([sys.executable, "-m", "companion", "read", "carrousel", str(img), "--geometry", str(bad)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert r.stderr.strip().count("\n") == 0 and f"{bad}: markers: expected" in r.stderr, r.stderr
