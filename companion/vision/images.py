"""Reading image files with a pixel limit checked before anything is decoded.

``cv2.imread`` has no size limit of its own that protects a Pi: OpenCV's
``OPENCV_IO_MAX_IMAGE_PIXELS`` defaults to 2^30 pixels, so a 30000 x 30000 PNG (a few hundred
kilobytes of zeros) is decoded into gigabytes before anything fails. So the size is read
first from the file's header by :func:`image_size`, a few dozen bytes of PNG, JPEG, BMP, TIFF
or WebP (the formats of :data:`companion.vision.frames.IMAGE_SUFFIXES`), and
:func:`read_image` decodes only an image within :data:`MAX_PIXELS`. ``cv2.IMREAD_REDUCED_*``
was not chosen: it saves memory only for JPEG (libjpeg's scaled decoding), a PNG is still
decoded whole.

Sources: PNG (ISO/IEC 15948, IHDR); JPEG (ITU-T T.81, annex B: markers, SOFn frame header);
BMP (Microsoft BITMAPINFOHEADER, BITMAPCOREHEADER); TIFF 6.0 (section 2, IFD; tags 256
ImageWidth, 257 ImageLength); WebP container (RFC 9649: VP8, VP8L, VP8X chunks).
"""

from __future__ import annotations

import os
import stat
import struct
from pathlib import Path
from typing import Any

__all__ = [
    "MAX_PIXELS",
    "READER_SIDE_PX",
    "WRITE_SUFFIXES",
    "ImageError",
    "LabelPlacer",
    "OVERLAY_MIN_SIDE_PX",
    "OverlayCanvas",
    "check_image_path",
    "draw_header",
    "image_size",
    "read_image",
    "to_reader_size",
    "write_image",
]

#: The largest image decoded, in pixels: 50 megapixels (150 MB as BGR), four times a Raspberry
#: Pi HQ camera's 12.3-megapixel frame.
MAX_PIXELS = 50_000_000

#: The longer side, in pixels, of the frames the table readers are built for: their pixel
#: constants (the registration's 3 px residual bound and 4 px RANSAC threshold, the marker
#: finder's half-size pass and windows, the sample discs and outlines, the Monsieur and
#: Carrossel readers' rings and letter crops) are those of a 640 x 480 frame, the camera's
#: default (``[camera] width``). A larger photograph is brought to this size by
#: :func:`to_reader_size` before it is read.
READER_SIDE_PX = 640

_JPEG_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


#: Extensions an image may be written with (those this OpenCV build has a writer for are
#: listed by :func:`check_image_path`).
WRITE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp")


class ImageError(ValueError):
    """An image file that cannot be read (the message is one line naming the file and what
    was expected)."""


def _jpeg_size(f: Any) -> tuple[int, int] | None:
    f.seek(2)
    while True:
        byte = f.read(1)
        if not byte:
            return None
        if byte != b"\xff":
            continue  # not at a marker: scan on (entropy-coded data has no 0xFF alone)
        marker = f.read(1)
        while marker == b"\xff":  # fill bytes
            marker = f.read(1)
        if not marker:
            return None
        m = marker[0]
        if m in (0x01, 0xD8) or 0xD0 <= m <= 0xD7:  # markers without a length
            continue
        if m == 0xD9:
            return None
        head = f.read(2)
        if len(head) < 2:
            return None
        length = struct.unpack(">H", head)[0]
        if m in _JPEG_SOF:
            frame = f.read(5)
            if len(frame) < 5:
                return None
            height, width = struct.unpack(">HH", frame[1:5])
            return width, height
        if length < 2:
            return None
        f.seek(length - 2, os.SEEK_CUR)


