"""A video of a Carnival dice tray for a scripted game, composed from real photos.

Every die shown is a real die cut out of a committed, labelled photo of tests/data/dice/
(nell-byler/dice_detection, BSD-3-Clause; see tests/data/dice/README.md; none of them was used
to train the face classifier). The tray is the grey tray of IMG_20191208_112847.jpg with its
dice painted out (:func:`tests.dice_video.empty_tray`), 640 x 640 px, seen from above.

How a die is cut out: inside its labelled box (grown by a few pixels), the pixels far from the
photo's own floor colour (CIE Lab distance from the median of a ring around the box) are the
die; that mask, closed and slightly grown, then feathered, pastes the die onto the grey floor
(alpha blend). The die keeps its real size in pixels: the photos were taken from about the same
height (dice 25-42 px across in a 640 px frame), and the reader's ``die_px`` default covers them.

Frames (Motion JPEG in an ``.avi`` through OpenCV's ``VideoWriter``, so the reader sees JPEG
frames as from a camera):

* the empty tray, between turns;
* dice tumbling: each die of the coming roll pasted at a random place, turned and blurred
  along a random motion, different in every frame;
* dice at rest: the roll's dice lying in a row across the floor, left to right in the order of
  the roll (the reader reads rows from the top, left to right).
"""

from __future__ import annotations

import csv
import dataclasses
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

from tests.dice_video import NAMES, PHOTO, TRAY, empty_tray, photo_dice

DATA = Path(__file__).parent / "data" / "dice"


@dataclasses.dataclass(frozen=True)
class DieCut:
    """One real die cut out of a photo.

    Attributes:
        value: its face value, 1-6 (the photo's label).
        image: ``h x w x 3 uint8`` BGR pixels around the die.
        alpha: ``h x w float32`` 0-1: how much of each pixel is die (feathered edge).
        source: ``"photo.jpg#k"``: the photo and the label's row among its dice.
    """

    value: int
    image: np.ndarray
    alpha: np.ndarray
    source: str


