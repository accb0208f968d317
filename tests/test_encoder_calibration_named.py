"""`[encoder] calibration` that names a file: the file must be there and be an encoder
calibration. A typo in that path must not throw the measured counts per turn away in silence
(the nominal counts would be used); the calibration folder's own `encoder.toml` may be absent."""

from __future__ import annotations

from pathlib import Path

import pytest

from companion.cli import main
from companion.commands import doctor
from companion.config import ConfigError, load
from companion.journal import Journal
from companion.rotation import (calibrated_counts_per_rev, encoder_calibration_path, reader_from_config,
                                tracker_from_config)


def _config(tmp_path: Path, encoder: str = "") -> Path:
    path = tmp_path / "enc.toml"
    path.write_text(f'[service]\njournal = "{tmp_path / "j.db"}"\n[speech]\nenabled = false\n[web]\nenabled = false\n'
                    f'[calibration]\ndir = "{tmp_path / "cal"}"\n[encoder]\n{encoder}', encoding="utf-8")
    return path


def test_a_configured_calibration_that_is_not_there_is_refused_naming_the_key_and_path(tmp_path):
    nope = tmp_path / "nope" / "enc.toml"
    config = load(_config(tmp_path, f'calibration = "{nope}"\n'))
    with pytest.raises(ConfigError) as info:
        tracker_from_config(config, reader_from_config(config, "sim"))
    message = str(info.value)
    assert message.startswith(f"[encoder] calibration = '{nope}'") and "no such file" in message
    assert "companion calibrate encoder" in message and "\n" not in message
    check = {c.part: c for c in doctor.check_calibration(config)}["encoder calibration"]
    assert not check.ok and f"[encoder] calibration = '{nope}'" in check.detail
    assert "none at" not in check.detail


def test_run_refuses_it_in_one_line_and_keeps_no_session(tmp_path, capsys):
    nope = tmp_path / "nope" / "enc.toml"
    config = _config(tmp_path, f'calibration = "{nope}"\n')
    rc = main(["run", "--config", str(config), "--game", "monsieur-carrousel", "--table", "sim", "--new",
               "--speed", "1000", "--until", "5"])
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("companion: error:")]
    assert rc == 2 and len(errors) == 1 and "Traceback" not in err
    assert errors[0].startswith(f"companion: error: [encoder] calibration = '{nope}' in {config}: no such file")
    with Journal(tmp_path / "j.db", readonly=True) as journal:
        assert journal.sessions() == []


def test_a_folder_named_as_the_calibration_is_refused(tmp_path):
    config = load(_config(tmp_path, f'calibration = "{tmp_path}"\n'))
    with pytest.raises(ConfigError, match="a folder, not a file"):
        encoder_calibration_path(config)


def test_none_configured_and_none_in_the_folder_is_the_nominal_count(tmp_path):
    config = load(_config(tmp_path))
    assert encoder_calibration_path(config) is None
    assert tracker_from_config(config, reader_from_config(config, "sim")).angle.counts_per_rev == 2400
    check = {c.part: c for c in doctor.check_calibration(config)}["encoder calibration"]
    assert check.ok and check.detail.startswith(f"none at {tmp_path / 'cal' / 'encoder.toml'}")
    measured = tmp_path / "mine.toml"
    measured.write_text("[encoder]\ncounts_per_rev = 2412.5\nturns = 5\nmethod = \"index\"\nspread = 0.001\n")
    config = load(_config(tmp_path, f'calibration = "{measured}"\n'))
    assert tracker_from_config(config, reader_from_config(config, "sim")).angle.counts_per_rev == 2412.5


def test_a_misnamed_key_is_named_with_what_was_expected(tmp_path):
    path = tmp_path / "encoder.toml"
    path.write_text('[encoder]\ncounts_per_turn = "x"\n')
    with pytest.raises(ConfigError) as info:
        calibrated_counts_per_rev(path)
    message = str(info.value)
    assert message.startswith(f"{path}: [encoder] counts_per_rev: expected a finite number > 0")
    assert "the file has none" in message and "got None" not in message
    assert "[encoder] counts_per_turn: not a key of an encoder calibration (known: counts_per_rev, turns, method, " \
           "spread)" in message and "\n" not in message
    path.write_text("[encoder]\ncounts_per_rev = 2400\n[pico]\nport = 1\n")
    with pytest.raises(ConfigError, match=r"pico: not a table of an encoder calibration"):
        calibrated_counts_per_rev(path)
