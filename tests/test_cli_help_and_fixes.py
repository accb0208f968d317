"""What the command line says: `run --help` names every simulated camera table, `calibrate
--help` lists `encoder`, and a Pi camera whose library is missing gets the install as its fix
(not the ribbon cable)."""

from __future__ import annotations

import importlib.util

import pytest

from companion.cli import build_parser, main


def _help(*command: str) -> str:
    parser = build_parser()
    sub = parser._subparsers._group_actions[0].choices[command[0]]
    for name in command[1:]:
        sub = sub._subparsers._group_actions[0].choices[name]
    return " ".join(sub.format_help().split())


def test_run_help_names_the_three_simulated_camera_tables():
    text = _help("run")
    assert "Carrousel, Monsieur Carrousel or Carrossel" in text
    assert "the simulated Carrousel table seen" not in text
    assert "--game GAME game to referee (default: the journal's unfinished game" in text


def test_calibrate_help_lists_every_subcommand():
    text = _help("calibrate")
    head = text.split("positional arguments")[0]  # the description's list of subcommands
    for what in ("markers", "mat", "intrinsics", "geometry", "colours", "encoder", "tray"):
        assert f" {what} " in head, what
    assert "companion calibrate encoder --turns 10" in text


@pytest.mark.skipif(importlib.util.find_spec("picamera2") is not None, reason="picamera2 is installed here")
def test_picamera2_missing_names_the_install_not_the_cable(tmp_path, capsys, mock_factory):
    config = tmp_path / "companion.toml"
    config.write_text('[web]\nenabled = false\n[service]\npin_factory = "mock"\n[speech]\nenabled = false\n')
    rc = main(["--config", str(config), "run", "--table", "hardware", "--camera", "picamera2", "--new",
               "--journal", str(tmp_path / "j.db")])
    assert rc == 2
    (line,) = [x for x in capsys.readouterr().err.splitlines() if x.startswith("companion: error:")]
    assert "picamera2 is not installed" in line
    fix = line.split("; fix: ")[-1]
    assert "sudo apt install python3-picamera2" in fix and "--system-site-packages" in fix
    assert "ribbon" not in line
