"""Small things in user messages: counts agree with their nouns, a configuration file with a
UTF-8 byte-order mark is read, no Python reprs (a list of dicts, ``KeyError(...)``), an --out that
cannot be written is named with its option, and ``read carnival`` points to ``companion dice``."""

from __future__ import annotations

import json

import pytest

from companion.cli import main
from companion.config import ConfigError, load
from companion.journal_check import Report as JournalReport


@pytest.fixture(autouse=True)
def _no_user_files(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))


def test_counts_agree_with_their_nouns():
    report = JournalReport(path="j.db", sessions={1: ("carrossel",)}, intact=[object()], unreadable=["a"])
    line = report.summary()
    assert "1 session," in line and "1 intact entry," in line and "1 unreadable part" in line
    assert "sessions" not in line and "parts" not in line
    two = JournalReport(path="j.db", sessions={1: ("a",), 2: ("b",)}, intact=[], unreadable=["a", "b"])
    assert "2 sessions, 0 intact entries" in two.summary() and "2 unreadable parts" in two.summary()


def test_a_configuration_file_with_a_byte_order_mark_is_read(tmp_path):
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf[service]\nspeed = 2\n")
    assert load(path)["service"]["speed"] == 2.0


@pytest.mark.parametrize("text, words", [
    ("[[service]]\nspeed = 2\n", "[service] must be a table, got an array of tables ([[service]]): write [service] once"),
    ("service = 3\n", "[service] must be a table, got an integer (3)"),
])
def test_a_section_that_is_not_a_table_is_said_in_words(tmp_path, text, words):
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load(path)
    assert words in str(err.value) and "{'" not in str(err.value)


def test_intrinsics_of_another_kind_of_file_name_what_is_missing(tmp_path):
    from companion.vision.calibration import Intrinsics

    with pytest.raises(ValueError) as err:
        Intrinsics.from_json({"spaces": []}, "colours.json")
    text = str(err.value)
    assert "camera_matrix, dist_coeffs and image_size are missing" in text and "KeyError" not in text
    with pytest.raises(ValueError, match="dist_coeffs is missing"):
        Intrinsics.from_json({"camera_matrix": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "image_size": [640, 480]})
    with pytest.raises(ValueError, match="image_size: expected numbers"):
        Intrinsics.from_json({"camera_matrix": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "dist_coeffs": [0],
                              "image_size": ["a", 480]})


@pytest.mark.parametrize("what, name", [("markers", "x.png"), ("mat", "x.pdf")])
def test_an_out_file_that_cannot_be_written_names_the_option_and_the_path(tmp_path, capsys, what, name):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    out = blocker / name  # its folder is a file: it cannot be made
    assert main(["calibrate", what, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"companion: error: --out {out}: cannot write the file (") and str(blocker) in err


def test_read_carnival_points_to_companion_dice(capsys):
    with pytest.raises(SystemExit):
        main(["read", "carnival", "dice.jpg"])
    err = capsys.readouterr().err
    assert "companion dice IMAGE" in err and "invalid choice" not in err
