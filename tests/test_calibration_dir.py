"""One calibration folder for `calibrate`, `read`, `run` and `doctor`: the user's own file
when present, else the shipped default (package data, never written); `calibrate colours`
refuses a file that cannot read every colour and warns about colours too close to tell apart."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from companion.calibration_dir import (
    DEFAULT_DIR,
    SHIPPED_DIR,
    SHIPPED_FILES,
    CalibrationDirError,
    calibration_path,
    user_dir,
    writable_path,
)
from companion.cli import main
from companion.config import SCHEMA, load, validate

DATA = Path(__file__).parent / "data"
TABLE = DATA / "carrousel-table"
PHOTO = TABLE / "images" / "carrousel_000.jpg"
TRUTH = TABLE / "truth" / "carrousel_000.json"


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A HOME of the test's own, so nothing is read from or written to the real one."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def config_file(tmp_path, folder) -> Path:
    p = tmp_path / "config.toml"
    p.write_text(f'[calibration]\ndir = "{folder}"\n')
    return p


def shipped_digest() -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in SHIPPED_DIR.iterdir()}


def test_the_shipped_defaults_are_package_data():
    assert sorted(p.name for p in SHIPPED_DIR.iterdir()) == sorted(SHIPPED_FILES)
    assert SHIPPED_DIR == Path(__file__).resolve().parents[1] / "companion" / "data" / "calibration"
    text = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    assert '"data/calibration/*.json"' in text and '"data/calibration/*.toml"' in text
    assert SCHEMA["calibration"]["dir"].default == DEFAULT_DIR


def test_the_users_file_first_else_the_shipped_one_else_where_it_would_be_written(home, tmp_path):
    assert user_dir() == home / ".local" / "share" / "carousel-companion" / "calibration"
    assert calibration_path("carrousel-board.json") == SHIPPED_DIR / "carrousel-board.json"
    assert calibration_path("camera.json") == user_dir() / "camera.json"  # not shipped, not made yet
    config = validate({"calibration": {"dir": str(tmp_path / "mine")}})
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "carrousel-board.json").write_text("{}")
    assert calibration_path("carrousel-board.json", config) == tmp_path / "mine" / "carrousel-board.json"
    assert calibration_path("carrousel-colours.json", config) == SHIPPED_DIR / "carrousel-colours.json"
    with pytest.raises(ValueError, match="plain file name"):
        calibration_path("../camera.json", config)


def test_nothing_is_ever_written_into_the_package(home, tmp_path, capsys):
    before = shipped_digest()
    inside = validate({"calibration": {"dir": str(SHIPPED_DIR)}})
    with pytest.raises(CalibrationDirError, match="read-only"):
        writable_path("carrousel-colours.json", inside)
    out = writable_path("carrousel-colours.json")
    assert out.parent.is_dir() and out.parent == user_dir()
    argv = ["calibrate", "colours", str(PHOTO), "--truth", str(TRUTH), "--out", str(SHIPPED_DIR / "carrousel-colours.json")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "shipped calibration defaults are read-only" in err and err.count("\n") == 1
    assert main(["calibrate", "geometry", str(PHOTO), "--geometry", str(SHIPPED_DIR / "carrousel-board.json")]) == 2
    assert "read-only" in capsys.readouterr().err
    assert shipped_digest() == before


def test_calibrate_writes_the_folder_that_read_and_doctor_then_use(home, tmp_path, capsys):
    from companion.commands import doctor

    folder = tmp_path / "cal"
    cfg = config_file(tmp_path, folder)
    before = shipped_digest()
    # geometry: fitted from a photo, written into the user's folder (the shipped one untouched)
    assert main(["--config", str(cfg), "calibrate", "geometry", str(PHOTO)]) == 0
    assert capsys.readouterr().out.strip() == str(folder / "carrousel-board.json")
    # colours: the same folder, found by `read` without any option
    argv = ["--config", str(cfg), "calibrate", "colours", str(PHOTO), "--truth", str(TRUTH)]
    assert main(argv) == 0
    assert capsys.readouterr().out.strip() == str(folder / "carrousel-colours.json")
    assert shipped_digest() == before
    checks = {c.part: c for c in doctor.check_calibration(load(cfg))}
    assert checks["camera geometry"].ok and str(folder / "carrousel-board.json") in checks["camera geometry"].detail
    assert checks["camera colours"].ok and checks["camera colours"].detail == str(folder / "carrousel-colours.json")
    assert main(["--config", str(cfg), "read", "carrousel", str(PHOTO)]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "ok"
    # a damaged file in the user's folder is what `read` and `doctor` read (and name)
    (folder / "carrousel-colours.json").write_text("{")
    assert main(["--config", str(cfg), "read", "carrousel", str(PHOTO)]) == 2
    assert str(folder / "carrousel-colours.json") in capsys.readouterr().err
    assert not {c.part: c for c in doctor.check_calibration(load(cfg))}["camera colours"].ok


def test_run_reads_the_users_encoder_tray_and_game_data(home, tmp_path):
    from companion.games import referee_from_config
    from companion.games.monsieur_carrousel import TableError
    from companion.rotation import reader_from_config, tracker_from_config

    folder = tmp_path / "cal"
    folder.mkdir()
    config = load(config_file(tmp_path, folder))
    reader = reader_from_config(config, "sim")
    assert tracker_from_config(config, reader).angle.counts_per_rev == 2400  # nominal, none measured
    (folder / "encoder.toml").write_text("[encoder]\ncounts_per_rev = 2412.5\n")
    assert tracker_from_config(config, reader).angle.counts_per_rev == 2412.5
    assert referee_from_config("monsieur-carrousel", config).table is not None  # the shipped layouts
    (folder / "monsieur_carrousel.toml").write_text("not = [toml")
    with pytest.raises(TableError, match=str(folder / "monsieur_carrousel.toml")):
        referee_from_config("monsieur-carrousel", config)


def test_colours_refuses_a_file_without_any_card_naming_what_is_missing(home, tmp_path, capsys):
    truth = json.loads(TRUTH.read_text())
    truth["cards"] = []
    no_cards = tmp_path / "no_cards.json"
    no_cards.write_text(json.dumps(truth))
    out = tmp_path / "colours.json"
    assert main(["calibrate", "colours", str(PHOTO), "--truth", str(no_cards), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "colours.json not written" in err and "no card at all" in err
    assert "every card colour is missing: black, yellow, blue, green, red" in err
    assert len([line for line in err.splitlines() if "error" in line]) == 1 and not out.exists()


def test_colours_names_the_horses_and_card_colours_never_seen(home, tmp_path, capsys):
    truth = json.loads(TRUTH.read_text())
    spaces = truth["space_list"]
    out = tmp_path / "colours.json"
    # say only the black and the yellow horse are there (the others given as hidden) and one card
    text = "".join({"black": "k", "yellow": "y"}.get(s, ".") for s in spaces)
    assert set(text) <= {"k", "y", "."} and "k" in text and "y" in text
    hidden = [k for k, s in enumerate(spaces) if s not in ("black", "yellow", "empty")]
    truth.update(occluded=hidden)
    truth["cards"] = [c for c in truth["cards"] if set(c["triple"]) >= {"red"}][:1]
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps(truth))
    assert main(["calibrate", "colours", str(PHOTO), "--truth", str(partial), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    missing_horses = [c for c in ("blue", "green", "red") if c in spaces]
    assert f"no photo shows the {', '.join(missing_horses)} horses in plain view" in err
    seen = set(truth["cards"][0]["triple"])
    unseen = [c for c in ("black", "yellow", "blue", "green", "red") if c not in seen]
    assert f"no card shows {', '.join(unseen)} in plain view" in err
    assert not out.exists()


def test_a_misspelt_card_colour_is_refused(home, capsys):
    assert main(["calibrate", "colours", str(PHOTO), "--spaces", ".gbyrk.", "--card", "south=red,blu,green"]) == 2
    assert "colours among black, yellow, blue, green, red" in capsys.readouterr().err


def test_colours_too_close_under_this_light_are_a_warning(home, tmp_path, capsys, monkeypatch):
    import companion.vision.carrousel as carrousel

    shipped = json.loads((SHIPPED_DIR / "carrousel-colours.json").read_text())
    dim = {"horses": dict(shipped["horses"]), "cards": dict(shipped["cards"])}
    dim["horses"]["green"] = [70.0, -20.0, 40.0]  # a yellowish lamp: green drifts towards yellow
    monkeypatch.setattr(carrousel, "reference_colours_from", lambda frames, truths, reader: dim)
    out = tmp_path / "colours.json"
    assert main(["calibrate", "colours", str(PHOTO), "--truth", str(TRUTH), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1, err
    assert "horse colours green and yellow are" in warnings[0] and "under the 38.4" in warnings[0]
    assert json.loads(out.read_text())["horses"]["green"] == [70.0, -20.0, 40.0]  # written all the same


def test_the_close_colour_threshold_is_where_the_reader_starts_to_confuse_them():
    """With two references D apart, a pixel still within the reader's tolerance ``near`` of A
    is read as B exactly when D < near x (1 + ratio): the warning's threshold."""
    from companion.vision.calibration import close_reference_pairs, min_separation
    from companion.vision.colour import ColourReferences, RegionClassifier

    base = RegionClassifier(ColourReferences(("a", "b"), np.zeros((2, 3))), background_label=None)
    threshold = min_separation(base)
    assert threshold == pytest.approx(24.0 * 1.6)
    a = np.array([50.0, 40.0, 0.0])  # chromatic: a*, b* distances count fully
    for distance, confused in ((threshold - 1.0, True), (threshold + 1.0, False)):
        b = a + [0.0, 0.0, distance]
        clf = RegionClassifier(ColourReferences(("a", "b"), np.stack([a, b])), background_label=None)
        d = np.linspace(0.0, base.near - 1e-3, 400)  # pixels of A moved towards B, inside near
        classes = clf.pixel_classes(a + np.outer(d, [0.0, 0.0, 1.0]))
        assert bool((classes == 1).any()) is confused
        pairs = close_reference_pairs({"a": a.tolist(), "b": b.tolist()}, clf)
        assert [(p.first, p.second) for p in pairs] == ([("a", "b")] if confused else [])
    shipped = json.loads((SHIPPED_DIR / "carrousel-colours.json").read_text())
    assert close_reference_pairs(shipped["horses"], base) == []


