"""The README's command table names each form a user can type: every game of ``companion read``,
``companion calibrate tray`` (its --corners in quotes) and ``companion dice``."""

from __future__ import annotations

from pathlib import Path

from companion.commands.read import READERS

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
TABLE = README[README.index("## Command line"):README.index("## Development")]


def test_every_reader_game_has_its_row():
    for game in READERS:
        assert f"| `companion read {game} IMAGE..." in TABLE, game


def test_the_dice_commands_have_their_rows():
    assert '| `companion calibrate tray IMAGE --corners "X,Y;X,Y;X,Y;X,Y" --size-mm AxB' in TABLE
    assert "| `companion dice [--calibration FILE]" in TABLE
