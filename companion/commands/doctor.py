"""Check every part a real table needs, one line each: ok, or missing and how to fix it.

  companion doctor [--game G]

Parts: the camera, the GPIO pins, the Pico (or the GPIO encoder), the audio output,
espeak-ng and the speech cache folder (`[speech] cache_dir`), the groups that own those
devices, the calibration files (Carrousel's board and colours, the lens, the encoder's,
Monsieur Carrousel's and Carrossel's boards, the dice tray), the journal's folder.
Each line says `ok` or `missing`; a missing part says how to fix it. A part the game does not
use is still checked and marked `(not needed for GAME)`. Exit status 0 when everything the
game needs (--game, else [service] game) is ok, 1 otherwise.

Run it as the user the service runs as (see `companion service install`). It opens no device
the running service holds: the Pi camera is only listed, not opened.
"""

from __future__ import annotations

import argparse
import dataclasses
import glob
import importlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["configure", "run", "Check", "check_all", "check_boards", "needs", "BOARD_FILES", "GAME_PARTS"]

#: What each game's real table is made of (besides the journal, the GPIO pins for the LEDs and
#: buzzer, and the audio output when [speech] enabled): the camera reads Carrousel's horses and
#: cards and Carnival's dice; the shaft encoder reads the turning games.
GAME_PARTS: dict[str, tuple[str, ...]] = {
    "carrousel": ("camera",),
    "carnival": ("camera",),
    "monsieur-carrousel": ("encoder",),
    "carrossel": ("encoder",),
}


