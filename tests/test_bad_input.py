"""Bad input, everywhere one line (issue 14, item 6): a configuration nested too deep, a FIFO
as the configuration, an image of 30000 x 30000 pixels, a camera that cannot open, a Pico that
stops reading, and lines buffered after an incompatible hello."""

from __future__ import annotations

import os
import resource
import select
import struct
import subprocess
import sys
import time
import zlib

import cv2
import numpy as np
import pytest

from companion.clock import ManualClock
from companion.config import ConfigError, load
from companion.rotation.pico import PicoEncoder
from companion.rotation.samples import CountSample, LinkFault, LinkLost, LinkRestored
from companion.vision.frames import FolderSource, FrameSourceError, open_frame_source
from companion.vision.images import MAX_PIXELS, ImageError, image_size, read_image

from tests.fake_pico import FakePico

import protocol as fw  # firmware/protocol.py, put on the path by tests.fake_pico  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _companion(*argv, timeout=30, preexec=None):
    return subprocess.run([sys.executable, "-m", "companion", *argv], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout, env={**os.environ, "PYTHONPATH": ROOT}, preexec_fn=preexec)


def _one_line(done, *words):
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    for w in words:
        assert w in done.stderr


# -- configuration ----------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["{a=" * 350 + "1" + "}" * 350, "[" * 900 + "]" * 900])
def test_a_configuration_nested_too_deep_is_one_line(tmp_path, value):
    p = tmp_path / "deep.toml"
    p.write_text(f"[players]\nnames = {value}\n")
    with pytest.raises(ConfigError, match=r"deep\.toml: not valid TOML: arrays or tables nested too deep"):
        load(p)


def test_a_fifo_as_the_configuration_is_refused_at_once(tmp_path):
    """Nobody writes into it: reading it would wait forever. It is refused before reading."""
    fifo = tmp_path / "config.toml"
    os.mkfifo(fifo)
    started = time.monotonic()
    done = _companion("--config", str(fifo), "config", timeout=20)
    _one_line(done, "config.toml: a FIFO, not a TOML configuration file (expected a regular file)")
    assert time.monotonic() - started < 20
    with pytest.raises(ConfigError, match="a device"):
        load("/dev/zero")


# -- images -----------------------------------------------------------------------------------


