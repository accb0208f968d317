"""Rotation of the turning games' part (Monsieur Carrousel's carousel, Carrossel's board).

Layers, in the order data flows:

* readers (:mod:`.pico` over USB serial, :mod:`.gpio` with gpiozero, :mod:`.simulated`)
  report :mod:`.samples` (count, index pulse, link lost/back);
* :mod:`.tracker` feeds them to the :mod:`.angle` model and the :mod:`.spin` detector and emits
  the :mod:`.observations` ``spin_started`` / ``spin_stopped``;
* :mod:`.layout` maps a rest angle to the seat or sector facing a pointer or a player.

:func:`source_from_config` builds the whole chain from the ``[encoder]`` section of the
configuration (see ``docs/rotation.md``); ``companion run`` and ``companion encoder monitor``
use it.
"""

from __future__ import annotations

import logging
import tomllib
from pathlib import Path

from companion.config import Config, ConfigError

__all__ = ["reader_from_config", "source_from_config", "tracker_from_config", "encoder_pins",
           "calibrated_counts_per_rev", "encoder_calibration_path", "CALIBRATION_KEYS"]

log = logging.getLogger(__name__)


#: The keys of an encoder calibration file's ``[encoder]`` table, as ``companion calibrate
#: encoder`` writes them (``counts_per_rev`` is the one read; the others record how it was measured).
CALIBRATION_KEYS = ("counts_per_rev", "turns", "method", "spread")

#: What an encoder calibration file must hold, in the words of its error lines.
_EXPECTED = "expected a finite number > 0 (the counts per turn `companion calibrate encoder` writes)"


def calibrated_counts_per_rev(path: str | Path) -> float | None:
    """Counts per turn of the rotating part from a calibration file written by
    ``companion calibrate encoder``, or None when the file does not exist.

    The file is TOML with one table, ``[encoder]``, whose keys are :data:`CALIBRATION_KEYS`;
    ``counts_per_rev`` (counts per turn, a finite number > 0) is required.

    Raises:
        ConfigError: the file exists but is not valid TOML, lacks ``counts_per_rev > 0``, or
            holds a key or table that is not one of an encoder calibration; one line naming the
            file, the key and what was expected (an unknown key named with the known ones).
    """
    p = Path(path).expanduser()
    if not p.exists():
        return None
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: not a valid encoder calibration: {exc}") from None
    enc = data.get("encoder")
    problems = []
    if enc is None:
        problems.append(f"[encoder] counts_per_rev: {_EXPECTED}, but the file has no [encoder] table")
    elif not isinstance(enc, dict):
        problems.append(f"[encoder] counts_per_rev: {_EXPECTED}, but encoder is not a table (got {enc!r})")
    else:
        cpr = enc.get("counts_per_rev")
        if "counts_per_rev" not in enc:
            problems.append(f"[encoder] counts_per_rev: {_EXPECTED}, but the file has none")
        elif isinstance(cpr, bool) or not isinstance(cpr, (int, float)) or not 0 < cpr < float("inf"):
            problems.append(f"[encoder] counts_per_rev: {_EXPECTED}, got {cpr!r}")
        unknown = [k for k in enc if k not in CALIBRATION_KEYS]
        if unknown:
            problems.append(f"[encoder] {', '.join(unknown)}: not a key of an encoder calibration "
                            f"(known: {', '.join(CALIBRATION_KEYS)})")
    others = [k for k in data if k != "encoder"]
    if others:
        problems.append(f"{', '.join(others)}: not a table of an encoder calibration (it has only [encoder])")
    if problems:
        raise ConfigError(f"{p}: " + "; ".join(problems))
    return float(enc["counts_per_rev"])


def encoder_calibration_path(config: Config) -> Path | None:
    """The encoder calibration file to read: ``[encoder] calibration`` when it is set (``~``
    expanded; relative to the working folder), which must then be a file; else
    ``encoder.toml`` of the calibration folder (``[calibration] dir``) when it is there; else
    None (the nominal counts per turn are used).

    Raises:
        ConfigError: ``[encoder] calibration`` names a file that does not exist (or a folder):
            one line naming the key, the path and what was expected. A measured calibration
            lost to a typo in that path must not be replaced by the nominal counts in silence.
    """
    from companion.calibration_dir import calibration_path

    configured = config["encoder"]["calibration"]
    if not configured:
        found = calibration_path("encoder.toml", config)
        return found if found.is_file() else None
    given = Path(configured).expanduser()
    if not given.is_file():
        what = "a folder, not a file" if given.is_dir() else "no such file"
        where = f" in {config.source}" if getattr(config, "source", None) else ""
        raise ConfigError(f"[encoder] calibration = {configured!r}{where}: {what} (expected the counts per turn "
                          "that `companion calibrate encoder` writes there; empty = encoder.toml of the "
                          "calibration folder)")
    return given


