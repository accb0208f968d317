"""The encoder's GPIO path on a machine with no GPIO: `companion encoder monitor --backend gpio`
and `companion calibrate encoder --backend gpio` say it in the one line `companion run --table
hardware` gives (GPIO pins: this is not a Raspberry Pi ...; fix: ...), with none of gpiozero's
PinFactoryFallback warnings (6 lines of them came first, then "GPIO: Unable to load any default
pin factory!"). Where gpiozero's own choice of factory is made (`auto` on a Pi whose GPIO
libraries fail), its fallback warnings are caught and their reasons kept in one log line."""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

import pytest
from gpiozero import Device
from gpiozero.exc import PinFactoryFallback

import companion.pins
from companion.cli import main

ON_A_PI = companion.pins.is_raspberry_pi()


@pytest.fixture
def no_gpio(monkeypatch):
    """This machine as one with no GPIO: not a Pi, and gpiozero has no factory chosen yet."""
    monkeypatch.setattr(companion.pins, "is_raspberry_pi", lambda *a, **k: False)
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    saved = Device.pin_factory
    Device.pin_factory = None
    yield
    Device.pin_factory = saved


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "g.toml"
    path.write_text(f'[service]\njournal = "{tmp_path / "j.db"}"\n[calibration]\ndir = "{tmp_path / "cal"}"\n'
                    '[speech]\nenabled = false\n[web]\nenabled = false\n[encoder]\nbackend = "gpio"\n',
                    encoding="utf-8")
    return path


def _one_error(capsys, rc: int) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert rc == 2 and len(lines) == 1 and "Traceback" not in err and "warn" not in err, err
    return lines[0]


@pytest.mark.parametrize("command", [["encoder", "monitor", "--backend", "gpio", "--seconds", "1"],
                                     ["calibrate", "encoder", "--backend", "gpio", "--timeout", "1"],
                                     ["encoder", "monitor", "--seconds", "1"]])  # [encoder] backend = "gpio"
def test_the_encoder_commands_say_what_run_says_about_missing_gpio(tmp_path, capsys, no_gpio, command):
    config = _config(tmp_path)
    run_line = _one_error(capsys, main(["run", "--config", str(config), "--game", "monsieur-carrousel",
                                        "--table", "hardware", "--new", "--until", "1"]))
    assert run_line.startswith("companion: error: GPIO pins: this is not a Raspberry Pi") and "fix: " in run_line
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rc = main(["--config", str(config), *command])
    assert _one_error(capsys, rc) == run_line
    assert not [w for w in caught if issubclass(w.category, PinFactoryFallback)]
    assert not (tmp_path / "cal" / "encoder.toml").exists()


def test_the_simulated_shaft_needs_no_pins(tmp_path, capsys, no_gpio):
    rc = main(["--config", str(_config(tmp_path)), "encoder", "monitor", "--backend", "sim", "--speed", "100",
               "--seconds", "2", "--interval", "1"])
    assert rc == 0 and "GPIO" not in capsys.readouterr().err


@pytest.mark.skipif(ON_A_PI, reason="on a Raspberry Pi gpiozero finds a real factory")
def test_gpiozeros_fallback_warnings_are_caught_where_the_factory_is_made(monkeypatch, caplog):
    """`auto` on a Pi (faked) whose GPIO libraries cannot load: mock pins and one log line with
    each library's reason, no Python warnings on stderr."""
    monkeypatch.setattr(companion.pins, "is_raspberry_pi", lambda *a, **k: True)
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    with warnings.catch_warnings(record=True) as caught, caplog.at_level(logging.INFO, "companion.pins"):
        warnings.simplefilter("always")
        factory, is_mock = companion.pins.make_pin_factory("auto")
    assert is_mock
    assert not [w for w in caught if issubclass(w.category, PinFactoryFallback)]
    lines = [r.getMessage() for r in caplog.records if r.name == "companion.pins"]
    assert len(lines) == 1 and "Falling back from lgpio" in lines[0] and "mock pins" in lines[0], lines
    factory.reset()