def _labels() -> list[tuple[str, int, tuple[int, int, int, int]]]:
    rows = []
    with open(DATA / "labels.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            w, h = float(row["width"]), float(row["height"])
            box = (int(float(row["xmin"]) * w), int(float(row["ymin"]) * h),
                   round(float(row["xmax"]) * w), round(float(row["ymax"]) * h))
            rows.append((row["filename"], NAMES[row["class_text"]], box))
    return rows


def cut_die(image: np.ndarray, box: Sequence[int], value: int, source: str, margin: int = 4,
            ring: int = 10, level: float = 30.0) -> DieCut:
    """Cut the die in ``box`` (x0, y0, x1, y1 px) out of ``image`` (BGR uint8).

    The die is what differs from the floor around it by more than ``level`` (Lab distance,
    OpenCV 8-bit units) within the box grown by ``margin`` px; the floor's colour is the median
    of a ``ring`` px wide band around that. Raises ValueError when the box lies too near the
    photo's edge for the ring.
    """
    x0, y0, x1, y1 = (int(v) for v in box)
    h, w = image.shape[:2]
    if x0 - margin - ring < 0 or y0 - margin - ring < 0 or x1 + margin + ring > w or y1 + margin + ring > h:
        raise ValueError(f"{source}: box {box} too near the photo's edge")
    outer = image[y0 - margin - ring: y1 + margin + ring, x0 - margin - ring: x1 + margin + ring]
    lab = cv2.cvtColor(outer, cv2.COLOR_BGR2Lab).astype(np.float32)
    band = np.ones(lab.shape[:2], bool)
    band[ring:-ring, ring:-ring] = False
    floor = np.median(lab[band], axis=0)
    inner = lab[ring:-ring, ring:-ring]
    dist = np.sqrt(((inner - floor) ** 2).sum(axis=2))
    mask = (dist > level).astype(np.uint8) * 255
    # The die's body is one blob: close its pips and glints, keep the largest part, fill it.
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
    n, lbl, stats, _ = cv2.connectedComponentsWithStats(mask)
    if n < 2:
        raise ValueError(f"{source}: no die found in box {box}")
    big = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    mask = (lbl == big).astype(np.uint8) * 255
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    mask = np.zeros_like(mask)
    cv2.drawContours(mask, [cv2.convexHull(c) for c in contours], -1, 255, cv2.FILLED)
    mask = cv2.dilate(mask, np.ones((3, 3), np.uint8))
    alpha = cv2.GaussianBlur(mask.astype(np.float32) / 255.0, (5, 5), 0)
    pixels = image[y0 - margin: y1 + margin, x0 - margin: x1 + margin].copy()
    return DieCut(value, pixels, alpha, source)


def die_cuts() -> dict[int, list[DieCut]]:
    """Face value -> the real dice of that value cut out of the committed photos (at least one
    for each of 1-6)."""
    out: dict[int, list[DieCut]] = {v: [] for v in range(1, 7)}
    photos: dict[str, np.ndarray] = {}
    seen: dict[str, int] = {}
    for name, value, box in _labels():
        if name not in photos:
            img = cv2.imread(str(DATA / name), cv2.IMREAD_COLOR)
            if img is None:
                raise FileNotFoundError(DATA / name)
            photos[name] = img
        k = seen.get(name, 0)
        seen[name] = k + 1
        try:
            out[value].append(cut_die(photos[name], box, value, f"{name}#{k}"))
        except ValueError:
            continue
    missing = [v for v, cuts in out.items() if not cuts]
    if missing:
        raise ValueError(f"{DATA / 'labels.csv'}: no die cut for the values {missing}")
    return out


def paste(frame: np.ndarray, cut: DieCut, centre: tuple[float, float], angle: float = 0.0,
          blur_px: int = 0, blur_deg: float = 0.0) -> None:
    """Paste ``cut`` into ``frame`` (in place) centred at ``centre`` (x, y px), turned by
    ``angle`` degrees, optionally blurred along a motion of ``blur_px`` px at ``blur_deg``."""
    img, alpha = cut.image.astype(np.float32), cut.alpha
    if angle:
        h, w = alpha.shape
        m = cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0)
        img = cv2.warpAffine(img, m, (w, h), borderMode=cv2.BORDER_REPLICATE)
        alpha = cv2.warpAffine(alpha, m, (w, h), borderValue=0.0)
    if blur_px > 1:
        kernel = np.zeros((blur_px, blur_px), np.float32)
        kernel[blur_px // 2, :] = 1.0
        km = cv2.getRotationMatrix2D((blur_px / 2 - 0.5, blur_px / 2 - 0.5), blur_deg, 1.0)
        kernel = cv2.warpAffine(kernel, km, (blur_px, blur_px))
        kernel /= max(float(kernel.sum()), 1e-6)
        img = cv2.filter2D(img, -1, kernel, borderType=cv2.BORDER_REPLICATE)
        alpha = cv2.filter2D(alpha, -1, kernel, borderType=cv2.BORDER_CONSTANT)
    h, w = alpha.shape
    x0, y0 = round(float(centre[0]) - w / 2), round(float(centre[1]) - h / 2)
    region = frame[y0: y0 + h, x0: x0 + w].astype(np.float32)
    a = alpha[..., None]
    frame[y0: y0 + h, x0: x0 + w] = np.clip(region * (1 - a) + img * a, 0, 255).astype(np.uint8)


def background() -> np.ndarray:
    """The empty grey tray: IMG_20191208_112847.jpg with its dice painted out, 640 x 640 x 3."""
    image, boxes, _ = photo_dice()
    return empty_tray(image, boxes)


#: Where the dice of a roll come to rest: three places in a row across the floor (x, y px).
REST_PLACES: tuple[tuple[float, float], ...] = ((210.0, 320.0), (320.0, 320.0), (430.0, 320.0))


def rest_frame(empty: np.ndarray, cuts: Sequence[DieCut], places: Sequence[tuple[float, float]] = REST_PLACES,
               angles: Sequence[float] | None = None) -> np.ndarray:
    """The tray with ``cuts`` at rest at ``places`` (turned by ``angles`` degrees)."""
    out = empty.copy()
    for i, (cut, place) in enumerate(zip(cuts, places)):
        paste(out, cut, place, angle=angles[i] if angles is not None else 0.0)
    return out


def tumbling_frame(empty: np.ndarray, cuts: Sequence[DieCut], rng: np.random.Generator) -> np.ndarray:
    """The tray with ``cuts`` at random places, turned and motion-blurred (dice tumbling)."""
    out = empty.copy()
    x0, y0, x1, y1 = TRAY
    for cut in cuts:
        h, w = cut.alpha.shape
        centre = (float(rng.uniform(x0 + w, x1 - w)), float(rng.uniform(y0 + h, y1 - h)))
        paste(out, cut, centre, angle=float(rng.uniform(0, 360)), blur_px=int(rng.integers(7, 17)),
              blur_deg=float(rng.uniform(0, 180)))
    return out


#: The table's dice: for each face value, the real dice (``photo#k``: the k-th label of the photo)
#: shown with that face up, in the order a roll's first, second, third die of that value uses.
#: Each was checked to read right on the grey tray (tests/test_real_table_carnival.py reads
#: every rest frame of its video before the game); the dice the reader cannot read on this tray
#: (the speckled gold 3 of IMG_20191208_112942.jpg, the small 6 of IMG_20191208_112710.jpg)
#: are not among them.
TABLE_DICE: dict[int, tuple[str, ...]] = {
    1: ("IMG_20191208_112847.jpg#1", "IMG_20191209_095604.jpg#0", "IMG_20191208_112942.jpg#7"),
    2: ("IMG_20191209_095604.jpg#1", "IMG_20191208_112942.jpg#6", "IMG_20191208_112942.jpg#5"),
    3: ("IMG_20191208_112847.jpg#0", "IMG_20191209_095604.jpg#2", "IMG_20191208_112710.jpg#2"),
    4: ("IMG_20191209_095604.jpg#3",),
    5: ("IMG_20191208_112847.jpg#2", "IMG_20191208_112710.jpg#1", "IMG_20191208_112942.jpg#2"),
    6: ("IMG_20191209_095604.jpg#4", "IMG_20191208_112942.jpg#0", "IMG_20191208_112942.jpg#1"),
}


def roll_cuts(values: Sequence[int], cuts: dict[int, list[DieCut]] | None = None) -> list[DieCut]:
    """The real dice showing ``values`` (each 1-6), from :data:`TABLE_DICE`: a value that comes
    twice in a roll is shown by two different dice when the photos hold two.

    Raises:
        ValueError: a value outside 1-6, or a name of :data:`TABLE_DICE` not in labels.csv.
    """
    cuts = die_cuts() if cuts is None else cuts
    by_source = {c.source: c for cs in cuts.values() for c in cs}
    out, used = [], {}
    for v in values:
        if v not in TABLE_DICE:
            raise ValueError(f"die value {v!r}: expected 1-6")
        names = TABLE_DICE[v]
        k = used.get(v, 0)
        used[v] = k + 1
        name = names[k % len(names)]
        if name not in by_source:
            raise ValueError(f"{DATA / 'labels.csv'}: no die {name} (TABLE_DICE)")
        out.append(by_source[name])
    return out


@dataclasses.dataclass
class GameVideo:
    """A written video of a game's rolls.

    Attributes:
        path: the ``.avi`` file (Motion JPEG).
        fps: frames per second it was written at (the service reads it at its own
            ``[camera] frame_period_s``; frame counts are what matter).
        frames: frames written.
        rests: ``(first frame, frame count)`` of each roll's dice at rest, in roll order.
        rest_images: one (uncompressed) rest frame per roll, as pasted.
    """

    path: Path
    fps: float
    frames: int
    rests: list[tuple[int, int]]
    rest_images: list[np.ndarray]


def game_video(path: str | Path, rolls: Sequence[Sequence[int]], fps: float = 10.0, lead_s: float = 2.0,
               tumble_s: float = 0.5, rest_s: float = 1.1, gap_s: float = 1.3, tail_s: float = 8.0,
               seed: int = 0) -> GameVideo:
    """Write the video of a game's rolls: the empty tray for ``lead_s``, then for each roll the
    dice tumbling for ``tumble_s``, at rest for ``rest_s``, and the empty tray again for
    ``gap_s`` (the dice taken back); the last roll is followed by ``tail_s`` of empty tray.
    Durations are seconds of video at ``fps`` frames per second.

    Args:
        path: the ``.avi`` file to write.
        rolls: the three values of each roll, left to right as they come to rest.
        seed: seeds the tumbling, the turns of the dice at rest and their places (a few px).

    Raises:
        RuntimeError: OpenCV cannot write Motion JPEG here.
        ValueError: a die value outside 1-6.
    """
    rng = np.random.default_rng(seed)
    cuts = die_cuts()
    empty = background()
    h, w = empty.shape[:2]
    path = Path(path)
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, (w, h))
    if not writer.isOpened():
        raise RuntimeError(f"{path}: OpenCV cannot write Motion JPEG video here")
    n = 0
    rests: list[tuple[int, int]] = []
    images: list[np.ndarray] = []

    def write(image: np.ndarray, seconds: float) -> int:
        nonlocal n
        count = max(1, round(seconds * fps))
        for _ in range(count):
            writer.write(image)
            n += 1
        return count

    try:
        write(empty, lead_s)
        for values in rolls:
            dice = roll_cuts(values, cuts)
            for _ in range(max(1, round(tumble_s * fps))):
                writer.write(tumbling_frame(empty, dice, rng))
                n += 1
            places = [(x + float(rng.uniform(-8, 8)), y + float(rng.uniform(-4, 4))) for x, y in REST_PLACES]
            rest = rest_frame(empty, dice, places, [float(a) for a in rng.uniform(-30, 30, len(dice))])
            start = n
            rests.append((start, write(rest, rest_s)))
            images.append(rest)
            write(empty, gap_s)
        write(empty, tail_s)
    finally:
        writer.release()
    return GameVideo(path, fps, n, rests, images)


__all__ = [
    "PHOTO",
    "REST_PLACES",
    "TABLE_DICE",
    "TRAY",
    "DieCut",
    "GameVideo",
    "background",
    "cut_die",
    "die_cuts",
    "game_video",
    "paste",
    "rest_frame",
    "roll_cuts",
    "tumbling_frame",
]