def encoder_pins(config: Config, backend: str | None = None):
    """The pin factory for an encoder that a command opens itself (``companion encoder
    monitor``, ``companion calibrate encoder``): the real table's pins when the backend chosen
    (``backend``, else ``[encoder] backend``) is ``"gpio"``, else None (the Pico and the
    simulated shaft use no pins).

    The pins come from :func:`companion.assembly.table_pins` with ``--table hardware``, so a
    machine with no GPIO gets the one line ``companion run --table hardware`` gives for it.

    Raises:
        PartMissing: ``"gpio"`` with no real pins: not a Raspberry Pi, a named factory that
            cannot start, or ``[service] pin_factory = "mock"`` (pretend pins that no encoder
            turns).
    """
    if (backend or config["encoder"]["backend"]) != "gpio":
        return None
    from companion.assembly import table_pins

    return table_pins(config, "hardware")[0]


def reader_from_config(config: Config, backend: str | None = None, pin_factory=None):
    """The encoder reader chosen by ``[encoder] backend`` (or ``backend`` when given).

    ``auto`` uses the Pico when one is plugged in (USB id ``[encoder] usb_id``) and the
    simulated shaft otherwise. Raises ConfigError for a bad USB id.
    """
    enc = config["encoder"]
    choice = backend or enc["backend"]
    from companion.rotation.pico import PicoEncoder, find_pico_port, parse_usb_id

    try:
        usb_id = parse_usb_id(enc["usb_id"])
    except ValueError as exc:
        raise ConfigError(f"[encoder] usb_id: {exc}") from None
    if choice == "auto":
        choice = "pico" if (enc["port"] or find_pico_port(usb_id)) else "sim"
        log.info("encoder backend: %s", choice)
    if choice == "pico":
        return PicoEncoder(port=enc["port"] or None, usb_id=usb_id,
                           lines_per_rev=enc["lines_per_rev"], rate_hz=enc["rate_hz"])
    if choice == "gpio":
        from companion.rotation.gpio import GpioEncoder

        pins = config["pins"]
        return GpioEncoder(pins["encoder_a"], pins["encoder_b"],
                           pins["encoder_index"] if enc["index"] else None,
                           lines_per_rev=enc["lines_per_rev"], pin_factory=pin_factory,
                           rate_hz=enc["rate_hz"])
    from companion.rotation.simulated import SimulatedShaft

    return SimulatedShaft(counts_per_rev=4 * enc["lines_per_rev"], seed=enc["sim_seed"],
                          spin_every_s=enc["sim_spin_every_s"],
                          drop_every_s=enc["sim_link_drop_every_s"] or None,
                          index_count=0 if enc["index"] else None)


def tracker_from_config(config: Config, reader):
    """The :class:`~companion.rotation.tracker.RotationTracker` for ``reader``: counts per
    turn from the calibration file (``[encoder] calibration``, which must exist when set;
    empty = ``encoder.toml`` of the calibration folder, when present), else the reader's
    nominal value (4 x lines on every backend) times ``[encoder] gear_ratio``.

    Raises:
        ConfigError: ``[encoder] calibration`` names no file, or the file is not a valid
            encoder calibration (:func:`encoder_calibration_path`,
            :func:`calibrated_counts_per_rev`)."""
    from companion.rotation.angle import AngleModel
    from companion.rotation.spin import SpinDetector
    from companion.rotation.tracker import RotationTracker

    enc = config["encoder"]
    path = encoder_calibration_path(config)
    cpr = calibrated_counts_per_rev(path) if path is not None else None
    if cpr is None:
        cpr = reader.counts_per_rev * enc["gear_ratio"]
    angle = AngleModel(cpr, 1 if enc["direction"] == "ccw" else -1, enc["index_angle_deg"],
                       has_index=enc["index"] and reader.has_index)
    return RotationTracker(angle, SpinDetector(enc["settle_s"], enc["deadband_counts"]))


def source_from_config(config: Config, backend: str | None = None, pin_factory=None,
                       on_sample=None):
    """The rotation :class:`~companion.sources.Source` built from ``[encoder]``.

    Example (what ``companion run`` does for a turning game)::

        src = source_from_config(load())
        src.start(emit, clock)      # emit gets SpinStarted / SpinStopped
    """
    from companion.rotation.tracker import RotationSource

    reader = reader_from_config(config, backend, pin_factory)
    return RotationSource(reader, tracker_from_config(config, reader), on_sample=on_sample)