def _png_header_only(path, width, height):
    """A valid PNG header announcing ``width x height`` RGB with a tiny IDAT (a decompression
    bomb's shape: kilobytes on disk, gigabytes decoded)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    body = zlib.compress(b"\x00" * (width * 3 + 1) * 4)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", body) + chunk(b"IEND", b""))


@pytest.mark.parametrize("ext", [".png", ".jpg", ".bmp", ".tif", ".webp"])
@pytest.mark.parametrize("shape", [(37, 53, 3), (480, 640, 1)])
def test_the_header_gives_the_size_opencv_decodes(tmp_path, ext, shape):
    image = (np.random.default_rng(1).random(shape) * 255).astype(np.uint8)
    p = tmp_path / f"x{ext}"
    assert cv2.imwrite(str(p), image if shape[2] == 3 else image[:, :, 0])
    decoded = cv2.imread(str(p), cv2.IMREAD_UNCHANGED)
    assert image_size(p) == (decoded.shape[1], decoded.shape[0])
    assert read_image(p).shape == (shape[0], shape[1], 3)


def test_an_image_of_30000_by_30000_pixels_is_refused_before_decoding_in_bounded_memory(tmp_path):
    """Under a 1.5 GB address-space limit (the image decoded would need 2.7 GB): one line,
    from `companion dice` and `companion read`, and the folder source skips it."""
    huge = tmp_path / "huge.png"
    _png_header_only(huge, 30000, 30000)
    with pytest.raises(ImageError, match=r"huge\.png: 30000 x 30000 pixels is more than the 50 megapixels"):
        read_image(huge)

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, resource.RLIM_INFINITY))

    done = _companion("dice", str(huge), preexec=limit, timeout=60)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    # one line for the image (the tray's missing calibration is a warning of its own)
    problems = [line for line in done.stderr.splitlines() if not line.startswith("companion: warning:")]
    assert len(problems) == 1 and "30000 x 30000 pixels" in problems[0]
    done = _companion("read", "carrousel", str(huge), preexec=limit, timeout=60)
    assert "Traceback" not in done.stderr and "30000 x 30000 pixels" in done.stderr
    small = tmp_path / "small.png"
    cv2.imwrite(str(small), np.zeros((10, 20, 3), np.uint8))
    source = FolderSource(tmp_path)
    frame = source.read()
    assert frame.name == "small.png" and source.skipped == [str(huge)]
    assert 30000 * 30000 > MAX_PIXELS


def test_a_file_that_is_not_an_image_is_one_line(tmp_path):
    p = tmp_path / "notes.png"
    p.write_text("not an image")
    with pytest.raises(ImageError, match=r"notes\.png: not an image this reads \(expected PNG, JPEG"):
        read_image(p)
    with pytest.raises(ImageError, match="no such file"):
        read_image(tmp_path / "missing.jpg")
    fifo = tmp_path / "pipe.jpg"
    os.mkfifo(fifo)
    with pytest.raises(ImageError, match="not a regular file"):  # never waits on it
        read_image(fifo)


def test_a_camera_that_cannot_open_is_one_line(tmp_path):
    with pytest.raises(FrameSourceError, match="opencv:9: cannot open"):
        open_frame_source("opencv:9")
    with pytest.raises(FrameSourceError, match="no such video file"):
        open_frame_source(f"opencv:{tmp_path / 'none.mp4'}")


# -- the Pico ---------------------------------------------------------------------------------


def test_a_device_that_stops_reading_loses_the_link_after_the_write_timeout():
    """The fake Pico stops reading its port: the host's commands fill the pty; a write waits
    at most write_timeout_s, then the link counts as lost (never a thread blocked forever)."""
    fake = FakePico()
    samples = []
    reader = PicoEncoder(find_port=lambda: fake.name, write_timeout_s=0.2)
    clock = ManualClock()
    reader.attach(samples.append, clock)
    try:
        for _ in range(5):
            fake.step()
            reader.step()
            clock.advance(0.01)
        assert reader.hello is not None
        slowest = 0.0
        for _ in range(100_000):  # the fake reads nothing from now on
            started = time.monotonic()
            reader.send("STATUS")
            slowest = max(slowest, time.monotonic() - started)
            if reader._ser is None:
                break
        assert any(isinstance(s, LinkLost) for s in samples)
        assert slowest < 1.5  # bounded by the timeout, not forever
    finally:
        reader.stop()
        fake.close()


def test_lines_buffered_after_an_incompatible_hello_are_dropped():
    """An incompatible hello followed, in the same read, by a compatible hello and counts:
    the reader stops at the fault; nothing after it is taken as the encoder's."""
    fake = FakePico()
    samples = []
    reader = PicoEncoder(find_port=lambda: fake.name)
    reader.attach(samples.append, ManualClock())
    try:
        assert reader.step()  # connected, waiting for the hello
        data = (fw.frame("HELLO carousel-encoder proto=2 fw=9.0.0 boot=00000001")
                + fw.hello_line("1.0.0", 0x1234) + fw.count_line(1, 1000, 50) + fw.count_line(2, 2000, 60))
        os.write(fake.master, data)
        select.select([reader._ser.fileno()], [], [], 5.0)  # the bytes have crossed the pty
        assert reader.step() is False
        assert [type(s) for s in samples] == [LinkFault]
        assert reader.hello is None and reader.fault is not None
        assert not any(isinstance(s, (LinkRestored, CountSample)) for s in samples)
    finally:
        reader.stop()
        fake.close()


def test_a_journal_path_through_a_regular_file_is_one_line_naming_it(tmp_path, capsys):
    """[service] journal = a path whose folder is a file: one line naming that file as not a
    folder, exit 2, the file untouched (not "File exists")."""
    from companion.cli import main

    blocker = tmp_path / "notes.txt"
    blocker.write_text("keep me\n")
    config = tmp_path / "companion.toml"
    config.write_text("[web]\nenabled = false\n")
    rc = main(["--config", str(config), "run", "--journal", str(blocker / "games" / "j.db"), "--speed", "100"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1
    assert f"{blocker} is a file, not a folder" in err[0] and "File exists" not in err[0]
    assert blocker.read_text() == "keep me\n"
