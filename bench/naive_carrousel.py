"""A naive Carrousel reader, written for the bench only: the yardstick of the speed targets.

What a first, straightforward reader does with the same table data: detect the ArUco markers
in the whole frame (OpenCV's default detector settings), fit the homography, convert the
whole frame to CIE Lab (``cv2.cvtColor`` BGR to Lab, 8-bit), and for each of the 7 spaces and
the 12 card discs take the median Lab of the pixels at its board points (the same 1.5 mm grid
as the product's reader), correct it by the board reference patch (its median Lab taken as
white) and give the nearest reference colour, or ``empty`` when it is near white. No
abstention, no colour check, no registration kept between frames: it is not a reader to
trust, only the cost of the obvious way. Not used by the product.
"""

from __future__ import annotations

import cv2
import numpy as np

from companion.vision.carrousel import CarrouselGeometry, load_references
from companion.vision.registration import dictionary

__all__ = ["NaiveCarrouselReader"]


def _disc(radius: float, step: float) -> np.ndarray:
    u = np.arange(-radius, radius + 1e-9, step)
    xx, yy = np.meshgrid(u, u)
    p = np.stack([xx.ravel(), yy.ravel()], axis=1)
    return p[np.hypot(p[:, 0], p[:, 1]) <= radius]


class NaiveCarrouselReader:
    """``read(frame) -> (space labels (7), card disc labels (12))`` or None when fewer than two
    markers are found. ``frame``: ``H x W x 3 uint8`` BGR."""

    def __init__(self) -> None:
        self.geometry = g = CarrouselGeometry.load()
        horses, cards = load_references()
        self.horses, self.cards = horses, cards
        self.detector = cv2.aruco.ArucoDetector(dictionary(g.dictionary), cv2.aruco.DetectorParameters())
        r = g.space_diameter_mm / 2
        (cx, cy), r0, r1 = g.white_reference
        white = _disc(r1, 3.0)
        self.white_pts = white[np.hypot(white[:, 0], white[:, 1]) >= r0] + np.array([cx, cy])
        disc = _disc(r - 5.0, 1.5)
        self.space_pts = [disc + c for c in g.space_centres_mm]
        card_disc = _disc(max(g.cards[0].disc_diameter_mm / 2 - 3.5, 2.0), 1.0)
        self.card_pts = [card_disc + c for slot in g.cards for c in slot.disc_centres_mm]

    def _median_lab(self, lab: np.ndarray, h: np.ndarray, pts_mm: np.ndarray) -> np.ndarray:
        p = cv2.perspectiveTransform(pts_mm.reshape(-1, 1, 2).astype(np.float32), h).reshape(-1, 2)
        p = np.rint(p).astype(int)
        ok = (p[:, 0] >= 0) & (p[:, 0] < lab.shape[1]) & (p[:, 1] >= 0) & (p[:, 1] < lab.shape[0])
        px = lab[p[ok, 1], p[ok, 0]].astype(np.float32)
        # 8-bit Lab to L* 0-100, a* b* signed
        px = np.column_stack([px[:, 0] * (100.0 / 255.0), px[:, 1] - 128.0, px[:, 2] - 128.0])
        return np.median(px, axis=0) if len(px) else np.array([50.0, 0.0, 0.0])

    def read(self, frame: np.ndarray) -> tuple[list[str], list[str]] | None:
        """The naive reading of one frame (see the module notes)."""
        grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        corners, ids, _ = self.detector.detectMarkers(grey)
        if ids is None:
            return None
        board, image = [], []
        for c, i in zip(corners, ids.reshape(-1)):
            if int(i) in self.geometry.markers:
                board.append(self.geometry.markers[int(i)])
                image.append(c.reshape(4, 2))
        if len(board) < 2:
            return None
        h, _ = cv2.findHomography(np.concatenate(board), np.concatenate(image), cv2.RANSAC, 4.0)
        if h is None:
            return None
        lab = cv2.cvtColor(frame, cv2.COLOR_BGR2Lab)
        white = self._median_lab(lab, h, self.white_pts)

        def label(pts: np.ndarray, refs, empty: bool) -> str:
            v = self._median_lab(lab, h, pts)
            v = np.array([v[0] * 100.0 / max(white[0], 1.0), v[1] - white[1], v[2] - white[2]])
            if empty and v[0] > 70 and np.hypot(v[1], v[2]) < 12:
                return "empty"
            return refs.names[int(np.argmin(np.linalg.norm(refs.lab - v, axis=1)))]

        return ([label(p, self.horses, True) for p in self.space_pts],
                [label(p, self.cards, False) for p in self.card_pts])
