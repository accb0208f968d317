"""A JPEG cut short is one line "a truncated JPEG" (exit 1 from ``companion read``), not a read
of a half-grey frame with libjpeg's "Premature end of JPEG file" on standard error."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.cli import main
from companion.vision.images import ImageError, read_image


def _jpeg(tmp_path: Path, progressive: bool = False) -> Path:
    rng = np.random.default_rng(1)
    img = rng.integers(0, 255, (240, 320, 3), dtype=np.uint8)
    p = tmp_path / ("p.jpg" if progressive else "b.jpg")
    cv2.imwrite(str(p), img, [cv2.IMWRITE_JPEG_PROGRESSIVE, int(progressive)])
    return p


@pytest.mark.parametrize("progressive", [False, True])
def test_whole_jpegs_read_and_cut_ones_are_refused(tmp_path: Path, progressive: bool) -> None:
    p = _jpeg(tmp_path, progressive)
    assert read_image(p).shape == (240, 320, 3)
    data = p.read_bytes()
    (tmp_path / "trailer.jpg").write_bytes(data + b"camera trailer \xff\x00 data")  # data after the end is fine
    assert read_image(tmp_path / "trailer.jpg").shape == (240, 320, 3)
    for cut in (len(data) // 3, len(data) - 2, 200):  # a third, all but the end marker, the headers only
        t = tmp_path / f"cut{cut}.jpg"
        t.write_bytes(data[:cut])
        with pytest.raises(ImageError, match=r"a truncated JPEG"):
            read_image(t)


def test_companion_read_says_truncated_and_exits_1(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    p = _jpeg(tmp_path)
    t = tmp_path / "trunc.jpg"
    t.write_bytes(p.read_bytes()[: p.stat().st_size // 3])
    assert main(["read", "carrousel", str(t)]) == 1
    out, err = capfd.readouterr()
    assert "a truncated JPEG" in out and err.count("\n") == 1 and "truncated JPEG" in err
    assert "Premature end" not in err
