"""Video of a Carnival dice tray made from a real photo, for the dice camera's tests and bench.

The photo is tests/data/dice/IMG_20191208_112847.jpg (nell-byler/dice_detection, BSD-3-Clause;
see tests/data/dice/README.md): three dice (3, 1, 5 by its labels) lying in a grey tray, seen
from above, 640 x 640 px. From it:

* the empty tray: the photo with the three dice painted out (``cv2.inpaint``);
* dice tumbling: the empty tray with the photo's three dice cut out and pasted at new places,
  turned and blurred along their motion, different in every frame;
* dice at rest: the photo itself (and, for the "four dice" case, the photo with a copy of its
  red die pasted on the floor).

Frames are written with OpenCV's ``VideoWriter`` as Motion JPEG in an ``.avi`` (no codec beyond
OpenCV's own), so the reader sees JPEG-compressed frames, as from a camera.
"""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path

import cv2
import numpy as np

DATA = Path(__file__).parent / "data" / "dice"
PHOTO = DATA / "IMG_20191208_112847.jpg"
#: The tray's floor in the photo, pixels (x0, y0, x1, y1): inside the walls.
TRAY = (90, 140, 545, 495)
#: The photo's dice by its labels, in the reader's order (rows from the top, left to right).
NAMES = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


def photo_dice() -> tuple[np.ndarray, list[tuple[int, int, int, int]], list[int]]:
    """``(photo 640 x 640 x 3 uint8 BGR, dice boxes (x0, y0, x1, y1) px, values)`` from labels.csv."""
    image = cv2.imread(str(PHOTO), cv2.IMREAD_COLOR)
    assert image is not None, PHOTO
    boxes, values = [], []
    with open(DATA / "labels.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            if row["filename"] == PHOTO.name:
                w, h = float(row["width"]), float(row["height"])
                boxes.append((int(float(row["xmin"]) * w), int(float(row["ymin"]) * h),
                              int(round(float(row["xmax"]) * w)), int(round(float(row["ymax"]) * h))))
                values.append(NAMES[row["class_text"]])
    return image, boxes, values


def empty_tray(image: np.ndarray, boxes, margin: int = 7) -> np.ndarray:
    """The photo with its dice painted out."""
    mask = np.zeros(image.shape[:2], np.uint8)
    for x0, y0, x1, y1 in boxes:
        mask[max(0, y0 - margin): y1 + margin, max(0, x0 - margin): x1 + margin] = 255
    return cv2.inpaint(image, mask, 5, cv2.INPAINT_TELEA)


def _patch(image: np.ndarray, box, margin: int = 5) -> np.ndarray:
    x0, y0, x1, y1 = box
    return image[y0 - margin: y1 + margin, x0 - margin: x1 + margin].copy()


def four_dice(image: np.ndarray, boxes, values) -> np.ndarray:
    """The photo with a copy of its red die (the 1) pasted on an empty part of the floor."""
    out = image.copy()
    patch = _patch(image, boxes[values.index(1)])
    ph, pw = patch.shape[:2]
    out[400: 400 + ph, 450: 450 + pw] = patch
    return out


def tumbling_frame(empty: np.ndarray, patches, rng: np.random.Generator) -> np.ndarray:
    """The empty tray with each die patch pasted at a random place of the floor, turned and
    blurred along a random motion."""
    out = empty.copy()
    x0, y0, x1, y1 = TRAY
    for patch in patches:
        ph, pw = patch.shape[:2]
        angle = float(rng.uniform(0, 360))
        m = cv2.getRotationMatrix2D((pw / 2, ph / 2), angle, 1.0)
        turned = cv2.warpAffine(patch, m, (pw, ph), borderMode=cv2.BORDER_REPLICATE)
        length = int(rng.integers(7, 17))
        kernel = np.zeros((length, length), np.float32)
        kernel[length // 2, :] = 1.0 / length
        km = cv2.getRotationMatrix2D((length / 2 - 0.5, length / 2 - 0.5), float(rng.uniform(0, 180)), 1.0)
        kernel = cv2.warpAffine(kernel, km, (length, length))
        kernel /= max(kernel.sum(), 1e-6)
        blurred = cv2.filter2D(turned, -1, kernel, borderType=cv2.BORDER_REPLICATE)
        px = int(rng.integers(x0 + 5, x1 - pw - 5))
        py = int(rng.integers(y0 + 5, y1 - ph - 5))
        out[py: py + ph, px: px + pw] = blurred
    return out


@dataclasses.dataclass
class DiceVideo:
    """A written video: its path, frame count and rate, and where each rest period starts.

    Attributes:
        path: the ``.avi`` file.
        frames: frames written.
        fps: frames per second.
        rest_starts: index of the first frame of each rest period (dice at rest).
        values: the true values of the dice at rest, in the reader's order.
    """

    path: Path
    frames: int
    fps: float
    rest_starts: list[int]
    values: tuple[int, ...]


def roll_video(path: str | Path, rolls: int = 1, fps: float = 15.0, empty_s: float = 0.5, tumble_s: float = 0.6,
               rest_s: float = 1.0, four: bool = False, seed: int = 0) -> DiceVideo:
    """Write a video of the empty tray, then ``rolls`` times: dice tumbling for ``tumble_s``,
    then at rest for ``rest_s`` (seconds of video at ``fps``).

    Args:
        path: the ``.avi`` file to write (Motion JPEG).
        four: the dice at rest are four (the photo's three and a copy of its 1).
        seed: seeds the tumbling.

    Raises:
        RuntimeError: OpenCV cannot write Motion JPEG here.
    """
    image, boxes, values = photo_dice()
    empty = empty_tray(image, boxes)
    patches = [_patch(image, b) for b in boxes]
    rest = four_dice(image, boxes, values) if four else image
    rng = np.random.default_rng(seed)
    h, w = image.shape[:2]
    path = Path(path)
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, (w, h))
    if not writer.isOpened():
        raise RuntimeError(f"{path}: OpenCV cannot write Motion JPEG video here")
    n = 0
    starts = []
    try:
        for _ in range(int(round(empty_s * fps))):
            writer.write(empty)
            n += 1
        for _ in range(rolls):
            for _ in range(int(round(tumble_s * fps))):
                writer.write(tumbling_frame(empty, patches, rng))
                n += 1
            starts.append(n)
            for _ in range(int(round(rest_s * fps))):
                writer.write(rest)
                n += 1
    finally:
        writer.release()
    order = sorted(zip(boxes, values), key=lambda bv: (round((bv[0][1] + bv[0][3]) / 2 / 40), (bv[0][0] + bv[0][2]) / 2))
    return DiceVideo(path, n, fps, starts, tuple(v for _, v in order))
