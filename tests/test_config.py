"""The configuration file: lookup order, defaults, and errors that name file, key, expectation."""

from __future__ import annotations

import subprocess
import sys

import pytest

from companion.config import SCHEMA, ConfigError, default_paths, load, validate


def write(tmp_path, text, name="config.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_defaults_without_any_file(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    cfg = load(None)
    if cfg.source is None:  # /etc/carousel-companion/config.toml may exist on a Pi
        assert cfg.get("pins", "buzzer") == 12
        assert cfg.get("pins", "claim_buttons") == [5, 6, 13, 19]
        assert cfg.get("carrousel", "dead_end_s") == 20.0


def test_lookup_order_explicit_then_user_file(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    user = tmp_path / ".config" / "carousel-companion" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text("[carrousel]\ndead_end_s = 15\n")
    assert default_paths()[0] == user
    assert load(None).get("carrousel", "dead_end_s") == 15.0
    explicit = write(tmp_path, "[carrousel]\ndead_end_s = 12.5\n")
    cfg = load(explicit)
    assert cfg.get("carrousel", "dead_end_s") == 12.5 and cfg.source == explicit


def test_explicit_file_must_exist(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load(tmp_path / "nope.toml")


@pytest.mark.parametrize(
    "text,message",
    [
        ("[pins]\nbuzer = 12\n", r"\[pins\] unknown key 'buzer'"),
        ("[pin]\nbuzzer = 12\n", r"unknown section \[pin\]"),
        ("[pins]\nbuzzer = 40\n", r"\[pins\] buzzer: expected a BCM GPIO number 0-27, got 40"),
        ('[pins]\nbuzzer = "12"\n', r"\[pins\] buzzer: expected a BCM GPIO number 0-27, got \"12\""),
        ("[carrousel]\nadvanced = 1\n", r"\[carrousel\] advanced: expected true or false"),
        ("[carrousel]\ndead_end_s = -1\n", r"dead_end_s: expected seconds from 0.1 to 600"),
        ("[players]\nnames = [\"Ana\"]\n", r"\[players\] names: expected a list of 2 to 4"),
        ("[pins]\nclaim_buttons = [5, 5, 6, 7]\n", r"claim_buttons: expected a list of 4 distinct"),
        ("pins = 3\n", r"\[pins\] must be a table"),
    ],
)
def test_bad_values_name_the_file_the_key_and_what_was_expected(tmp_path, text, message):
    p = write(tmp_path, text)
    with pytest.raises(ConfigError, match=message) as info:
        load(p)
    assert str(info.value).startswith(str(p))


def test_invalid_toml_gives_the_line(tmp_path):
    p = write(tmp_path, "[pins]\nbuzzer = \n")
    with pytest.raises(ConfigError, match=r"not valid TOML: .*line 2"):
        load(p)


def test_every_default_passes_its_own_check():
    cfg = validate({})
    for section, keys in SCHEMA.items():
        for key, spec in keys.items():
            assert spec.check(cfg.get(section, key)), (section, key)


def test_cli_reports_a_config_mistake_in_one_line(tmp_path):
    p = write(tmp_path, "[pins]\nbuzzer = 99\n")
    proc = subprocess.run(
        [sys.executable, "-m", "companion", "--config", str(p), "config"],
        capture_output=True, text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"companion: error: {p}: [pins] buzzer: expected a BCM GPIO number 0-27, got 99"
    assert "Traceback" not in proc.stderr


def test_effective_configuration_round_trips_through_toml(tmp_path):
    import tomllib

    p = write(tmp_path, "[players]\nnames = [\"Zoé\", \"Lu\"]\n")
    text = load(p).to_toml()
    again = validate(tomllib.loads(text))
    assert again.get("players", "names") == ["Zoé", "Lu"]


def test_the_configuration_page_lists_every_key():
    """docs/configuration.md is generated from the schema; it must not fall behind."""
    from pathlib import Path

    from companion.config import describe_schema

    page = (Path(__file__).resolve().parent.parent / "docs" / "configuration.md").read_text()
    assert describe_schema() in page, "regenerate docs/configuration.md from `companion config --schema`"


def test_two_parts_on_one_gpio_is_an_error_naming_both(tmp_path):
    p = write(tmp_path, "[pins]\nbuzzer = 5\n")
    with pytest.raises(ConfigError, match=r"\[pins\] .*GPIO 5 is already used by"):
        load(p)


def test_a_key_outside_any_section_is_named_as_such(tmp_path):
    p = write(tmp_path, "speed = 2\n")
    with pytest.raises(ConfigError, match="key 'speed' outside any section"):
        load(p)


def test_config_option_is_accepted_after_the_command(tmp_path):
    p = write(tmp_path, "[carrousel]\ndead_end_s = 9\n")
    proc = subprocess.run(
        [sys.executable, "-m", "companion", "config", "--config", str(p)], capture_output=True, text=True
    )
    assert proc.returncode == 0 and "dead_end_s = 9.0" in proc.stdout


def test_a_dice_size_range_the_wrong_way_round_is_one_line():
    """[dice] die_px_min must be below die_px_max: both named, with the values."""
    with pytest.raises(ConfigError, match=r"x.toml: \[dice\] die_px_min: expected less than die_px_max \(20.0\), got 80.0"):
        validate({"dice": {"die_px_min": 80, "die_px_max": 20}}, "x.toml")


@pytest.mark.parametrize("argv", [["calibrate", "tray", "--box", "0,0,9,9", "tray.jpg"], ["journal", "check", "j.db"],
                                  ["encoder", "monitor"], ["calibrate", "markers"], ["run"]])
def test_config_option_is_accepted_after_a_subcommand_too(argv):
    """`--config FILE` after `calibrate tray`, `journal check`, `encoder monitor`: the README's
    "before or after the command" holds for every command, nested ones included."""
    from companion.cli import build_parser

    args = build_parser().parse_args([*argv, "--config", "x.toml"])
    assert args.config == "x.toml"