def test_a_calibration_file_named_in_the_config_that_is_not_there_names_its_key(tmp_path):
    from companion.calibration_dir import explicit_or_calibration, optional_calibration

    for resolve in (explicit_or_calibration, optional_calibration):
        with pytest.raises(ValueError, match=r"^\[camera\] geometry = '/no/such\.json': no such file"):
            resolve("/no/such.json", "carrousel-board.json", key="[camera] geometry")
        with pytest.raises(ValueError, match=r"^\[camera\] intrinsics = .*: a folder, not a file"):
            resolve(str(tmp_path), "camera.json", key="[camera] intrinsics")
        assert resolve("/no/such.json", "camera.json") == Path("/no/such.json")  # a caller that checks itself
    present = tmp_path / "camera.json"
    present.write_text("{}")
    assert optional_calibration(str(present), "camera.json", key="[camera] intrinsics") == present


def test_run_with_a_missing_geometry_file_says_which_key(tmp_path, capsys, mock_factory):
    config = tmp_path / "c.toml"
    config.write_text(f'[service]\njournal = "{tmp_path / "j.db"}"\ntable = "hardware"\npin_factory = "mock"\n'
                      '[speech]\nenabled = false\n[encoder]\nbackend = "sim"\n[web]\nenabled = false\n'
                      f'[camera]\nsource = "opencv:{tmp_path / "v.mp4"}"\ngeometry = "{tmp_path / "none.json"}"\n')
    assert main(["--config", str(config), "run"]) != 0
    err = capsys.readouterr().err
    assert "[camera] geometry = " in err and "none.json': no such file" in err and "Traceback" not in err
