"""hardware/pins.toml agrees with the configuration defaults and with the firmware's pins."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from companion.config import SCHEMA

ROOT = Path(__file__).resolve().parent.parent
PINS = tomllib.loads((ROOT / "hardware" / "pins.toml").read_text(encoding="utf-8"))


def test_pins_toml_matches_config_defaults():
    defaults = {key: spec.default for key, spec in SCHEMA["pins"].items()}
    assert PINS["pins"] == defaults


def test_pico_pins_match_firmware_board():
    board = (ROOT / "firmware" / "board.py").read_text(encoding="utf-8")
    values = {k: int(v) for k, v in re.findall(r"^([A-Z_]+) = (\d+)$", board, re.M)}
    assert values["ENCODER_A"] == PINS["pico"]["encoder_a"]
    assert values["ENCODER_B"] == PINS["pico"]["encoder_b"] == PINS["pico"]["encoder_a"] + 1
    assert values["INDEX"] == PINS["pico"]["index"]
    assert values["LED"] == PINS["pico"]["led"]


def test_pico_usb_id_matches_encoder_default():
    assert PINS["pico"]["usb_id"] == SCHEMA["encoder"]["usb_id"].default


def test_no_pin_used_twice():
    used = []
    for v in PINS["pins"].values():
        used += v if isinstance(v, list) else [v]
    assert len(used) == len(set(used))


def test_wiring_tables_name_every_default_pin():
    """The wiring tables in hardware/README.md give each default pin its GPIO number."""
    text = (ROOT / "hardware" / "README.md").read_text(encoding="utf-8")
    for v in PINS["pins"].values():
        for n in v if isinstance(v, list) else [v]:
            assert re.search(rf"\bGPIO {n}\b", text), f"GPIO {n} missing from hardware/README.md"


def test_wiring_diagram_is_drawn_from_the_current_pin_map():
    """hardware/wiring.svg is what hardware/tools/draw_wiring.py draws from pins.toml."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "draw_wiring", ROOT / "hardware" / "tools" / "draw_wiring.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert (ROOT / "hardware" / "wiring.svg").read_text(encoding="utf-8") == mod.SVG
    for n in PINS["pins"]["claim_buttons"] + PINS["pins"]["player_leds"]:
        assert f">GPIO {n}<" in mod.SVG
