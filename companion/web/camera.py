"""The camera on the web page: the live frame with the reader's overlay, the marker placement
check and the colour capture of the set-up page.

Every camera source (``companion/sources/*camera*.py``) keeps ``latest``: None, or
``(t_s, frame H x W x 3 uint8 BGR, reading)`` of the last frame its reader read, set on its
reading thread (the frame as read, no copy). A :class:`CameraView` wraps the table's camera
source for the pages. Nothing here runs on the referee's loop or per frame: a JPEG is encoded
and the overlay drawn only when a page asks (``/api/camera.mjpg`` asks a few times a second
while a camera page is open), and the same frame is encoded once whatever the number of pages.

* :func:`draw_reading` draws a reading with its reader module's own overlay function
  (:func:`companion.vision.carrousel.draw_overlay`, :func:`companion.readers.dice.draw_readings`,
  and ``draw_overlay`` of any other reader module, e.g. Monsieur Carrousel's and Carrossel's).
* :func:`marker_check` compares the ArUco markers seen in a frame with the board geometry:
  which marker is in place, missing, outside the view, swapped with another, at another's
  place, turned, or not one of this board's.
* :meth:`CameraView.hold`, :meth:`CameraView.sample` and :meth:`CameraView.capture_colours`:
  the set-up page holds one frame, the players tap spaces and cards on it and say what stands
  there, and the colours are measured and written as ``carrousel-colours.json`` of the
  calibration folder by :func:`companion.commands.calibrate.write_colours`, the code of
  ``companion calibrate colours``.
* :func:`calibration_files`: each calibration file's state (yours, the shipped default, none,
  or invalid with the loader's one-line reason).

Sources: OpenCV ``cv2.aruco.ArucoDetector`` and ``cv2.findHomography`` (the registration of
:mod:`companion.vision.registration`); DESIGN.md (Vision: registration; Web page: set-up).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import logging
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

__all__ = [
    "JPEG_QUALITY",
    "MAX_WIDTH",
    "CameraView",
    "CaptureError",
    "MarkerCheck",
    "MarkerState",
    "calibration_files",
    "camera_of",
    "draw_marker_check",
    "draw_reading",
    "encode_jpeg",
    "marker_check",
    "reading_json",
]

log = logging.getLogger("companion.web")

#: JPEG quality (0-100) of the frames sent to the pages.
JPEG_QUALITY = 80
#: Frames wider than this (px) are halved (or more) before encoding: a page needs no more.
MAX_WIDTH = 960
#: Frames the set-up page may hold at once for a colour capture (each one frame's memory).
MAX_HELD = 4


class CaptureError(ValueError):
    """A request of the set-up page that cannot be done; the message says why and what to do."""


# ---------------------------------------------------------------------------------- frames
def encode_jpeg(image: np.ndarray, quality: int = JPEG_QUALITY, max_width: int = MAX_WIDTH) -> bytes:
    """An ``H x W x 3 uint8`` BGR image as JPEG bytes, shrunk by a power of two while wider
    than ``max_width`` px (INTER_AREA).

    Raises:
        ValueError: the image cannot be encoded (not a 2-D or 3-channel uint8 array).
    """
    img = image
    while img.shape[1] > max_width:
        img = cv2.resize(img, (img.shape[1] // 2, img.shape[0] // 2), interpolation=cv2.INTER_AREA)
    ok, buf = cv2.imencode(".jpg", img, [int(cv2.IMWRITE_JPEG_QUALITY), int(quality)])
    if not ok:
        raise ValueError(f"cannot encode a frame of shape {image.shape} as JPEG")
    return buf.tobytes()


def draw_reading(frame: np.ndarray, reading: Any, reader: Any = None) -> np.ndarray:
    """The frame with the reader's overlay, drawn by the reader module's own function.

    Args:
        frame: ``H x W x 3 uint8`` BGR (not modified).
        reading: a reading of the frame: a :class:`~companion.vision.carrousel.CarrouselReading`,
            a list of :class:`~companion.readers.dice.DieReading`, or any reading whose module
            has ``draw_overlay(frame, reading, geometry)`` (or ``draw_overlay(frame, reading)``).
        reader: the reader that made it (its ``geometry`` and ``tray`` are passed on).

    Returns:
        A new ``H x W x 3 uint8`` BGR image (the frame itself copied when the reading has no
        overlay function).
    """
    if isinstance(reading, list):  # the dice reader: one DieReading per die found
        from companion.readers.dice import draw_readings

        return draw_readings(frame, reading, getattr(reader, "tray", None))
    module = sys.modules.get(type(reading).__module__)
    draw = getattr(module, "draw_overlay", None)
    if draw is None:
        return frame.copy()
    geometry = getattr(reader, "geometry", None)
    try:
        return draw(frame, reading, geometry) if geometry is not None else draw(frame, reading)
    except TypeError:
        return draw(frame, reading)


def reading_json(reading: Any, reader: Any = None) -> dict[str, Any]:
    """What the camera page lists beside the frame: ``{"status", "regions": [{"name", "label",
    "confidence", "reason"}], "cards": {seat: text}, "dice": [...]}`` (JSON-ready); a reading
    with neither spaces nor dice (Monsieur Carrousel's, Carrossel's) lists its JSON form's fields
    (``reading`` holds it whole)."""
    if reading is None:
        return {"status": "no reading yet", "regions": []}
    if isinstance(reading, list):  # dice
        dice = [{"value": r.value, "box": [round(float(v), 1) for v in r.box], "reason": r.reason} for r in reading]
        return {"status": f"{len(dice)} dice in the tray" if dice else "no die read (the tray moves, or is empty)",
                "regions": [{"name": f"die {i + 1}", "label": str(d["value"]), "reason": d["reason"]}
                            for i, d in enumerate(dice)], "dice": dice}
    out: dict[str, Any] = {"status": str(getattr(reading, "status", "")), "regions": []}
    spaces = getattr(reading, "spaces", None)
    if spaces:
        for k, r in enumerate(spaces):
            out["regions"].append({"name": f"space {k}", "label": r.label,
                                   "confidence": round(float(getattr(r, "confidence", 0.0)), 2),
                                   "reason": getattr(r, "reason", "") or ""})
    cards = getattr(reading, "cards", None)
    if isinstance(cards, Mapping) and cards:
        out["cards"] = {seat: ("-".join(c.triple) if getattr(c, "triple", None) else "unknown"
                               + (f" ({c.reason})" if getattr(c, "reason", "") else "")) for seat, c in cards.items()}
    if not out["regions"] and hasattr(reading, "to_json"):
        # Another reader (Monsieur Carrousel's, Carrossel's): its JSON form, one line a field.
        try:
            try:
                doc = reading.to_json()
            except TypeError:  # Carrossel's names the board's cells
                doc = reading.to_json(list(getattr(getattr(reader, "geometry", None), "cell_names", ())))
            doc = json.loads(json.dumps(doc, default=str))
        except Exception as exc:  # a reading without a JSON form: its status is enough
            log.debug("web: reading without a JSON form: %s", exc)
            doc = {}
        out["reading"] = doc
        for key, value in doc.items():
            if key in ("status", "markers", "residual_px"):
                continue
            if isinstance(value, dict):
                for name, v in value.items():
                    label = v.get("label", json.dumps(v)) if isinstance(v, dict) else v
                    out["regions"].append({"name": f"{key} {name}", "label": str(label)})
            elif isinstance(value, list):
                out["regions"].append({"name": key, "label": " ".join(map(str, value))})
            elif value is not None:
                out["regions"].append({"name": key.replace("_", " "), "label": str(value)})
    return out


def camera_of(rig: Any) -> Any:
    """The table's camera source in a :class:`~companion.assembly.Rig`: ``rig.camera`` when the
    kit named it, else the first of its sources (or the source a wrapper holds: ``source``,
    ``camera``) that keeps ``latest``; None for a table without a camera."""
    named = getattr(rig, "camera", None)
    if named is not None:
        return named
    for s in [*getattr(rig, "sources", []), *getattr(rig, "scheduled", [])]:
        for candidate in (s, getattr(s, "source", None), getattr(s, "camera", None)):
            if candidate is not None and hasattr(candidate, "latest") and hasattr(candidate, "reader"):
                return candidate
    return None


# ---------------------------------------------------------------------------------- markers
#: Marker states of :class:`MarkerState`, worst first on the page.
STATES = ("swapped", "misplaced", "turned", "out_of_place", "foreign", "missing", "outside", "seen", "in_place",
          "moving")


@dataclasses.dataclass(frozen=True)
class MarkerState:
    """One marker of the placement check.

    Attributes:
        id: the marker's ArUco id.
        state: one of :data:`STATES`: ``in_place``; ``missing`` (not seen where it belongs, inside
            the view: covered or not stuck on); ``outside`` (its place is outside the camera's
            view); ``swapped`` (it stands at the place of marker ``other``, which stands at its
            place); ``misplaced`` (at the place of marker ``other``); ``turned`` (at its place,
            turned by ``turned_deg``); ``out_of_place`` (elsewhere); ``foreign`` (not one of this
            board's markers); ``seen`` (the places could not be checked: too few markers agree);
            ``moving`` (one of the board's moving markers, not a fixed one: Monsieur Carrousel's roof,
            Carrossel's turning centre; seen, its place not checked).
        text: one line for people.
        corners_px: ``4 x 2`` pixel corners: where it was seen, else where it belongs (None when
            the frame is not registered).
        other: the marker whose place it took (``swapped``, ``misplaced``), else None.
        offset_mm: distance from its place (board mm) when seen and registered, else None.
    """

    id: int
    state: str
    text: str
    corners_px: list[list[float]] | None = None
    other: int | None = None
    offset_mm: float | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class MarkerCheck:
    """The marker placement check of one frame.

    Attributes:
        registered: two or more markers agree with the board layout (places were checked).
        markers: one :class:`MarkerState` per marker of the layout, then the foreign ones.
        summary: one line (``"4 of 4 markers in place"``, ``"markers 0 and 1 are swapped"``...).
        residual_px: RMS corner residual of the markers in place (px), or None.
    """

    registered: bool
    markers: tuple[MarkerState, ...]
    summary: str
    residual_px: float | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"registered": self.registered, "summary": self.summary, "residual_px": self.residual_px,
                "markers": [m.to_json() for m in self.markers]}


def _where(centre: np.ndarray, layout_centre: np.ndarray) -> str:
    """A marker's place in words from board mm (x right, y up)."""
    dx, dy = centre - layout_centre
    v = "top" if dy > 1 else ("bottom" if dy < -1 else "")
    h = "right" if dx > 1 else ("left" if dx < -1 else "")
    return f"the {v}{'-' if v and h else ''}{h or ('centre' if not v else '')}"


def _fit(board: np.ndarray, image: np.ndarray) -> np.ndarray | None:
    h, _ = cv2.findHomography(board.astype(np.float64), image.astype(np.float64), 0)
    if h is None or not np.all(np.isfinite(h)) or abs(np.linalg.det(h)) < 1e-12:
        return None
    return h


def marker_check(frame: np.ndarray, layout: Mapping[int, np.ndarray], dictionary_name: str = "DICT_4X4_50",
                 lens: tuple[np.ndarray, np.ndarray] | None = None,
                 moving: Mapping[int, str] | None = None) -> MarkerCheck:
    """Which of the board's ArUco markers is seen, missing, swapped or out of place.

    Every pair of the layout's markers seen proposes a homography (board mm -> pixels, from
    their 8 corners); the one that most markers agree with (each corner within a fifth of a
    marker's side, at least 3 px; ties: the smaller residual) is the board's place, refitted on
    all of them. The markers that agree are in place; each other one seen is placed on the board
    through it and named by where it lands (another marker's place: swapped or misplaced; its
    own place with its corners turned: turned; elsewhere: out of place). A marker not seen is
    missing when its place is inside the frame, outside the view otherwise.

    Args:
        frame: ``H x W x 3 uint8`` BGR.
        layout: marker id -> ``4 x 2`` corners in board mm (OpenCV's order TL, TR, BR, BL), as in
            the board geometry file (e.g. ``calibration/carrousel-board.json`` ``markers``).
        dictionary_name: the markers' ArUco dictionary.
        lens: (camera matrix, distortion coefficients) of ``camera.json``, or None.
        moving: the board's moving markers, id -> what carries it (``{9: "the roof"}``, from
            ``roof_marker_id`` of ``monsieur-board.toml``; Carrossel's ``centre_marker_id``): seen,
            such a marker is ``moving``, not ``foreign``; not seen, it is not named (it turns).

    Returns:
        The :class:`MarkerCheck`.

    Raises:
        ValueError: a frame that is not ``H x W x 3 uint8``; an unknown dictionary.
    """
    from companion.vision.frames import check_bgr_frame
    from companion.vision.registration import (
        detect_markers,
        distort,
        project,
        undistort,
    )

    check_bgr_frame(frame)
    hgt, wid = frame.shape[:2]
    found = detect_markers(frame, dictionary_name)
    board = {int(k): np.asarray(v, np.float64).reshape(4, 2) for k, v in layout.items()}
    centre_all = np.mean([c.mean(axis=0) for c in board.values()], axis=0)
    side_mm = float(np.median([np.linalg.norm(c[1] - c[0]) for c in board.values()]))
    seen = {i: np.asarray(c, np.float64) for i, c in found.items()}
    ideal = {i: (undistort(c, *lens) if lens is not None else c) for i, c in seen.items()}
    known = sorted(i for i in seen if i in board)
    side_px = float(np.median([np.linalg.norm(seen[i][1] - seen[i][0]) for i in seen])) if seen else 0.0
    tol_px = max(3.0, 0.2 * side_px)

    def to_image(h: np.ndarray, pts_mm: np.ndarray) -> np.ndarray:
        p = project(h, pts_mm)
        return distort(p, *lens) if lens is not None else p

    def agree(h: np.ndarray, i: int) -> float | None:
        err = np.linalg.norm(project(h, board[i]) - ideal[i], axis=1)
        return float(np.sqrt(np.mean(err ** 2))) if err.max() <= tol_px else None

    best: tuple[int, float, np.ndarray, list[int]] | None = None
    for a, b in itertools.combinations(known, 2):
        h = _fit(np.concatenate([board[a], board[b]]), np.concatenate([ideal[a], ideal[b]]))
        if h is None:
            continue
        inliers = [i for i in known if agree(h, i) is not None]
        if len(inliers) < 2:
            continue
        res = float(np.mean([agree(h, i) for i in inliers]))  # type: ignore[misc]
        if best is None or (len(inliers), -res) > (best[0], -best[1]):
            best = (len(inliers), res, h, inliers)
    h = None
    inliers: list[int] = []
    residual = None
    if best is not None:
        inliers = best[3]
        h = _fit(np.concatenate([board[i] for i in inliers]), np.concatenate([ideal[i] for i in inliers]))
        if h is not None:
            pts = np.concatenate([board[i] for i in inliers])
            img = np.concatenate([ideal[i] for i in inliers])
            residual = round(float(np.sqrt(np.mean(np.sum((project(h, pts) - img) ** 2, axis=1)))), 2)
    states: list[MarkerState] = []
    landed: dict[int, int | None] = {}
    if h is not None:
        inv = np.linalg.inv(h)
        for i in seen:
            if i in inliers:
                continue
            c_mm = project(inv, ideal[i].mean(axis=0).reshape(1, 2))[0]
            near = min(board, key=lambda k: float(np.linalg.norm(board[k].mean(axis=0) - c_mm)))
            landed[i] = near if np.linalg.norm(board[near].mean(axis=0) - c_mm) <= 0.75 * side_mm else None
    for i in sorted(board):
        place = _where(board[i].mean(axis=0), centre_all)
        belongs = f"its place is {place} corner ({board[i].mean(axis=0)[0]:.0f}, {board[i].mean(axis=0)[1]:.0f}) mm"
        if h is None:
            if i in seen:
                states.append(MarkerState(i, "seen", f"marker {i}: seen (its place cannot be checked: fewer than two "
                                                     f"markers agree with the board); {belongs}",
                                          seen[i].round(1).tolist()))
            else:
                states.append(MarkerState(i, "missing", f"marker {i}: not seen; {belongs}"))
            continue
        expected = to_image(h, board[i])
        if i in inliers:
            off = float(np.linalg.norm(project(np.linalg.inv(h), ideal[i]).mean(axis=0) - board[i].mean(axis=0)))
            states.append(MarkerState(i, "in_place", f"marker {i}: in place", seen[i].round(1).tolist(),
                                      offset_mm=round(off, 1)))
            continue
        if i not in seen:
            inside = bool(np.all((expected[:, 0] >= 0) & (expected[:, 0] < wid) & (expected[:, 1] >= 0)
                                 & (expected[:, 1] < hgt)))
            if inside:
                states.append(MarkerState(i, "missing", f"marker {i}: not seen where it belongs ({place}): uncover it, "
                                                        "or stick it on", expected.round(1).tolist()))
            else:
                states.append(MarkerState(i, "outside", f"marker {i}: its place ({place}) is outside the camera's view: "
                                                        "move the camera or the board", expected.round(1).tolist()))
            continue
        at = landed.get(i)
        c_mm = project(np.linalg.inv(h), ideal[i].mean(axis=0).reshape(1, 2))[0]
        off = round(float(np.linalg.norm(c_mm - board[i].mean(axis=0))), 1)
        corners = seen[i].round(1).tolist()
        if at == i:
            got = project(np.linalg.inv(h), ideal[i])
            shifts = [float(np.linalg.norm(np.roll(got, -s, axis=0) - board[i], axis=1).max()) for s in range(4)]
            turn = int(np.argmin(shifts)) * 90
            states.append(MarkerState(i, "turned", f"marker {i}: in its place but turned by {turn}°: stick it upright "
                                                   "as on the printed mat", corners, offset_mm=off))
        elif at is not None and landed.get(at) == i:
            states.append(MarkerState(i, "swapped", f"marker {i}: swapped with marker {at} (it stands at marker {at}'s "
                                                    f"place; {belongs})", corners, other=at, offset_mm=off))
        elif at is not None:
            states.append(MarkerState(i, "misplaced", f"marker {i}: stands at marker {at}'s place; {belongs}",
                                      corners, other=at, offset_mm=off))
        else:
            states.append(MarkerState(i, "out_of_place", f"marker {i}: {off:.0f} mm from its place; {belongs}",
                                      corners, offset_mm=off))
    carried = {int(k): str(v) for k, v in (moving or {}).items() if int(k) not in board}
    for i in sorted(set(seen) & set(carried)):
        states.append(MarkerState(i, "moving", f"marker {i}: {carried[i]}'s marker, seen (it moves with "
                                               f"{carried[i]}; the board is placed by its fixed markers)",
                                  seen[i].round(1).tolist()))
    for i in sorted(set(seen) - set(board) - set(carried)):
        at = landed.get(i)
        where = f" at marker {at}'s place" if at is not None else ""
        states.append(MarkerState(i, "foreign", f"marker {i}: not one of this board's markers ({', '.join(map(str, sorted(board)))})"
                                                f"{where}: print the markers again (companion calibrate markers)",
                                  seen[i].round(1).tolist(), other=at))
    return MarkerCheck(h is not None, tuple(states), _summary(states, len(board), h is not None), residual)


def _summary(states: Sequence[MarkerState], n: int, registered: bool) -> str:
    ok = sum(s.state == "in_place" for s in states)
    if not registered:
        seen = [s.id for s in states if s.state == "seen"]
        return (f"the board is not registered: {len(seen)} of {n} markers seen"
                f"{' (' + ', '.join(map(str, seen)) + ')' if seen else ''} and fewer than two agree with the board; "
                "uncover the markers and check that each one is in its place")
    parts = [f"{ok} of {n} markers in place"]
    swapped = sorted({tuple(sorted((s.id, s.other))) for s in states if s.state == "swapped"})  # type: ignore[arg-type]
    parts += [f"markers {a} and {b} are swapped" for a, b in swapped]
    for state, word in (("misplaced", "stands at another's place"), ("turned", "turned"), ("out_of_place", "out of place"),
                        ("missing", "not seen"), ("outside", "outside the view"), ("foreign", "not this board's")):
        ids = [str(s.id) for s in states if s.state == state]
        if ids:  # "marker 9 not this board's", not a count
            parts.append(f"marker{'s' if len(ids) > 1 else ''} {', '.join(ids)} {word}")
    return "; ".join(parts)


_STATE_BGR = {"in_place": (60, 200, 60), "missing": (0, 165, 255), "outside": (0, 165, 255), "seen": (200, 200, 0),
              "foreign": (40, 40, 230), "swapped": (40, 40, 230), "misplaced": (40, 40, 230),
              "turned": (40, 40, 230), "out_of_place": (40, 40, 230), "moving": (230, 160, 0)}


def draw_marker_check(frame: np.ndarray, check: MarkerCheck) -> np.ndarray:
    """The frame with the placement check drawn: each marker's outline (green in place, orange
    where a missing one belongs, red for a marker in the wrong place) and its id and state, and
    the summary line on top.

    Args:
        frame: ``H x W x 3 uint8`` BGR (not modified).
        check: :func:`marker_check` of that frame.

    Returns:
        A new ``H x W x 3 uint8`` BGR image.
    """
    out = frame.copy()
    font = cv2.FONT_HERSHEY_SIMPLEX
    for m in check.markers:
        if m.corners_px is None:
            continue
        pts = np.rint(np.asarray(m.corners_px)).astype(np.int32)
        colour = _STATE_BGR.get(m.state, (255, 0, 255))
        cv2.polylines(out, [pts], True, colour, 3 if m.state != "in_place" else 2, cv2.LINE_AA)
        x, y = pts.min(axis=0)
        label = f"{m.id} {m.state.replace('_', ' ')}" + (f" {m.other}" if m.other is not None else "")
        (w, th), _ = cv2.getTextSize(label, font, 0.45, 1)
        y = max(int(y) - 4, th + 22)
        cv2.rectangle(out, (int(x) - 2, y - th - 3), (int(x) + w + 2, y + 4), (0, 0, 0), -1)
        cv2.putText(out, label, (int(x), y), font, 0.45, colour, 1, cv2.LINE_AA)
    cv2.rectangle(out, (0, 0), (out.shape[1], 18), (0, 0, 0), -1)
    cv2.putText(out, check.summary[:110], (4, 13), font, 0.4, (80, 220, 80) if check.registered else (60, 60, 255),
                1, cv2.LINE_AA)
    return out


# ---------------------------------------------------------------------------------- the view
@dataclasses.dataclass
class _Held:
    id: int
    t: float
    frame: np.ndarray
    reading: Any
    status: str = ""
    registration: Any = None  # registered once, on the first use
    registered: bool = False


class CameraView:
    """The table's camera as the pages see it (``hub.camera``): the latest frame with the
    reader's overlay as JPEG, the marker check, and the set-up page's colour capture.

    Args:
        source: a camera source with ``latest`` (``(t_s, frame, reading)`` or None) and
            ``reader`` (its ``geometry``, ``registrar``).
        config: the :class:`~companion.config.Config` (the calibration folder and
            ``[camera] geometry``); None = the default folder.

    Calling the view (``view()``) returns ``(jpeg bytes, info dict)`` of the latest frame, or
    None before the first frame; ``info`` is :func:`reading_json` plus ``t`` (session s) and
    ``size`` (``[w, h]`` px). Thread-safe; the same frame is encoded once.
    """

    def __init__(self, source: Any, config: Any = None):
        self.source = source
        self.config = config
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[Any, Any]] = {}
        self._held: OrderedDict[int, _Held] = OrderedDict()
        self._next_id = 1
        self.encoded = 0  # JPEGs encoded so far (tests and the bench read it)

    # -- the live frame -----------------------------------------------------------------------
    @property
    def reader(self) -> Any:
        """The source's reader."""
        return getattr(self.source, "reader", None)

    def latest(self) -> tuple[float, np.ndarray, Any] | None:
        """The source's ``latest``: ``(t_s, frame, reading)`` or None."""
        return getattr(self.source, "latest", None)

    def _cached(self, key: str, latest: tuple[float, np.ndarray, Any], make: Callable[[], Any]) -> Any:
        """``make()`` once per ``latest`` tuple (kept, so that a new tuple is never mistaken for it)."""
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None and hit[0] is latest:
                return hit[1]
        value = make()
        with self._lock:
            self._cache[key] = (latest, value)
        return value

    def __call__(self) -> tuple[bytes, dict[str, Any]] | None:
        latest = self.latest()
        if latest is None:
            return None

        def make() -> tuple[bytes, dict[str, Any]]:
            t, frame, reading = latest
            jpeg = encode_jpeg(draw_reading(frame, reading, self.reader))
            self.encoded += 1
            info = {"t": round(float(t), 3), "size": [int(frame.shape[1]), int(frame.shape[0])], **reading_json(reading, self.reader)}
            return jpeg, info

        return self._cached("overlay", latest, make)

    # -- markers ------------------------------------------------------------------------------
    def marker_layout(self) -> tuple[dict[int, np.ndarray], str, Any, dict[int, str]] | None:
        """``(layout, dictionary name, lens, moving markers)`` of the reader's board (the
        arguments of :func:`marker_check` after the frame), or None for a camera without markers
        (the dice tray). The moving markers: the geometry's ``roof_marker_id`` (Monsieur
        Carrousel) and ``centre_marker_id`` (Carrossel)."""
        reader = self.reader
        geometry = getattr(reader, "geometry", None)
        registrar = getattr(reader, "registrar", None)
        layout = getattr(geometry, "markers", None) or getattr(registrar, "layout", None)
        if not layout:
            return None
        dictionary = getattr(geometry, "dictionary", None) or getattr(registrar, "dictionary_name", "DICT_4X4_50")
        moving = {int(i): what for i, what in ((getattr(geometry, "roof_marker_id", None), "the roof"),
                                                 (getattr(geometry, "centre_marker_id", None), "the turning board's centre"))
                  if i is not None}
        return ({int(k): np.asarray(v, np.float64) for k, v in layout.items()}, dictionary,
                getattr(registrar, "lens", None), moving)

    def markers(self) -> tuple[MarkerCheck, tuple[float, np.ndarray, Any]] | None:
        """The :func:`marker_check` of the latest frame and that frame, or None before the
        first frame.

        Raises:
            CaptureError: this camera's board has no markers (the dice tray).
        """
        latest = self.latest()
        if latest is None:
            return None
        layout = self.marker_layout()
        if layout is None:
            raise CaptureError("this table's camera reads without markers (the dice tray): there is no marker to check")
        return self._cached("markers", latest, lambda: marker_check(latest[1], *layout)), latest

    def markers_jpeg(self) -> tuple[bytes, dict[str, Any]] | None:
        """``(JPEG of the latest frame with the marker check drawn, the check as JSON)``, or None.

        Raises:
            CaptureError: as :meth:`markers`.
        """
        got = self.markers()
        if got is None:
            return None
        check, latest = got

        def make() -> tuple[bytes, dict[str, Any]]:
            self.encoded += 1
            return encode_jpeg(draw_marker_check(latest[1], check)), {"t": round(float(latest[0]), 3), **check.to_json()}

        return self._cached("markers_jpeg", latest, make)

    # -- colour capture -----------------------------------------------------------------------
    def _carrousel(self) -> Any:
        from companion.vision.carrousel import CarrouselReader

        reader = self.reader
        if not isinstance(reader, CarrouselReader):
            raise CaptureError("colour capture is for the Carrousel table's camera (its colours file, "
                               "carrousel-colours.json); this table's reader has no colours to capture")
        return reader

    def hold(self) -> dict[str, Any]:
        """Hold a copy of the latest frame for a colour capture (the table may change meanwhile).

        Returns:
            ``{"id", "t", "size": [w, h], "registered", "status"}``; the oldest held frame is let
            go beyond :data:`MAX_HELD`.

        Raises:
            CaptureError: not the Carrousel camera, or no frame yet.
        """
        self._carrousel()
        latest = self.latest()
        if latest is None:
            raise CaptureError("no camera frame yet: wait for the camera page to show the table, then try again")
        t, frame, reading = latest
        with self._lock:
            held = _Held(self._next_id, float(t), frame.copy(), reading)
            self._next_id += 1
            self._held[held.id] = held
            while len(self._held) > MAX_HELD:
                self._held.popitem(last=False)
        reg = self._register(held)
        return {"id": held.id, "t": round(held.t, 3), "size": [int(frame.shape[1]), int(frame.shape[0])],
                "registered": reg is not None, "status": "" if reg is not None else self._why(held)}

    def _get(self, held_id: Any) -> _Held:
        try:
            key = int(held_id)
        except (TypeError, ValueError, OverflowError):  # OverflowError: an id of 1e999 (infinity)
            raise CaptureError(f"frame {held_id!r}: expected the number the page got when it held a frame") from None
        with self._lock:
            held = self._held.get(key)
        if held is None:
            raise CaptureError(f"frame {key} is no longer held (at most {MAX_HELD} are kept): hold the frame again")
        return held

    def held_jpeg(self, held_id: Any) -> bytes:
        """The held frame as JPEG (no overlay: the colours as the camera saw them).

        Raises:
            CaptureError: no such held frame.
        """
        return encode_jpeg(self._get(held_id).frame)

    def _register(self, held: _Held) -> Any:
        """The held frame's registration (detected once, with a registrar of its own: the
        reading thread's is never touched), or None with ``held.status`` saying why."""
        from companion.vision.registration import Registrar

        if held.registered:
            return held.registration
        reader = self._carrousel()
        g = reader.geometry
        registrar = Registrar(g.markers, g.dictionary, lens=getattr(reader.registrar, "lens", None))
        reg = registrar.register(held.frame)
        held.status, held.registration, held.registered = registrar.status, reg, True
        return reg

    @staticmethod
    def _why(held: _Held) -> str:
        status = held.status or "board not visible"
        return (f"this frame is not registered ({status}): nothing can be measured on it; uncover the markers "
                "(see the marker check) and hold a new frame")

    def sample(self, held_id: Any, x: float, y: float) -> dict[str, Any]:
        """The region at a tap on a held frame and its CIE Lab, measured as the colours file is.

        Args:
            held_id: the number :meth:`hold` gave.
            x, y: the tap as fractions (0-1) of the frame's width and height.

        Returns:
            ``{"kind": "space", "index": k, "name", "lab": [L, a, b] | None, "reader_says": label}``
            or ``{"kind": "card", "seat", "name", "discs": [[L, a, b] | None] x 3, "reader_says":
            [3 colours] | None}``; ``lab`` None for a space whose pixels are the plain board (empty).

        Raises:
            CaptureError: a tap outside every space and card, a frame not registered, no such
                held frame, or x, y not fractions.
        """
        from companion.vision.carrousel import reference_colours_from

        held = self._get(held_id)
        try:
            fx, fy = float(x), float(y)
        except (TypeError, ValueError, OverflowError):  # OverflowError: an integer of 400 digits
            raise CaptureError(f"tap ({x!r}, {y!r}): expected fractions of the frame's width and height") from None
        if not (0.0 <= fx <= 1.0 and 0.0 <= fy <= 1.0):
            raise CaptureError(f"tap ({fx}, {fy}): expected fractions from 0 to 1 of the frame's width and height")
        reader = self._carrousel()
        reg = self._register(held)
        if reg is None:
            raise CaptureError(self._why(held))
        h, w = held.frame.shape[:2]
        p = reg.to_board(np.array([[fx * (w - 1), fy * (h - 1)]]))[0]
        g = reader.geometry
        d = np.linalg.norm(g.space_centres_mm - p, axis=1)
        k = int(np.argmin(d))
        reading = held.reading
        if d[k] <= g.space_diameter_mm / 2 + 2.0:
            truth = {"spaces": ["tapped" if i == k else "unknown" for i in range(7)], "cards": {}}
            refs = reference_colours_from([held.frame], [truth], reader)
            lab = refs["horses"].get("tapped")
            says = reading.spaces[k].label if getattr(reading, "spaces", None) else None
            return {"kind": "space", "index": k, "name": f"space {k}", "lab": lab, "reader_says": says}
        for slot in g.cards:
            dd = np.linalg.norm(np.asarray(slot.disc_centres_mm) - p, axis=1)
            if dd.min() <= slot.disc_diameter_mm:
                truth = {"spaces": ["unknown"] * 7, "cards": {slot.seat: ["disc0", "disc1", "disc2"]}}
                refs = reference_colours_from([held.frame], [truth], reader)
                card = getattr(reading, "cards", {}).get(slot.seat) if reading is not None else None
                return {"kind": "card", "seat": slot.seat, "name": f"{slot.seat} card",
                        "discs": [refs["cards"].get(f"disc{i}") for i in range(3)],
                        "reader_says": list(card.triple) if card is not None and card.triple else None}
        raise CaptureError(f"the tap at ({p[0]:.0f}, {p[1]:.0f}) mm is on no space and no card: tap inside a "
                           "space's circle or on a card's disc")

    def capture_colours(self, views: Any) -> dict[str, Any]:
        """Measure the colours said on held frames and write ``carrousel-colours.json`` into the
        calibration folder, through :func:`companion.commands.calibrate.write_colours` (the code
        of ``companion calibrate colours``, each held frame one of its photos).

        Args:
            views: one or more ``{"id": held frame, "spaces": [7 labels: a horse colour,
                "empty", or "unknown" (not said, skipped)], "cards": {seat: [3 colours]}}``.

        Returns:
            ``{"path": the file written, "lines": [each colour measured, each warning]}``.

        Raises:
            CaptureError: a frame not registered or no longer held, spaces or cards malformed,
                colours that could not all be read, a folder that cannot be written (each in
                words, naming what is missing; nothing is written then).
        """
        from companion.calibration_dir import (
            CalibrationDirError,
            explicit_or_calibration,
            writable_path,
        )
        from companion.commands.calibrate import write_colours
        from companion.games.carrousel import COLOURS
        from companion.vision.carrousel import SEATS

        self._carrousel()
        if not isinstance(views, list) or not views or not all(isinstance(v, dict) for v in views):
            raise CaptureError(f"views: expected a list of {{\"id\", \"spaces\", \"cards\"}}, got {views!r}")
        labels = set(COLOURS) | {"empty", "unknown"}
        frames, truths, sources = [], [], []
        for n, view in enumerate(views, 1):
            where = f"frame {n}" if len(views) > 1 else "the frame"
            held = self._get(view.get("id"))
            spaces, cards = view.get("spaces"), view.get("cards", {})
            if not isinstance(spaces, list) or len(spaces) != 7 or not all(isinstance(x, str) and x in labels for x in spaces):
                raise CaptureError(f"{where}: spaces: expected 7 labels among {', '.join(sorted(labels))}, got {spaces!r}")
            if not isinstance(cards, dict):
                raise CaptureError(f"{where}: cards: expected {{seat: [3 colours]}}, got {cards!r}")
            for seat, triple in cards.items():
                if (seat not in SEATS or not isinstance(triple, list) or len(triple) != 3
                        or not all(isinstance(c, str) and c in COLOURS for c in triple)):
                    raise CaptureError(f"{where}: card {seat!r}: expected a seat among {', '.join(SEATS)} and 3 colours "
                                       f"among {', '.join(COLOURS)}, got {triple!r}")
            if self._register(held) is None:
                raise CaptureError(f"{where}: " + self._why(held) + "; no colours file written")
            frames.append(held.frame)
            truths.append({"spaces": list(spaces), "cards": dict(cards)})
            sources.append(f"t = {held.t:.1f} s")
        cam = self.config["camera"] if self.config is not None else {"geometry": ""}
        lines: list[str] = []
        try:
            out = writable_path("carrousel-colours.json", self.config)
            path = write_colours(frames, truths, explicit_or_calibration(cam["geometry"], "carrousel-board.json",
                                                                         self.config),
                                 out, [f"the web page's set-up (frames at {', '.join(sources)})"], say=lines.append)
        except CalibrationDirError as exc:
            raise CaptureError(str(exc)) from None
        except ValueError as exc:
            raise CaptureError(str(exc)) from None
        except OSError as exc:
            raise CaptureError(f"carrousel-colours.json not written: {exc.strerror or exc}") from None
        log.info("web: colours written to %s", path)
        return {"path": str(path), "lines": lines}


# ---------------------------------------------------------------------------------- calibration
#: Calibration files the set-up page lists: name -> (what it is, how to make it).
FILES = {
    "carrousel-board.json": ("camera geometry: the Carrousel board", "companion calibrate geometry PHOTO"),
    "carrousel-colours.json": ("camera colours: the Carrousel horses and cards", "capture below, or companion calibrate colours PHOTO --spaces ..."),
    "camera.json": ("camera intrinsics: the lens", "companion calibrate intrinsics PHOTOS"),
    "encoder.toml": ("encoder calibration: counts per turn", "companion calibrate encoder"),
    "dice-tray.toml": ("dice tray: Carnival's dice camera", "companion calibrate tray IMAGE --corners \"X,Y;X,Y;X,Y;X,Y\" --size-mm AxB"),
    "monsieur_carrousel.toml": ("Monsieur Carrousel seat layouts", "copy the shipped file into the folder and edit it"),
    "monsieur-board.toml": ("Monsieur Carrousel board geometry", "copy the shipped file into the folder and edit it"),
    "carrossel.toml": ("Carrossel game data", "copy the shipped file into the folder and edit it"),
    "carrossel-board.toml": ("Carrossel board geometry", "copy the shipped file into the folder and edit it"),
    "carrossel-letters.json": ("Carrossel letters", "copy the shipped file into the folder and edit it"),
}
_DOCTOR_PARTS = {"camera geometry": "carrousel-board.json", "camera colours": "carrousel-colours.json",
                 "camera intrinsics": "camera.json", "encoder calibration": "encoder.toml"}


def _parse(path: Path) -> str:
    """'' when the file parses as its format (TOML / JSON), else the one-line reason."""
    import tomllib

    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".toml":
            tomllib.loads(text)
        elif path.suffix == ".json":
            json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # TOMLDecodeError, JSONDecodeError are ValueErrors
        return f"{path}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
    return ""


def calibration_files(config: Any) -> dict[str, Any]:
    """Each calibration file's state, for the set-up page.

    The four files ``companion doctor`` checks are parsed by their loaders
    (:func:`companion.commands.doctor.check_calibration`); the others are parsed as TOML or JSON.

    Args:
        config: the :class:`~companion.config.Config`, or None (the default folder).

    Returns:
        ``{"folder": the calibration folder, "files": [{"name", "what", "state", "path", "ok",
        "detail", "fix"}]}``, ``state`` one of ``"yours"`` (in the calibration folder),
        ``"configured"`` (a file named in the configuration), ``"shipped default"``, ``"none"``
        (not made yet; the reader does without or uses nominal values), ``"invalid"`` (``detail``
        is the one-line reason).
    """
    from companion.calibration_dir import SHIPPED_DIR, calibration_path, user_dir

    folder = user_dir(config)
    doctor: dict[str, Any] = {}
    if config is not None:
        from companion.commands.doctor import check_calibration

        for c in check_calibration(config):
            name = _DOCTOR_PARTS.get(c.part)
            if name:
                doctor[name] = c
    files = []
    for name, (what, fix) in FILES.items():
        path = calibration_path(name, config)
        configured = None
        if config is not None:
            key = {"carrousel-board.json": "geometry", "carrousel-colours.json": "colours",
                   "camera.json": "intrinsics"}.get(name)
            if key and config["camera"][key]:
                configured = Path(config["camera"][key]).expanduser()
            elif name == "encoder.toml" and config["encoder"]["calibration"]:
                configured = Path(config["encoder"]["calibration"]).expanduser()
        if configured is not None:
            path, state = configured, "configured"
        elif path.is_file() and SHIPPED_DIR in path.resolve().parents:
            state = "shipped default"
        elif path.is_file():
            state = "yours"
        else:
            state = "none"
        check = doctor.get(name)
        if check is not None and not check.ok:
            detail, ok = check.detail, False
        elif state == "none" and configured is None:
            detail, ok = f"not made yet ({folder / name})", True
        else:
            problem = _parse(path) if path.is_file() else f"{path}: no such file"
            ok = not problem
            detail = problem or (check.detail if check is not None else str(path))
        files.append({"name": name, "what": what, "state": "invalid" if not ok else state, "path": str(path),
                      "ok": ok, "detail": detail, "fix": "" if ok and state != "none" else fix})
    return {"folder": str(folder), "files": files}
