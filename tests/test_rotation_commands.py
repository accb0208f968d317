"""`companion encoder monitor` and `companion calibrate encoder` on the simulated shaft."""

from __future__ import annotations

import json

import pytest

from companion import cli
from companion.commands.calibrate_encoder import CalibrationError, counts_per_rev_from_index
from companion.rotation import calibrated_counts_per_rev, source_from_config
from companion.config import ConfigError, validate


def test_counts_per_rev_from_index_pulses():
    cpr, spread = counts_per_rev_from_index([100, 2500, 4901, 7300])
    assert cpr == pytest.approx(2400.0) and spread < 0.001
    with pytest.raises(CalibrationError, match="one way"):
        counts_per_rev_from_index([0, 2400, 0])
    with pytest.raises(CalibrationError, match="disagree"):
        counts_per_rev_from_index([0, 2400, 4700])  # a slipping coupling
    with pytest.raises(CalibrationError, match="two index pulses"):
        counts_per_rev_from_index([5])


def test_calibrate_encoder_on_the_simulated_shaft(tmp_path, capsys):
    out = tmp_path / "encoder.toml"
    rc = cli.main(["calibrate", "encoder", "--backend", "sim", "--turns", "3", "--speed", "200",
                   "--timeout", "30", "--output", str(out)])
    assert rc == 0, capsys.readouterr()
    assert calibrated_counts_per_rev(out) == pytest.approx(2400.0, abs=1.0)


def test_bad_calibration_file_is_a_config_error(tmp_path):
    p = tmp_path / "encoder.toml"
    p.write_text("[encoder]\ncounts_per_rev = -3\n")
    with pytest.raises(ConfigError, match="counts_per_rev"):
        calibrated_counts_per_rev(p)


def test_monitor_shows_spins_from_the_simulated_shaft(tmp_path, capsys):
    cfg = tmp_path / "c.toml"
    # no encoder.toml in an empty calibration folder: the nominal counts per turn
    cfg.write_text("[encoder]\nsim_spin_every_s = 2.0\n[calibration]\ndir = \"%s\"\n" % (tmp_path / "cal"))
    rc = cli.main(["--config", str(cfg), "encoder", "monitor", "--backend", "sim", "--speed",
                   "100", "--seconds", "40", "--interval", "0.05", "--json"])
    assert rc == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    kinds = {x["type"] for x in lines}
    assert {"spin_started", "spin_stopped", "encoder_status"} <= kinds


def test_source_from_config_gpio_uses_config_pins():
    from gpiozero.pins.mock import MockFactory

    f = MockFactory()
    try:
        config = validate({"encoder": {"backend": "gpio", "lines_per_rev": 20}})
        src = source_from_config(config, pin_factory=f)
        assert src.reader.pins == (17, 27, 4) and src.reader.counts_per_rev == 4 * 20
    finally:
        f.reset()


def test_bad_usb_id_in_config_is_refused():
    with pytest.raises(ConfigError, match="usb_id"):
        source_from_config(validate({"encoder": {"usb_id": "pico"}}))