def _jpeg_truncated(path: str | os.PathLike[str]) -> bool:
    """Whether a JPEG file ends before its image does: no start-of-scan segment (SOS, 0xFFDA)
    after the headers, or no end-of-image marker (EOI, 0xFFD9) after the first scan. The
    entropy-coded data cannot hold 0xFFD9 (an 0xFF byte there is stuffed as 0xFF00, ITU-T T.81
    B.1.1.5), so a file cut short has none; data after EOI (a camera's trailer) is allowed.
    Reads the headers and searches the rest through a memory map, without decoding."""
    import mmap

    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size < 4:
            return True
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            pos = 2
            while True:  # the segments before the first scan, each 0xFF, marker, 2-byte length
                while pos < size and m[pos] == 0xFF and pos + 1 < size and m[pos + 1] == 0xFF:
                    pos += 1  # fill bytes
                if pos + 4 > size or m[pos] != 0xFF:
                    return True
                marker = m[pos + 1]
                if marker in (0x01, 0xD8) or 0xD0 <= marker <= 0xD7:
                    pos += 2
                    continue
                if marker == 0xD9:
                    return True  # an end before any scan
                length = struct.unpack(">H", m[pos + 2:pos + 4])[0]
                if length < 2:
                    return True
                if marker == 0xDA:
                    return m.find(b"\xff\xd9", pos + 2 + length) < 0
                pos += 2 + length


def _tiff_size(f: Any, head: bytes) -> tuple[int, int] | None:
    order = "<" if head[:2] == b"II" else ">"
    if struct.unpack(order + "H", head[2:4])[0] != 42:
        return None  # BigTIFF (43) and others
    f.seek(struct.unpack(order + "I", head[4:8])[0])
    raw = f.read(2)
    if len(raw) < 2:
        return None
    n = struct.unpack(order + "H", raw)[0]
    found: dict[int, int] = {}
    for _ in range(min(n, 4096)):
        entry = f.read(12)
        if len(entry) < 12:
            break
        tag, kind, _count = struct.unpack(order + "HHI", entry[:8])
        if tag in (256, 257):
            value = struct.unpack(order + ("H" if kind == 3 else "I"), entry[8:10] if kind == 3 else entry[8:12])[0]
            found[tag] = value
    if 256 in found and 257 in found:
        return found[256], found[257]
    return None


def _size_from(f: Any) -> tuple[int, int] | None:
    head = f.read(32)
    if head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR":
        return struct.unpack(">II", head[16:24])
    if head[:2] == b"\xff\xd8":
        return _jpeg_size(f)
    if head[:2] == b"BM" and len(head) >= 26:
        if struct.unpack("<I", head[14:18])[0] == 12:
            return struct.unpack("<HH", head[18:22])
        w, h = struct.unpack("<ii", head[18:26])
        return abs(w), abs(h)
    if head[:4] in (b"II*\x00", b"MM\x00*"):
        return _tiff_size(f, head)
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        chunk = head[12:16]
        f.seek(20)
        data = f.read(10)
        if chunk == b"VP8 " and len(data) >= 10 and data[3:6] == b"\x9d\x01\x2a":
            w, h = struct.unpack("<HH", data[6:10])
            return w & 0x3FFF, h & 0x3FFF
        if chunk == b"VP8L" and len(data) >= 5 and data[0] == 0x2F:
            bits = int.from_bytes(data[1:5], "little")
            return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
        if chunk == b"VP8X" and len(data) >= 10:
            return int.from_bytes(data[4:7], "little") + 1, int.from_bytes(data[7:10], "little") + 1
    return None


def _is_jpeg(path: str | os.PathLike[str]) -> bool:
    with open(path, "rb") as f:
        return f.read(2) == b"\xff\xd8"


