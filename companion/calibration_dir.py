"""The calibration directory: one place that ``companion calibrate`` writes and ``companion
read``, ``companion run`` and ``companion doctor`` read.

Two folders take part:

* the user's own, ``[calibration] dir`` (default ``~/.local/share/carousel-companion/calibration``):
  every file ``companion calibrate`` writes goes here (:func:`writable_path`);
* the shipped defaults, read-only data in the package (``companion/data/calibration/``: the
  Carrousel board geometry and reference colours, Monsieur Carrousel's seat layouts, Carrossel's
  game data), never written.

A calibration file is read from the user's folder when it is there, else from the shipped
defaults (:func:`calibration_path`). A file given explicitly (a ``--geometry`` option, a
``[camera] geometry`` key) is used as given.

Example::

    from companion.calibration_dir import calibration_path, writable_path
    board = calibration_path("carrousel-board.json", config)   # the user's, or the shipped one
    out = writable_path("carrousel-colours.json", config)      # always in the user's folder

Every function takes the loaded :class:`~companion.config.Config` (or ``None``: the default
folder, as if the configuration file did not set ``[calibration] dir``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_DIR",
    "SHIPPED_DIR",
    "SHIPPED_FILES",
    "CalibrationDirError",
    "calibration_path",
    "check_writable",
    "explicit_or_calibration",
    "optional_calibration",
    "shipped_path",
    "user_dir",
    "where_from",
    "writable_path",
]

#: The user's calibration folder when ``[calibration] dir`` is not set (``~`` expanded on use).
DEFAULT_DIR = "~/.local/share/carousel-companion/calibration"

#: The shipped defaults: package data, read-only.
SHIPPED_DIR = Path(__file__).resolve().parent / "data" / "calibration"

#: The files shipped in :data:`SHIPPED_DIR` (the others exist only once calibrated).
SHIPPED_FILES = ("carrousel-board.json", "carrousel-colours.json", "monsieur_carrousel.toml", "carrossel.toml",
                 "monsieur-board.toml", "carrossel-board.toml", "carrossel-letters.json")


class CalibrationDirError(ValueError):
    """The calibration folder cannot be used (inside the package, or not writable); the
    message names the folder and the fix."""


def _dir_setting(config: Any) -> str:
    if config is None:
        return DEFAULT_DIR
    try:
        value = config["calibration"]["dir"]
    except (KeyError, TypeError):
        return DEFAULT_DIR
    return value or DEFAULT_DIR


def user_dir(config: Any = None) -> Path:
    """The user's calibration folder: ``[calibration] dir`` with ``~`` expanded (it may not
    exist yet).

    Args:
        config: the loaded configuration, or None for :data:`DEFAULT_DIR`.
    """
    return Path(_dir_setting(config)).expanduser()


def shipped_path(name: str) -> Path:
    """The shipped default ``name`` in the package (it may not exist: only
    :data:`SHIPPED_FILES` do)."""
    return SHIPPED_DIR / name


def calibration_path(name: str, config: Any = None) -> Path:
    """Where to read the calibration file ``name`` (e.g. ``"carrousel-board.json"``): the
    user's file when it exists, else the shipped default when there is one, else the user's
    path (so that "no such file" names where ``companion calibrate`` writes it).

    Args:
        name: a file name, no folder.
        config: the loaded configuration, or None for the default user folder.

    Raises:
        ValueError: ``name`` is not a plain file name.
    """
    if not name or Path(name).name != name:
        raise ValueError(f"calibration file {name!r}: expected a plain file name")
    mine = user_dir(config) / name
    if mine.is_file():
        return mine
    shipped = shipped_path(name)
    return shipped if shipped.is_file() else mine


def _given(path: str | os.PathLike[str], key: str | None) -> Path:
    """A path the user gave (``~`` expanded); with ``key`` (the setting that named it, e.g.
    ``"[camera] geometry"``) it must be a file.

    Raises:
        ValueError: ``key`` given and no such file (the line names the key and the path).
    """
    given = Path(path).expanduser()
    if key is not None and not given.is_file():
        what = "a folder, not a file" if given.is_dir() else "no such file"
        raise ValueError(f"{key} = {str(path)!r}: {what} (expected the calibration file; empty = the calibration "
                         "folder's own)")
    return given


def explicit_or_calibration(path: str | os.PathLike[str] | None, name: str, config: Any = None,
                            key: str | None = None) -> Path:
    """``path`` (``~`` expanded) when given and not empty, else :func:`calibration_path`.

    Raises:
        ValueError: ``key`` (the setting that gave ``path``) given and ``path`` is no file.
    """
    if path is not None and str(path) != "":
        return _given(path, key)
    return calibration_path(name, config)


def optional_calibration(path: str | os.PathLike[str] | None, name: str, config: Any = None,
                         key: str | None = None) -> Path | None:
    """For a file that may be absent (``camera.json``, ``encoder.toml``, ``dice-tray.toml``):
    ``path`` when given and not empty, else the calibration folder's ``name`` when it exists,
    else None.

    Raises:
        ValueError: ``key`` (the setting that gave ``path``) given and ``path`` is no file.
    """
    if path is not None and str(path) != "":
        return _given(path, key)
    found = calibration_path(name, config)
    return found if found.is_file() else None


def where_from(path: str | os.PathLike[str], given_as: str | None) -> dict[str, str]:
    """Which calibration file was read and from where, as JSON output says it:
    ``{"file": path, "from": where}``, ``where`` being ``given_as`` (the option or key that
    named it, e.g. ``"--intrinsics"``, ``"[camera] intrinsics"``) when given, else
    ``"calibration folder"`` (``[calibration] dir``) or ``"shipped"`` (the package's defaults).

    Args:
        path: the file read (from :func:`explicit_or_calibration` or
            :func:`optional_calibration`).
        given_as: the option or configuration key that gave ``path``, or None when it came
            from the calibration folders.
    """
    p = Path(path)
    if given_as:
        where = given_as
    elif p.resolve().parent == SHIPPED_DIR:
        where = "shipped"
    else:
        where = "calibration folder"
    return {"file": str(p), "from": where}


def writable_path(name: str, config: Any = None) -> Path:
    """Where ``companion calibrate`` writes ``name``: in the user's folder, created if missing.

    Args:
        name: a file name, no folder.
        config: the loaded configuration, or None for the default user folder.

    Raises:
        CalibrationDirError: the folder is inside the package's shipped defaults, or cannot be
            created (the message names it and says to set ``[calibration] dir``).
        ValueError: ``name`` is not a plain file name.
    """
    if not name or Path(name).name != name:
        raise ValueError(f"calibration file {name!r}: expected a plain file name")
    folder = user_dir(config)
    check_writable(folder / name)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CalibrationDirError(
            f"{folder}: cannot create the calibration folder ({exc.strerror}); set [calibration] dir "
            f"to a folder you can write") from None
    return folder / name


def check_writable(path: str | os.PathLike[str]) -> Path:
    """Refuse to write a calibration file into the package's shipped defaults.

    Returns:
        ``path`` (``~`` expanded).

    Raises:
        CalibrationDirError: ``path`` lies inside :data:`SHIPPED_DIR`.
    """
    p = Path(path).expanduser()
    resolved = p.resolve()
    if resolved == SHIPPED_DIR or SHIPPED_DIR in resolved.parents:
        raise CalibrationDirError(
            f"{p}: the shipped calibration defaults are read-only; write into your own folder "
            f"({DEFAULT_DIR}, or [calibration] dir) instead")
    return p
