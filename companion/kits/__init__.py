"""The kits: what each game registers beside its engine so that one path assembles its service.

One module per game (:mod:`.carrousel`, :mod:`.monsieur_carrousel`, :mod:`.carrossel`,
:mod:`.carnival`), each with a ``KIT`` (:class:`companion.assembly.Kit`) listed in
:data:`companion.games.KITS`. This module holds the parts several kits share: the real shaft
encoder, the camera's health.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

from companion.assembly import Table
from companion.health import PartMissing

__all__ = ["real_encoder", "camera_status", "camera_spec", "camera_fix", "CAMERA_FIX", "CAMERA_LOST_FIX", "ENCODER_FIX",
           "PICAMERA2_FIX"]

log = logging.getLogger("companion.kits")

CAMERA_FIX = ("check the camera's ribbon cable (or the USB webcam) and `companion doctor`; "
              "[camera] source names it (picamera2, opencv:0, opencv:FILE)")


#: the fix when picamera2 cannot be imported (README: "On a Pi `./dev` makes the virtual
#: environment with `--system-site-packages`"; picamera2 comes from apt, DESIGN.md)
PICAMERA2_FIX = ("on Raspberry Pi OS: sudo apt install python3-picamera2, and run the companion from a "
                 "virtual environment made with --system-site-packages (./dev makes it so on a Pi); "
                 "or set [camera] source (or --camera) to opencv:0 for a USB webcam")


def camera_fix(exc: BaseException) -> str:
    """The fix for a camera that cannot be opened: the source's own (a video file's path, a
    folder of images: :attr:`companion.vision.frames.FrameSourceError.fix`); picamera2 that
    cannot be imported: :data:`PICAMERA2_FIX` (install it, a venv that sees it); else
    :data:`CAMERA_FIX` (the cable)."""
    fix = getattr(exc, "fix", None)
    if fix:
        return fix
    if isinstance(exc.__cause__, ImportError) or str(exc).startswith("picamera2 is not installed"):
        return PICAMERA2_FIX
    return CAMERA_FIX


#: what the table is told when the camera is lost while playing
CAMERA_LOST_FIX = "The game waits. Check the camera's cable; the game goes on when it sees the table again."
#: A camera that gives the same picture over and over (the reader's "camera frozen: ...").
CAMERA_FROZEN_FIX = ("The game waits: the camera sends the same picture over and over. Check the camera's cable, "
                     "or restart the companion; the game goes on when the picture moves again.")
ENCODER_FIX = ("plug the Pico in with a data USB cable (flashed as in firmware/README.md), or set "
               "[encoder] port, or [encoder] backend = \"gpio\" for a knob on the GPIO pins")


def real_encoder(t: Table, convert: Callable[[Any], Any] | None = None) -> Any:
    """The real shaft encoder (the Pico on USB, or gpiozero) as a rotation source whose link
    is watched by ``t.parts`` (``encoder``).

    Args:
        t: the table being assembled.
        convert: maps each rotation observation to the game's own (or None to drop it).

    Raises:
        PartMissing: ``[encoder] backend = "sim"``, or no Pico found on USB / the configured
            port does not exist.
    """
    from companion.rotation import reader_from_config, tracker_from_config
    from companion.rotation.pico import find_pico_port, parse_usb_id
    from companion.rotation.samples import LinkLost, LinkRestored
    from companion.rotation.tracker import RotationSource

    enc = t.config["encoder"]
    backend = enc["backend"]
    if backend == "sim":
        raise PartMissing("encoder", "[encoder] backend is \"sim\", the simulated shaft", ENCODER_FIX)
    if backend in ("auto", "pico"):
        port = enc["port"]
        if port:
            if "://" not in port and not os.path.exists(port):
                raise PartMissing("encoder (Pico on USB)", f"{port} does not exist", ENCODER_FIX)
        elif find_pico_port(parse_usb_id(enc["usb_id"])) is None:
            raise PartMissing("encoder (Pico on USB)", f"no Pico found on USB ({enc['usb_id']})", ENCODER_FIX)
        backend = "pico"
    reader = reader_from_config(t.config, backend, pin_factory=t.pin_factory)
    if backend == "pico":
        _hello(reader, t)
        t.parts.set("encoder", "missing", "waiting for the Pico's hello")
    else:
        t.parts.set("encoder", "ok", "gpio")

    def on_sample(sample: Any) -> None:
        if isinstance(sample, LinkLost):
            t.parts.lost("encoder", sample.reason, "The game waits. Check the Pico's USB cable; the game goes on "
                         "when it is back.")
        elif isinstance(sample, LinkRestored):
            t.parts.back("encoder", f"Pico on {getattr(sample, 'port', '') or enc['port'] or 'USB'}")

    source = RotationSource(reader, tracker_from_config(t.config, reader), on_sample=on_sample)
    if convert is None:
        return source
    return _Converted(source, convert)


def _hello(reader: Any, t: Table, timeout_s: float = 3.0) -> None:
    """Open the Pico's port and wait for the firmware's hello (the reader's own code, driven
    step by step), then close it again for the service to open; a port that is not a serial
    device, or a device that does not answer as our firmware, is :class:`PartMissing`."""
    import time

    from companion.clock import MonotonicClock
    from companion.rotation.samples import LinkRestored

    said: list[Any] = []
    reader.attach(lambda sample: said.append(sample) if isinstance(sample, LinkRestored) else None, MonotonicClock())
    deadline = time.monotonic() + timeout_s
    opened = False
    try:
        while not said and reader.fault is None and time.monotonic() < deadline:
            if not reader.step():
                if not opened and reader.port_name is None:
                    break  # the port cannot be opened at all
                time.sleep(0.05)  # the reader's own pause before it tries the port again
            opened = opened or reader.port_name is not None
    finally:
        reader.stop()
    port = t.config["encoder"]["port"] or "the Pico's port"
    if reader.fault is not None:
        raise PartMissing("encoder (Pico on USB)", reader.fault, "flash firmware/ onto the Pico (firmware/README.md)")
    if not opened:
        raise PartMissing("encoder (Pico on USB)", f"{port} cannot be opened as a serial port", ENCODER_FIX)
    if not said:
        raise PartMissing("encoder (Pico on USB)", f"{port} does not answer as the encoder firmware "
                          f"within {timeout_s:g} s", "flash firmware/ onto the Pico (firmware/README.md), "
                          "or check [encoder] port")


class _Converted:
    """A source whose observations pass through ``convert`` (None drops one)."""

    def __init__(self, source: Any, convert: Callable[[Any], Any]):
        self.source = source
        self.convert = convert

    def start(self, emit: Callable[[Any], None], clock: Any) -> None:
        """Start the wrapped source; its observations are converted."""
        def wrapped(obs: Any) -> None:
            out = self.convert(obs)
            if out is not None:
                emit(out)

        self.source.start(wrapped, clock)

    def stop(self) -> None:
        """Stop the wrapped source."""
        self.source.stop()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.source, name)


def camera_status(t: Table, spec: str, source: Callable[[], Any]) -> Callable[[str], None]:
    """An ``on_status(text)`` for a camera source: ``camera lost`` or ``camera frozen`` (the
    same frame over and over: told once, the game waits) -> the part is lost, the
    end of a video file or folder -> the run ends with a one-line summary (the frames read,
    and those the reader had no time for: ``source()`` gives the camera source, or None, whose
    ``frames_read`` and, when it captures on a thread of its own, ``frames_captured`` count
    them), any other state after a loss -> the part is back."""

    def on_status(text: str) -> None:  # the source logs its state (once per change): not again here
        if text.startswith("camera: end of frames"):
            cam = source()
            read = getattr(cam, "frames_read", 0)
            captured = getattr(cam, "frames_captured", None)
            skipped = (f" ({captured - read} more skipped while the reader was busy: the newest frame wins)"
                       if isinstance(captured, int) and captured > read else "")
            t.on_end(f"{spec}: the frames ended after {read} frames read{skipped}")
        elif text.startswith("camera lost"):
            t.parts.lost("camera", text, CAMERA_LOST_FIX)
        elif text.startswith("camera frozen"):
            t.parts.lost("camera", text, CAMERA_FROZEN_FIX)
        else:
            t.parts.back("camera", text)

    return on_status


def camera_spec(t: Table) -> str:
    """The real camera's spec: ``--camera``, else ``[camera] source`` (``auto`` = picamera2).

    Raises:
        PartMissing: the simulated camera was asked for at a real table.
    """
    spec = t.options.get("camera") or t.config["camera"]["source"]
    if spec == "auto":
        spec = "picamera2"
    if spec.startswith("sim"):
        raise PartMissing("camera", f"{spec!r} is the simulated camera",
                          "set [camera] source (or --camera) to picamera2, opencv:0 or opencv:FILE")
    return spec
