"""A real table never plays on pretend pins: `[service] pin_factory = "mock"` with `--table
hardware` is refused in one line naming the key (as `companion doctor` reports it), for every
game, also when the appliance restarts between games. Only a test lends mock pins to a real
table (`companion.pins.mock_pins_for_tests`, used by the `mock_factory` fixture)."""

from __future__ import annotations

from pathlib import Path

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

from companion.assembly import table_pins
from companion.cli import main
from companion.commands import doctor
from companion.config import load
from companion.health import PartMissing, Parts
from companion.journal import Journal
from companion.pins import mock_pins_for_tests, pins_for_tests


def _config(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "m.toml"
    path.write_text(f'[service]\npin_factory = "mock"\njournal = "{tmp_path / "j.db"}"\n{extra}'
                    '[speech]\nenabled = false\n[web]\nenabled = false\n[encoder]\nbackend = "gpio"\n',
                    encoding="utf-8")
    return path


def _refused(capsys, config: Path, rc: int) -> str:
    out = capsys.readouterr()
    errors = [line for line in out.err.splitlines() if line.startswith("companion: error:")]
    assert rc == 2 and len(errors) == 1 and "Traceback" not in out.err, out.err
    assert "ready" not in out.out and "Welcome" not in out.out, out.out
    line = errors[0]
    assert line.startswith("companion: error: GPIO pins: [service] pin_factory is 'mock' (pretend pins")
    assert f'fix: set [service] pin_factory = "auto" in {config}' in line
    return line


@pytest.mark.parametrize("game", ["carrousel", "monsieur-carrousel", "carrossel", "carnival"])
def test_mock_pins_at_a_real_table_are_refused_for_every_game(tmp_path, capsys, game):
    assert pins_for_tests() is None  # no test lends its pins here
    config = _config(tmp_path)
    rc = main(["run", "--config", str(config), "--game", game, "--table", "hardware", "--new", "--until", "1"])
    _refused(capsys, config, rc)
    with Journal(tmp_path / "j.db", readonly=True) as journal:
        assert journal.sessions() == []
    check = doctor.check_gpio(load(config))  # doctor says the same about the same file
    assert not check.ok and check.detail.startswith("[service] pin_factory is 'mock' (pretend pins)")


def test_the_configured_real_table_is_refused_too(tmp_path, capsys):
    config = _config(tmp_path, 'table = "hardware"\ngame = "monsieur-carrousel"\n')
    _refused(capsys, config, main(["run", "--config", str(config), "--new", "--until", "1"]))


def test_a_restart_between_games_is_refused_before_it_waits(tmp_path):
    """In a child process with a time limit: a run that waited on pretend pins would not end."""
    import subprocess
    import sys

    config = _config(tmp_path)
    with Journal(tmp_path / "j.db") as journal:  # the last game over, none unfinished: it would wait
        journal.finish_session(journal.start_session("carrousel", {}), {})
    done = subprocess.run([sys.executable, "-m", "companion", "run", "--config", str(config), "--table", "hardware",
                           "--next-game", "wait"], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    errors = [line for line in done.stderr.splitlines() if line.startswith("companion: error:")]
    assert done.returncode == 2 and len(errors) == 1 and "Traceback" not in done.stderr, done.stderr
    assert errors[0].startswith("companion: error: GPIO pins: [service] pin_factory is 'mock'")
    assert "game over" not in done.stdout


def test_the_simulated_table_keeps_its_mock_pins_and_a_test_may_lend_them(tmp_path):
    config = load(_config(tmp_path))
    parts = Parts()
    factory, is_mock = table_pins(config, "sim", parts)
    assert is_mock and isinstance(factory, MockFactory)
    with pytest.raises(PartMissing):
        table_pins(config, "hardware")
    lent = MockFactory(pin_class=MockPWMPin)
    with mock_pins_for_tests(lent):
        assert table_pins(config, "hardware", parts) == (lent, True)
        assert parts.snapshot()["pins"]["state"] == "mock"
    assert pins_for_tests() is None
    with pytest.raises(PartMissing):
        table_pins(config, "hardware")


def test_a_pi_whose_gpio_cannot_start_is_told_so_not_called_no_pi(tmp_path, monkeypatch):
    """On a Raspberry Pi whose GPIO library fails (lgpio missing, no access to /dev/gpiochip*),
    a real table is refused naming that, with its cause, not "this is not a Raspberry Pi"; it
    never plays on mock pins."""
    from companion import pins
    from companion.pins import PinFactoryError

    def fails():
        raise PinFactoryError("Unable to load any default pin factory! (Falling back from lgpio: No module named 'lgpio')")

    monkeypatch.setattr(pins, "is_raspberry_pi", lambda: True)
    monkeypatch.setattr(pins, "_default_factory_quietly", fails)
    path = tmp_path / "a.toml"
    path.write_text('[service]\npin_factory = "auto"\n', encoding="utf-8")
    with pytest.raises(PartMissing) as raised:
        table_pins(load(path), "hardware")
    text = str(raised.value)
    assert "this Raspberry Pi's GPIO cannot start" in text and "No module named 'lgpio'" in text
    assert "not a Raspberry Pi" not in text and "pip install lgpio" in text and "companion doctor" in text