@dataclasses.dataclass(frozen=True)
class Check:
    """The verdict on one part.

    Attributes:
        part: the part in the players' words (``"camera"``, ``"group dialout"``).
        ok: True when it is there and works.
        detail: what was found (ok) or what is wrong (missing), in words.
        fix: how to fix it (empty when ok).
        needed: whether the configured game needs it (only needed parts set the exit status).
    """

    part: str
    ok: bool
    detail: str
    fix: str = ""
    needed: bool = True

    def line(self, game: str) -> str:
        """``ok       camera: ...`` or ``missing  camera: ...; how to fix: ...``."""
        text = f"{'ok' if self.ok else 'missing':<8} {self.part}: {self.detail}"
        if not self.ok and self.fix:
            text += f"; how to fix: {self.fix}"
        if not self.needed:
            text += f" (not needed for {game})"
        return text


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``companion doctor``."""
    parser.add_argument("--game", help="the game whose parts decide the exit status (default: [service] game)")


# -- what the machine has (module functions, so that tests can stand in for hardware) ----------

def _is_pi() -> bool:
    from companion.pins import is_raspberry_pi

    return is_raspberry_pi()


def _pi_model() -> str:
    try:
        return Path("/proc/device-tree/model").read_text(errors="replace").strip("\0\n ")
    except OSError:
        return ""


def _importable(name: str) -> Any:
    """The module, or None when it cannot be imported (any error: picamera2 off a Pi fails in
    many ways)."""
    try:
        return importlib.import_module(name)
    except Exception:
        return None


def _gpiochips() -> list[str]:
    return sorted(glob.glob("/dev/gpiochip*"))


def _access(path: str) -> bool:
    return os.access(path, os.R_OK | os.W_OK)


def _pico_port(usb_id: tuple[int, int]) -> str | None:
    from companion.rotation.pico import find_pico_port

    return find_pico_port(usb_id)


def _which(program: str) -> str | None:
    return shutil.which(program)


def _run(argv: list[str], timeout_s: float = 10.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s)


def _euid() -> int:
    return os.geteuid()


def _process_groups() -> set[int]:
    return set(os.getgroups()) | {os.getgid()}


def _user() -> str:
    import pwd

    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return str(os.getuid())


# -- the checks ----------------------------------------------------------------------------------

def check_camera(config: Any) -> Check:
    """The camera of ``[camera] source``: picamera2 importable and a camera listed, or the
    OpenCV device or file opens and gives a frame."""
    source = config["camera"]["source"]
    where = _config_name(config)
    if source in ("auto", "picamera2"):  # auto: the Pi camera at a real table
        module = _importable("picamera2")
        if module is None:
            return Check("camera", False, "picamera2 cannot be imported",
                         "on Raspberry Pi OS: sudo apt install python3-picamera2, in a venv made with "
                         "--system-site-packages (./dev does both on a Pi)")
        try:
            cameras = list(module.Picamera2.global_camera_info())
        except Exception as exc:
            return Check("camera", False, f"picamera2 cannot list the cameras: {exc}",
                         "check the ribbon cable and `rpicam-hello --list-cameras`")
        if not cameras:
            return Check("camera", False, "picamera2 lists no camera",
                         "connect the camera's ribbon cable (contacts facing the board), reboot, and check "
                         "`rpicam-hello --list-cameras`")
        model = cameras[0].get("Model", "a camera") if isinstance(cameras[0], dict) else "a camera"
        return Check("camera", True, f"picamera2 lists {model}" + (f" and {len(cameras) - 1} more" if len(cameras) > 1 else ""))
    if source.startswith("opencv:"):
        target = source[7:]
        if target.isdigit() and not Path(f"/dev/video{target}").exists():
            return Check("camera", False, f"{source}: there is no /dev/video{target}",
                         "plug the USB camera in (`ls /dev/video*` lists it), or set [camera] source in " + where)
        if target.isdigit() and not _access(f"/dev/video{target}"):
            return Check("camera", False, f"{source}: no permission to open /dev/video{target}",
                         f"sudo usermod -aG video {_user()}, then log in again")
        return _open_opencv(source)
    if source.startswith("folder:"):
        folder = Path(source[7:]).expanduser()
        if not folder.is_dir():
            return Check("camera", False, f"{source}: no such folder", f"set [camera] source in {where}")
        return Check("camera", True, f"{source}: a folder of photographs (not a live camera)")
    return Check("camera", False, f"[camera] source is {source!r}, the simulated camera",
                 f'set [camera] source = "picamera2" (the Pi camera) or "opencv:0" (a USB camera) in {where}')


def _open_opencv(source: str) -> Check:
    import cv2

    from companion.vision.frames import FrameSourceError, open_frame_source

    logging_mod = getattr(getattr(cv2, "utils", None), "logging", None)
    if logging_mod is not None and hasattr(logging_mod, "setLogLevel"):
        logging_mod.setLogLevel(getattr(logging_mod, "LOG_LEVEL_ERROR", 2))  # no V4L2 warnings in the report
    try:
        frames = open_frame_source(source)
    except (FrameSourceError, ValueError) as exc:
        return Check("camera", False, str(exc), getattr(exc, "fix", None)
                     or "check the cable, and that no other program (the service?) uses it")
    try:
        frame = frames.read()
    except FrameSourceError as exc:
        return Check("camera", False, f"{source} opens but gives no frame: {exc}", "check the cable and the camera")
    finally:
        frames.close()
    if frame is None:
        return Check("camera", False, f"{source} opens but gives no frame", "check the file or the camera")
    h, w = frame.image.shape[:2]
    return Check("camera", True, f"{source} opens and gives {w} x {h} frames")


def check_gpio(config: Any) -> Check:
    """The GPIO pins: a Raspberry Pi, lgpio importable, /dev/gpiochip* readable and writable."""
    if config["service"]["pin_factory"] == "mock":
        return Check("GPIO pins", False, "[service] pin_factory is 'mock' (pretend pins)",
                     f'set [service] pin_factory = "auto" in {_config_name(config)}')
    if not _is_pi():
        return Check("GPIO pins", False, "this is not a Raspberry Pi: no buttons, LEDs or buzzer",
                     "run the companion on the Pi (elsewhere play the simulated table: companion run --table sim)")
    model = _pi_model() or "a Raspberry Pi"
    if config["service"]["pin_factory"] in ("auto", "lgpio") and _importable("lgpio") is None:
        return Check("GPIO pins", False, f"{model}, but lgpio cannot be imported",
                     "./dev installs it (the pi extra), or: .venv/bin/pip install lgpio")
    chips = _gpiochips()
    if not chips:
        return Check("GPIO pins", False, f"{model}, but there is no /dev/gpiochip*",
                     "use Raspberry Pi OS Bookworm or later (its kernel has the GPIO character device)")
    closed = [c for c in chips if not _access(c)]
    if len(closed) == len(chips):
        return Check("GPIO pins", False, f"no permission to open {', '.join(closed)}",
                     f"sudo usermod -aG gpio {_user()}, then log in again")
    return Check("GPIO pins", True, f"{model}; lgpio; {', '.join(c for c in chips if c not in closed)} open")


def check_encoder(config: Any) -> Check:
    """The shaft encoder: the Pico found by ``[encoder] usb_id`` (or ``port``) and its port
    readable, or the GPIO pins for ``backend = "gpio"``."""
    from companion.rotation.pico import parse_usb_id

    enc = config["encoder"]
    if enc["backend"] == "sim":
        return Check("encoder", False, "[encoder] backend is 'sim', the simulated shaft",
                     f'set [encoder] backend = "pico" (or "gpio" for a slow knob) in {_config_name(config)}')
    if enc["backend"] == "gpio":
        pins = config["pins"]
        gpio = check_gpio(config)
        detail = f"on GPIO {pins['encoder_a']} and {pins['encoder_b']} (slow knobs only)"
        return Check("encoder", gpio.ok, detail if gpio.ok else f"{detail}: {gpio.detail}", gpio.fix)
    usb_id = parse_usb_id(enc["usb_id"])
    port = enc["port"] or _pico_port(usb_id)
    if port is None:
        return Check("encoder", False, f"no Pico: no serial port with USB id {enc['usb_id']}",
                     "plug the Pico in with a data USB cable and flash our firmware (firmware/README.md); "
                     f"`lsusb` should list {enc['usb_id'].lower()}")
    if port.startswith("/dev/") and not Path(port).exists():
        return Check("encoder", False, f"[encoder] port {port} does not exist",
                     "plug the Pico in, or set [encoder] port = \"\" to find it by its USB id")
    if port.startswith("/dev/") and not _access(port):
        return Check("encoder", False, f"the Pico is on {port} but it cannot be opened (permission)",
                     f"sudo usermod -aG dialout {_user()}, then log in again")
    return Check("encoder", True, f"the Pico on {port}")


def check_audio(config: Any) -> Check:
    """The audio output: ``aplay -l`` lists a card, and the ``[speech] device`` (or the default
    device) opens: a tenth of a second of silence is played on it."""
    sp = config["speech"]
    if _which("aplay") is None:
        return Check("audio output", False, "aplay is not installed", "sudo apt install alsa-utils (./dev does)")
    try:
        listed = _run(["aplay", "-l"])
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Check("audio output", False, f"aplay -l failed: {exc}", "check the ALSA set-up")
    cards = [line for line in listed.stdout.splitlines() if line.startswith("card ")]
    if not cards and not sp["device"]:
        return Check("audio output", False, "no sound card (aplay -l lists none)",
                     "plug a USB speaker or a speaker on the 3.5 mm jack (a Pi 5 has none: use USB or HDMI), "
                     "then check `aplay -l`; or [speech] enabled = false")
    device = sp["device"] or "the default device"
    from companion.announcers.speech import AudioPlayer

    opened = AudioPlayer(device=sp["device"], timeout_s=sp["timeout_s"], run=subprocess.run).check()
    if opened:
        return Check("audio output", False, f"{device} does not open: {opened}",
                     "pick a device from `aplay -L` (e.g. plughw:CARD=Headphones) for [speech] device in "
                     + _config_name(config))
    first = cards[0].split(":", 1)[1].strip() if cards else sp["device"]
    return Check("audio output", True, f"{device} opens ({first})")


def check_espeak() -> Check:
    """espeak-ng, which speaks the prompts."""
    if _which("espeak-ng") is None:
        return Check("espeak-ng", False, "not installed", "sudo apt install espeak-ng (./dev does)")
    try:
        done = _run(["espeak-ng", "--version"])
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Check("espeak-ng", False, f"does not run: {exc}", "sudo apt install --reinstall espeak-ng")
    version = done.stdout.strip().splitlines()[0] if done.stdout.strip() else "present"
    return Check("espeak-ng", True, version.split(" Copyright")[0])


def check_speech_cache(config: Any) -> Check:
    """The WAV cache folder ``[speech] cache_dir``: it can be created and written, as
    ``companion run`` requires when it speaks (a folder this check creates is removed again)."""
    from companion.announcers.speech import CacheDirError, check_cache_dir

    try:
        folder = check_cache_dir(config["speech"]["cache_dir"], config.source, keep=False)
    except CacheDirError as exc:
        problem, _, fix = str(exc).partition("; fix: ")
        return Check("speech cache", False, problem, fix)
    return Check("speech cache", True, f"{folder} can be written" if folder.is_dir() else f"{folder} can be created")


def check_group(name: str) -> Check:
    """Membership of the current process's user in the group that owns a device (``gpio``,
    ``video``, ``audio``, ``dialout``), from ``os.getgroups`` and the group database."""
    import grp

    if _euid() == 0:
        return Check(f"group {name}", True, "running as root, which opens every device")
    try:
        g = grp.getgrnam(name)
    except KeyError:
        return Check(f"group {name}", False, "no such group on this system",
                     "Raspberry Pi OS has it; elsewhere the device belongs to another group (ls -l /dev)")
    user = _user()
    if g.gr_gid in _process_groups():
        return Check(f"group {name}", True, f"{user} is a member")
    if user in g.gr_mem:
        return Check(f"group {name}", False, f"{user} was added, but this login started before",
                     "log out and in again (or reboot)")
    return Check(f"group {name}", False, f"{user} is not a member",
                 f"sudo usermod -aG {name} {user}, then log in again (companion service install does it)")


def check_calibration(config: Any) -> list[Check]:
    """Each calibration file parses: the camera's geometry, colours and intrinsics (with the
    loaders of :mod:`companion.vision`), the encoder's counts per turn
    (:func:`companion.rotation.calibrated_counts_per_rev`; an ``[encoder] calibration`` that
    names no file is missing, as ``companion run`` refuses it; none configured and none in the
    calibration folder is ok: the nominal counts per turn)."""
    from companion.calibration_dir import calibration_path
    from companion.config import ConfigError
    from companion.rotation import calibrated_counts_per_rev, encoder_calibration_path
    from companion.vision.calibration import load_lens
    from companion.calibration_dir import explicit_or_calibration, optional_calibration
    from companion.vision.carrousel import CarrouselGeometry, load_references

    cam = config["camera"]
    out = []
    geometry = str(explicit_or_calibration(cam["geometry"], "carrousel-board.json", config))
    try:
        g = CarrouselGeometry.load(geometry)
        out.append(Check("camera geometry", True, f"{geometry}: {len(g.markers)} markers"))
    except (ValueError, OSError) as exc:
        out.append(Check("camera geometry", False, _no_repeat(str(exc), geometry),
                         "companion calibrate geometry PHOTO (or fix [camera] geometry)"))
    colours = str(explicit_or_calibration(cam["colours"], "carrousel-colours.json", config))
    try:
        load_references(colours)
        out.append(Check("camera colours", True, colours))
    except (ValueError, OSError) as exc:
        out.append(Check("camera colours", False, _no_repeat(str(exc), colours),
                         "companion calibrate colours PHOTO --spaces ... (or fix [camera] colours)"))
    intrinsics = optional_calibration(cam["intrinsics"], "camera.json", config)
    if intrinsics is not None:
        try:
            load_lens(intrinsics)
            made = _intrinsics_size(intrinsics)
            frame = (cam["width"], cam["height"])
            if made is not None and made != frame:
                out.append(Check("camera intrinsics", False,
                                 f"{intrinsics}: made at {made[0]} x {made[1]} px, the camera is asked for "
                                 f"{frame[0]} x {frame[1]} ([camera] width/height)",
                                 "companion calibrate intrinsics with views at the camera's size (or set [camera] "
                                 "width/height to the calibrated size)"))
            else:
                out.append(Check("camera intrinsics", True, str(intrinsics)))
        except ValueError as exc:
            out.append(Check("camera intrinsics", False, _no_repeat(str(exc), str(intrinsics)),
                             "companion calibrate intrinsics PHOTOS (or empty [camera] intrinsics)"))
    else:
        out.append(Check("camera intrinsics", True, "none set: the lens is taken as distortion-free"))
    try:
        path = encoder_calibration_path(config)
    except ConfigError as exc:  # [encoder] calibration names no file: run refuses it too
        out.append(Check("encoder calibration", False, str(exc),
                         "companion calibrate encoder (it writes that file), or correct [encoder] calibration "
                         f"(empty = encoder.toml of the calibration folder) in {_config_name(config)}"))
        return out
    try:
        if path is None:
            default = calibration_path("encoder.toml", config).expanduser().absolute()
            out.append(Check("encoder calibration", True, f"none at {default}: the nominal counts per turn are used "
                                                          "(companion calibrate encoder measures them)"))
        else:
            cpr = calibrated_counts_per_rev(path)
            out.append(Check("encoder calibration", True, f"{Path(path).absolute()}: {cpr:g} counts per turn"))
    except ConfigError as exc:
        out.append(Check("encoder calibration", False, str(exc), "companion calibrate encoder (or fix the file)"))
    return out


#: The board geometry files the turning games' cameras read: part name -> (file, loader module,
#: loader class, game). Their loaders check every field's type and physical range.
BOARD_FILES: dict[str, tuple[str, str, str, str]] = {
    "monsieur board": ("monsieur-board.toml", "companion.vision.monsieur_geometry", "MonsieurGeometry",
                       "monsieur-carrousel"),
    "carrossel board": ("carrossel-board.toml", "companion.vision.carrossel", "CarrosselGeometry", "carrossel"),
}


def check_boards(config: Any) -> list[Check]:
    """Monsieur Carrousel's ``monsieur-board.toml`` and Carrossel's ``carrossel-board.toml``
    (the calibration folder's, else the shipped one) load: each field of the right type and
    within its physical range (:mod:`companion.calibration_checks`), as ``companion run`` and
    ``companion read`` would load them. One :class:`Check` per file, part ``"monsieur board"``
    and ``"carrossel board"`` (:data:`BOARD_FILES`)."""
    from companion.calibration_dir import calibration_path

    out = []
    for part, (name, module, cls, _game) in BOARD_FILES.items():
        path = calibration_path(name, config)
        try:
            geometry = getattr(importlib.import_module(module), cls).load(path)
        except (ValueError, OSError) as exc:
            out.append(Check(part, False, _no_repeat(str(exc), str(path)),
                             f"correct that field (companion/data/calibration/{name} is the shipped table's), "
                             "or move the file away to use the shipped one"))
            continue
        out.append(Check(part, True, f"{path}: {len(geometry.markers)} fixed markers"))
    return out


def _intrinsics_size(path: Any) -> tuple[int, int] | None:
    """``image_size`` (width, height) of a ``camera.json``, or None when it does not say."""
    import json

    try:
        size = json.loads(Path(path).read_text(encoding="utf-8")).get("image_size")
        return (int(size[0]), int(size[1]))
    except (OSError, ValueError, TypeError, IndexError, AttributeError):
        return None


def check_dice_tray(config: Any) -> Check:
    """Carnival's dice tray (``docs/carnival.md``): ``[dice] tray`` (a pixel box), else the
    calibration folder's ``dice-tray.toml`` read for the camera's frame size (``[camera]
    width/height``; a geometry scaled to it, a too-small die said), else missing: the dice
    reader would search the whole frame with ``[dice] die_px_min/max``."""
    from companion.calibration_dir import calibration_path
    from companion.sources.dice_camera import TRAY_COMMAND, TRAY_FILE, load_tray_geometry

    fix = f"{TRAY_COMMAND} (docs/carnival.md)"
    configured = list(config["dice"]["tray"] or [])
    if configured:
        return Check("dice tray", True, f"[dice] tray {','.join(map(str, configured))}: a pixel box, a die's side "
                                        f"{config['dice']['die_px_min']}-{config['dice']['die_px_max']} px")
    path = calibration_path(TRAY_FILE.name, config)
    if not path.is_file():
        return Check("dice tray", False, f"no {TRAY_FILE.name} in {path.parent}: without the tray's calibration "
                                         "the dice's size and place are unknown (the whole frame would be searched "
                                         "with [dice] die_px_min/max, which reads dice far less well)", fix)
    size = (config["camera"]["width"], config["camera"]["height"])
    try:
        box, geometry = load_tray_geometry(path, size)
    except (ValueError, OSError) as exc:
        return Check("dice tray", False, _no_repeat(str(exc), str(path)), fix)
    detail = f"{path}: the tray's box {','.join(map(str, box))} in {size[0]} x {size[1]} px frames"
    if geometry is None:
        return Check("dice tray", True, detail + " (a pixel box, no geometry)")
    from companion.readers.dice_tray import MIN_FACE_PX

    small = geometry.too_small()
    if small and geometry.face_px_range()[1] < MIN_FACE_PX:  # companion run stops at start on it
        return Check("dice tray", False, f"{path}: {small}", "lower the camera or raise [camera] width/height")
    return Check("dice tray", True, detail + (f"; warning: {small}" if small else ""))


def _no_repeat(message: str, path: str) -> str:
    return message if message.startswith(path) or path in message else f"{path}: {message}"


def check_journal(config: Any) -> Check:
    """The journal's folder is writable (or can be created), an existing journal opens, and
    the entry socket's path beside it fits a Unix socket."""
    from companion.journal import Journal, JournalError

    path = Path(config["service"]["journal"]).expanduser()
    folder = path.parent
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    fix = f"set [service] journal to a file in a folder you can write, in {_config_name(config)}"
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        return Check("journal", False, f"{probe} is not a folder you can write", fix)
    sock = path.with_suffix(".sock")
    if len(os.fsencode(str(sock))) > 100:
        return Check("journal", False, f"the entry socket {sock} is too long a path for a Unix socket", fix)
    if not path.exists():
        return Check("journal", True, f"{folder} is writable ({path.name} will be created)"
                     if folder.exists() else f"{folder} will be created")
    try:
        with Journal(path, readonly=True) as journal:
            n = len(journal.sessions())
    except JournalError as exc:
        return Check("journal", False, str(exc), "move that file away, or set [service] journal")
    if not os.access(path, os.W_OK):
        return Check("journal", False, f"{path} is not writable", fix)
    return Check("journal", True, f"{path}: {n} session{'s' if n != 1 else ''}; its folder is writable")


def _config_name(config: Any) -> str:
    return str(config.source) if config.source else "~/.config/carousel-companion/config.toml"


def needs(game: str, config: Any) -> set[str]:
    """The parts (names of :class:`Check` parts) that ``game`` needs at a real table: its own
    (:data:`GAME_PARTS`), the GPIO pins for its buttons (Carrousel's claims, Monsieur
    Carrousel's YES/NO and die) or the ``lights`` announcer, the audio output, espeak-ng and
    the speech cache folder for the ``speech`` announcer when ``[speech] enabled``, the groups of those devices, and the
    journal."""
    announcers = config["service"].get("announcers", ["console", "speech", "lights"])
    parts = {"journal"}
    if "lights" in announcers or game in ("carrousel", "monsieur-carrousel"):
        parts |= {"GPIO pins", "group gpio"}
    for p in GAME_PARTS[game]:
        parts.add(p)
        if p == "camera":
            parts.add("group video")
            if game == "carrousel":
                parts |= {"camera geometry", "camera colours", "camera intrinsics"}
            if game == "carnival":
                parts.add("dice tray")
        if p == "encoder":
            parts.add("encoder calibration")
            # the turning games' cameras read their board (companion run, companion read)
            parts |= {part for part, spec in BOARD_FILES.items() if spec[3] == game} | {"camera intrinsics"}
            if config["encoder"]["backend"] == "gpio":
                parts |= {"GPIO pins", "group gpio"}
            else:
                parts.add("group dialout")
    if config["speech"]["enabled"] and "speech" in announcers:
        parts |= {"audio output", "espeak-ng", "speech cache", "group audio"}
    return parts


def check_all(config: Any, game: str) -> list[Check]:
    """Every check, in the order printed, each marked needed or not for ``game``."""
    checks = [check_camera(config), check_gpio(config), check_encoder(config), check_audio(config),
              check_espeak(), check_speech_cache(config)]
    checks += [check_group(g) for g in ("gpio", "video", "audio", "dialout")]
    checks += check_calibration(config)
    checks += check_boards(config)
    checks.append(check_dice_tray(config))
    checks.append(check_journal(config))
    wanted = needs(game, config)
    return [dataclasses.replace(c, needed=c.part in wanted) for c in checks]


def run(args: argparse.Namespace, out: Callable[[str], None] = print) -> int:
    """Run ``companion doctor``: print the checks, return 0 when the game's parts are ok, else 1."""
    from companion import config as config_mod
    from companion.cli import UsageError
    from companion.games import GAMES

    config = config_mod.load(getattr(args, "config", None))
    game = args.game or config["service"]["game"]
    if game not in GAMES or game not in GAME_PARTS:
        raise UsageError(f"--game {game}: expected one of {', '.join(GAMES)}")
    out(f"companion doctor: {game} at a real table, configuration {config.source or 'defaults (no file)'}")
    checks = check_all(config, game)
    for c in checks:
        out(c.line(game))
    missing = [c.part for c in checks if c.needed and not c.ok]
    if missing:
        out(f"{game} cannot be refereed at a real table yet: fix {', '.join(missing)}")
        return 1
    out(f"everything {game} needs is ok")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run(argparse.Namespace(game=None, config=None)))