def image_size(path: str | os.PathLike[str]) -> tuple[int, int]:
    """``(width, height)`` in pixels from the file's header, without decoding it.

    Raises:
        ImageError: no such file, not a regular file (a FIFO would block), or not a PNG, JPEG,
            BMP, TIFF or WebP file whose header gives a size.
    """
    try:
        st = os.stat(path)
    except OSError as exc:
        raise ImageError(f"{path}: {'no such file' if isinstance(exc, FileNotFoundError) else exc.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise ImageError(f"{path}: not a regular file (expected an image file)")
    try:
        with open(path, "rb") as f:
            size = _size_from(f)
    except (OSError, struct.error, ValueError) as exc:
        raise ImageError(f"{path}: cannot read its header ({exc})") from None
    if size is None:
        raise ImageError(f"{path}: not an image this reads (expected PNG, JPEG, BMP, TIFF or WebP)")
    return int(size[0]), int(size[1])


def read_image(path: str | os.PathLike[str], flags: int | None = None, max_pixels: int = MAX_PIXELS) -> Any:
    """Decode an image file with OpenCV once its header says it is within ``max_pixels``.

    Args:
        path: the file.
        flags: ``cv2.imread`` flags (default ``cv2.IMREAD_COLOR``: ``H x W x 3 uint8`` BGR).
        max_pixels: the largest width x height accepted.

    Returns:
        The image as a numpy array (``H x W x 3 uint8`` BGR by default).

    Raises:
        ImageError: the file is missing, not an image, larger than ``max_pixels`` (naming its
            size), a JPEG cut short (no end-of-image marker), or OpenCV cannot decode it.
    """
    import cv2

    w, h = image_size(path)
    if w * h > max_pixels:
        raise ImageError(f"{path}: {w} x {h} pixels is more than the {max_pixels / 1e6:g} megapixels "
                         "this decodes (expected a camera photograph; scale it down)")
    if w == 0 or h == 0:
        raise ImageError(f"{path}: an image of {w} x {h} pixels (expected a photograph)")
    if _is_jpeg(path) and _jpeg_truncated(path):
        raise ImageError(f"{path}: a truncated JPEG (the file ends before the image does: copy or save it again)")
    image = cv2.imread(str(Path(path)), cv2.IMREAD_COLOR if flags is None else flags)
    if image is None:
        raise ImageError(f"{path}: not an image OpenCV can decode (a damaged or unusual {w} x {h} file)")
    return image


def to_reader_size(frame: Any, side_px: int = READER_SIDE_PX) -> tuple[Any, float]:
    """``frame`` brought down to the readers' working size: its longer side ``side_px`` pixels
    (:data:`READER_SIDE_PX`), the aspect ratio kept, by pixel-area averaging
    (``cv2.INTER_AREA``, which does not alias a bicubic upscale or a 12-megapixel photo's fine
    texture). A frame no larger is returned as it is (never enlarged).

    Args:
        frame: ``H x W x 3 uint8`` BGR (or ``H x W``).
        side_px: the longest side wanted, pixels.

    Returns:
        ``(frame, scale)``: the frame to read and the factor from the original's pixels to its
        own (``1.0`` when unchanged, ``640 / 2592`` for a 2592 x 1944 photo).
    """
    import cv2

    h, w = frame.shape[:2]
    longer = max(h, w)
    if longer <= side_px:
        return frame, 1.0
    scale = side_px / longer
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    return cv2.resize(frame, size, interpolation=cv2.INTER_AREA), size[0] / w


def draw_header(img: Any, text: str, colour: tuple[int, int, int] = (255, 255, 255), scale: float = 0.4) -> int:
    """Write ``text`` on a black band across the top of ``img`` (``H x W x 3 uint8`` BGR, drawn
    in place), in ``colour`` (BGR), one stroke thick, wrapped at spaces onto as many lines as the
    image's width needs (a word longer than a line is cut; a newline in ``text`` starts a new
    line, e.g. for a legend under the status): readable on any photograph, light or
    dark, and nothing of the status lost at a narrow image's edge. Returns the band's height in
    pixels (the rows a caller keeps free of labels). (A thick black copy under thin text is no
    shadow in OpenCV's Hershey fonts: a glyph's advance grows with the stroke, so the thick copy
    runs longer and its last letters show past the text.)"""
    import cv2

    font = cv2.FONT_HERSHEY_SIMPLEX
    width = img.shape[1] - 8
    (_, th), base = cv2.getTextSize("Ag", font, scale, 1)
    step = th + base + 3

    def fits(line: str) -> bool:
        return cv2.getTextSize(line, font, scale, 1)[0][0] <= width

    # fields (parts written two spaces apart) stay whole on a line when they fit, else words;
    # a newline starts a new line (a legend under the status)
    lines: list[str] = []
    for paragraph in text.split("\n"):
        pieces = [(part, "  ") for part in paragraph.split("  ") if part.strip()]
        first = len(lines)
        while pieces:
            piece, gap = pieces.pop(0)
            piece = piece.strip()
            if len(lines) > first and fits(f"{lines[-1]}{gap}{piece}"):
                lines[-1] = f"{lines[-1]}{gap}{piece}"
                continue
            if not fits(piece) and " " in piece:
                words = piece.split()
                pieces[:0] = [(words[0], gap)] + [(word, " ") for word in words[1:]]
                continue
            while piece and not fits(piece):
                piece = piece[:-1]
            lines.append(piece)
    lines = lines or [""]
    band = step * len(lines) + 3
    cv2.rectangle(img, (0, 0), (img.shape[1], band), (0, 0, 0), -1)
    for i, line in enumerate(lines):
        cv2.putText(img, line, (4, 3 + th + i * step), font, scale, colour, 1, cv2.LINE_AA)
    return band


#: The shorter side, in pixels, an overlay is drawn at, at least: a smaller frame is drawn on an
#: enlarged copy (:class:`OverlayCanvas`), since a status band and labels 9-12 px high do not
#: fit on an 8 x 6 or a 160 x 120 px image, and the image itself is too small to look at.
OVERLAY_MIN_SIDE_PX = 320

#: The longer side, in pixels, an enlarged overlay is kept within (a 640 x 1 frame is enlarged
#: no more than 3 times and given a black margin instead).
OVERLAY_MAX_SIDE_PX = 1920


class OverlayCanvas:
    """The image an overlay is drawn on: a copy of ``frame``, enlarged by a whole factor (each
    pixel a ``scale x scale`` block, ``cv2.INTER_NEAREST``: the pixels the reader saw, not
    smoothed ones) when its shorter side is under ``min_side_px``, the longer side kept within
    ``max_side_px``; when that is still too short (a 640 x 1 strip) the enlarged image is put at
    the bottom of a black canvas ``min_side_px`` high (or at the left of one that wide), the
    status band drawn over the margin. A frame large enough is only copied (``scale`` 1).

    Args:
        frame: ``H x W x 3 uint8`` BGR (not modified).
        min_side_px, max_side_px: the canvas's shorter side at least, the enlarged image's
            longer side at most (pixels).

    Attributes:
        img: the canvas, ``H' x W' x 3 uint8`` BGR, to draw on.
        scale: the whole enlargement factor (1 for a frame drawn as it is).
        offset: ``(x, y)`` pixels of the frame's top-left corner on the canvas.
        note: ``""``, or the words saying that the frame was enlarged (``"shown 54 x: the
            image is 8 x 6 px"``), for the status band.

    Example::

        canvas = OverlayCanvas(frame)
        band = draw_header(canvas.img, status + canvas.note)
        cv2.circle(canvas.img, canvas.pt(xy), 9, (255, 255, 255), 2)
    """

    def __init__(self, frame: Any, min_side_px: int = OVERLAY_MIN_SIDE_PX, max_side_px: int = OVERLAY_MAX_SIDE_PX):
        import cv2
        import numpy as np

        h, w = frame.shape[:2]
        k = 1
        if min(h, w) < min_side_px:
            k = max(1, min(-(-min_side_px // max(min(h, w), 1)), max_side_px // max(h, w, 1)))
        big = frame.copy() if k == 1 else cv2.resize(frame, (w * k, h * k), interpolation=cv2.INTER_NEAREST)
        bh, bw = big.shape[:2]
        if min(bh, bw) < min_side_px:
            ch, cw = (min_side_px, bw) if bh <= bw else (bh, min_side_px)
            canvas = np.zeros((ch, cw, 3), np.uint8)
            ox, oy = (0, ch - bh) if bh <= bw else (0, 0)
            canvas[oy:oy + bh, ox:ox + bw] = big
            big, margin = canvas, "on a black margin, "
        else:
            ox, oy, margin = 0, 0, ""
        self.img = big
        self.scale = k
        self.offset = (ox, oy)
        self._same = k == 1 and (ox, oy) == (0, 0)  # frame pixels are canvas pixels
        self.note = ""
        if k > 1 or margin:
            self.note = f"  ({'shown ' + str(k) + ' x, ' if k > 1 else ''}{margin}the image is {w} x {h} px)"

    def points(self, xy: Any) -> Any:
        """Frame pixels (``N x 2``, x then y, pixel centres at whole numbers) -> canvas pixels
        (``N x 2 float64``)."""
        import numpy as np

        p = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
        if self._same:
            return p
        k = self.scale
        return (p + 0.5) * k - 0.5 + np.asarray(self.offset, dtype=np.float64)

    def pt(self, xy: Any) -> tuple[int, int]:
        """One frame pixel ``(x, y)`` -> the canvas's nearest whole pixel, for ``cv2`` drawing."""
        if self._same:
            u, v = xy[0], xy[1]
        else:
            u, v = self.points(xy)[0]
        return int(round(float(u))), int(round(float(v)))

    def poly(self, xy: Any) -> Any:
        """Frame pixels (``N x 2``) -> canvas pixels ``N x 2 int32``, for ``cv2.polylines``."""
        import numpy as np

        return np.rint(self.points(xy)).astype(np.int32)


class LabelPlacer:
    """Writes short labels on an image, each on a black box with a coloured border (readable on
    light and dark photographs alike), moving a label up or down by whole label heights when it
    would cover one already written or leave the image (so that two neighbours' labels never
    overlap).

    Args:
        img: ``H x W x 3 uint8`` BGR, drawn in place.
        scale: the font's scale (``cv2.FONT_HERSHEY_SIMPLEX``); 0.36 is 9 px high.
        top_px: rows at the top kept free (a header band).

    Example::

        labels = LabelPlacer(out, top_px=18)
        labels.put("3:empty 1.00", (320, 240), (255, 255, 255))
    """

    def __init__(self, img: Any, scale: float = 0.36, top_px: int = 0):
        self.img = img
        self.scale = float(scale)
        self.top_px = int(top_px)
        self.boxes: list[tuple[int, int, int, int]] = []

    def put(self, text: str, centre: tuple[float, float], colour: tuple[int, int, int]) -> tuple[int, int, int, int]:
        """Write ``text`` centred on ``centre`` (x, y pixels) or as near it as it fits; returns
        its box ``(x0, y0, x1, y1)``."""
        import cv2

        font = cv2.FONT_HERSHEY_SIMPLEX
        (w, h), base = cv2.getTextSize(text, font, self.scale, 1)
        bw, bh = w + 4, h + base + 4
        height, width = self.img.shape[:2]
        x0 = round(float(centre[0]) - bw / 2)
        x0 = min(max(x0, 0), max(0, width - bw - 1))
        y_mid = round(float(centre[1]) - bh / 2)
        best = None
        for step in (0, -1, 1, -2, 2, -3, 3, -4, 4):
            y0 = y_mid + step * (bh + 1)
            if y0 < self.top_px or y0 + bh >= height:
                continue
            box = (x0, y0, x0 + bw, y0 + bh)
            if not any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in self.boxes):
                best = box
                break
        if best is None:  # crowded: where it belongs, over the others
            y0 = min(max(y_mid, self.top_px), max(self.top_px, height - bh - 1))
            best = (x0, y0, x0 + bw, y0 + bh)
        self.boxes.append(best)
        cv2.rectangle(self.img, best[:2], (best[2], best[3]), (0, 0, 0), -1)
        cv2.rectangle(self.img, best[:2], (best[2], best[3]), colour, 1)
        cv2.putText(self.img, text, (best[0] + 2, best[1] + 2 + h), font, self.scale, (255, 255, 255), 1, cv2.LINE_AA)
        return best


def check_image_path(path: str | os.PathLike[str]) -> None:
    """Check that an image can be written to ``path`` before any work is done: its extension
    has an OpenCV writer (``cv2.haveImageWriter``) and it is not an existing non-regular file.

    Raises:
        ImageError: one line naming the path and the extensions that work (e.g. ``.png, .jpg``).
    """
    import cv2

    p = Path(path)
    ok = [s for s in WRITE_SUFFIXES if cv2.haveImageWriter("x" + s)]
    if p.suffix.lower() not in ok or not cv2.haveImageWriter(str(p)):
        raise ImageError(f"{p}: cannot write an image with {'extension ' + repr(p.suffix) if p.suffix else 'no extension'}"
                         f" (expected one of {', '.join(ok)})")
    if p.exists() and not p.is_file():
        raise ImageError(f"{p}: not a regular file (expected an image file to write)")


def write_image(path: str | os.PathLike[str], image: Any, what: str = "image") -> None:
    """Write ``image`` (``H x W x 3 uint8`` BGR) with ``cv2.imwrite``; ``what`` names it in
    the error (e.g. ``"overlay image"``).

    Raises:
        ImageError: the extension has no writer, or the file cannot be written (folder missing,
            no permission), one line naming the path.
    """
    import cv2

    check_image_path(path)
    try:
        ok = cv2.imwrite(str(Path(path)), image)
    except cv2.error as exc:
        raise ImageError(f"{path}: cannot write the {what} ({str(exc).strip().splitlines()[-1]})") from None
    if not ok:
        raise ImageError(f"{path}: cannot write the {what} (does its folder exist, may it be written?)")
