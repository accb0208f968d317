"""Carnival at an emulated real table, end to end: `companion run --game carnival --table
hardware` with the dice camera reading a video of a real tray (real dice cut out of the committed
photos, tests/carnival_tray.py), the players' LEDs on gpiozero's mock pins, and everything no
sensor sees (the deal, assignments, actions, builds, the end of each turn) entered on the
service's socket. The game is a fixed script: its rolls come only from the video, the rest only
from the socket; nothing of companion/sim runs."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.events import InvalidObservation
from companion.readers.dice import DiceReader
from tests.carnival_tray import TRAY, game_video
from tests.real_table import CallTap, Companion, write_config

PLAYERS = ("Ana", "Ben")

#: What the players do, in order: a whole game of two players to its winner (derived once from
#: the seeded simulated game ``carnival_game(132, ("Ana", "Ben"), unreadable_rate=0.0)``, which
#: is short: 7 rolls, 60 observations; fixed here so that no simulated player takes part).
#: Each ``roll`` is what the dice show in the tray, left to right; the rest are entries.
SCRIPT: list[dict] = [
    {"type": "game_start", "players": ["Ana", "Ben"], "discard": ["swings:banners", "swings:banners"]},
    {"type": "roll", "player": "Ana", "dice": [4, 1, 1]},
    {"type": "assign", "player": "Ana", "dice": [1, 1]},
    {"type": "declare", "player": "Ana", "die": 1},
    {"type": "action", "player": "Ana"},
    {"type": "declare", "player": "Ana", "die": 1},
    {"type": "action", "player": "Ana"},
    {"type": "build", "player": "Ana", "ride": "bumper_cars", "cards": ["bumper_cars:banners", "bumper_cars:lights", "bumper_cars:seats", "wild"]},
    {"type": "build", "player": "Ana", "ride": "ferris_wheel", "cards": ["ferris_wheel:banners", "ferris_wheel:seats"]},
    {"type": "build", "player": "Ana", "ride": "swings", "cards": ["swings:lights", "swings:seats"]},
    {"type": "end_turn", "player": "Ana"},
    {"type": "roll", "player": "Ben", "dice": [2, 5, 3]},
    {"type": "assign", "player": "Ben", "dice": [5, 2]},
    {"type": "declare", "player": "Ben", "die": 2},
    {"type": "action", "player": "Ben"},
    {"type": "build", "player": "Ben", "ride": "bumper_cars", "cards": ["bumper_cars:banners", "bumper_cars:materials", "bumper_cars:seats", "wild"]},
    {"type": "build", "player": "Ben", "ride": "swings", "cards": ["swings:banners", "swings:seats"]},
    {"type": "end_turn", "player": "Ben"},
    {"type": "roll", "player": "Ana", "dice": [6, 6, 4]},
    {"type": "assign", "player": "Ana", "dice": [6, 6]},
    {"type": "declare", "player": "Ana", "die": 6, "target": "Ben"},
    {"type": "action", "player": "Ana", "take": "swings:banners", "discard": "carousel:lights"},
    {"type": "declare", "player": "Ana", "die": 6, "target": "Ben"},
    {"type": "action", "player": "Ana", "take": "wild", "take_ride": "bumper_cars", "discard": "carousel:lights"},
    {"type": "move_wild", "player": "Ana", "to_ride": "swings"},
    {"type": "build", "player": "Ana", "ride": "ferris_wheel", "cards": ["ferris_wheel:lights"]},
    {"type": "end_turn", "player": "Ana"},
    {"type": "roll", "player": "Ben", "dice": [1, 4, 2]},
    {"type": "assign", "player": "Ben", "dice": [2, 1]},
    {"type": "declare", "player": "Ben", "die": 2},
    {"type": "action", "player": "Ben"},
    {"type": "declare", "player": "Ben", "die": 1},
    {"type": "action", "player": "Ben"},
    {"type": "build", "player": "Ben", "ride": "carousel", "cards": ["carousel:banners", "carousel:lights", "carousel:materials"]},
    {"type": "build", "player": "Ben", "ride": "swings", "cards": ["swings:banners"]},
    {"type": "end_turn", "player": "Ben"},
    {"type": "roll", "player": "Ana", "dice": [6, 5, 1]},
    {"type": "assign", "player": "Ana", "dice": [6, 5]},
    {"type": "declare", "player": "Ana", "die": 6, "target": "Ben"},
    {"type": "action", "player": "Ana", "take": "carousel:banners", "discard": "swings:seats"},
    {"type": "declare", "player": "Ana", "die": 5, "target": "Ben"},
    {"type": "action", "player": "Ana", "take": "carousel:materials", "give": "ferris_wheel:lights"},
    {"type": "build", "player": "Ana", "ride": "rollercoaster", "cards": ["rollercoaster:banners", "rollercoaster:materials"]},
    {"type": "end_turn", "player": "Ana"},
    {"type": "roll", "player": "Ben", "dice": [5, 2, 5]},
    {"type": "assign", "player": "Ben", "dice": [5, 5]},
    {"type": "declare", "player": "Ben", "die": 5, "target": "Ana"},
    {"type": "action", "player": "Ben", "take": "rollercoaster:materials", "give": "carousel:lights"},
    {"type": "declare", "player": "Ben", "die": 5, "target": "Ana"},
    {"type": "action", "player": "Ben", "take": "bumper_cars:lights", "give": "bumper_cars:materials"},
    {"type": "build", "player": "Ben", "ride": "ferris_wheel", "cards": ["ferris_wheel:banners", "ferris_wheel:materials"]},
    {"type": "build", "player": "Ben", "ride": "swings", "cards": ["swings:lights"]},
    {"type": "end_turn", "player": "Ben"},
    {"type": "roll", "player": "Ana", "dice": [6, 3, 6]},
    {"type": "assign", "player": "Ana", "dice": [6, 6]},
    {"type": "declare", "player": "Ana", "die": 6, "target": "Ben"},
    {"type": "action", "player": "Ana", "take": "ferris_wheel:materials", "discard": "swings:lights"},
    {"type": "declare", "player": "Ana", "die": 6, "target": "Ben"},
    {"type": "action", "player": "Ana", "take": "ferris_wheel:lights", "discard": "ferris_wheel:seats"},
    {"type": "build", "player": "Ana", "ride": "carousel", "cards": ["carousel:seats"]},
]

#: Video pacing (seconds of video, read at ``FRAME_PERIOD_S`` a frame): after each roll settles
#: (``SETTLE_S`` into its rest) the test has the rest of the rest period, the empty tray and the
#: next tumble and settle (about 2.4 s) to enter the turn; a turn is at most 10 entries of a few
#: milliseconds each, so a loaded machine has a wide margin. A slow reader only slows the video.
FRAME_PERIOD_S = 0.1
SETTLE_S = 0.4
LEAD_S, TUMBLE_S, REST_S, GAP_S = 1.5, 0.5, 1.0, 1.0


def _turns(script):
    """``(entries before the first roll, [(roll dice, entries after it up to the next roll)])``."""
    head, turns = [], []
    for obs in script:
        if obs["type"] == "roll":
            turns.append((tuple(obs["dice"]), []))
        elif turns:
            turns[-1][1].append(obs)
        else:
            head.append(obs)
    return head, turns


def _expected_calls(script):
    """The calls the referee makes on the script (types and fields, without times)."""
    from companion.games import referee_for
    from companion.games.carnival import VOCABULARY

    ref = referee_for("carnival")
    state, calls = ref.initial_state(), []
    for i, obs in enumerate(script):
        state, more = ref.apply(state, VOCABULARY.observation({**obs, "t": float(i)}))
        calls += more
    return [_plain(c) for c in calls]


def _plain(call):
    return {k: v for k, v in call.to_json().items() if k != "t"}


def _check_rest_frames(video, rolls):
    """Each roll's dice at rest, as written to the video (JPEG), read as the roll: else the
    composition (not the reader) is wrong."""
    reader = DiceReader(tray=TRAY)
    cap = cv2.VideoCapture(str(video.path))
    try:
        for (start, _), dice in zip(video.rests, rolls):
            cap.set(cv2.CAP_PROP_POS_FRAMES, start)
            ok, image = cap.read()
            assert ok, f"{video.path}: no frame {start}"
            got = tuple(r.value for r in reader.read(image))
            assert got == dice, f"rest frame {start} of {video.path.name} reads {got}, the script rolls {dice}"
    finally:
        cap.release()


def test_carnival_scripted_game_refereed_from_the_tray_video_and_the_entry_socket(tmp_path, monkeypatch,
                                                                                     mock_factory):
    """Carnival at a real table: each roll is read by the dice camera from the tray video and
    becomes the active player's roll; the deal and every other move are entered on the socket;
    the service's calls are the referee's on the script, to the winner, with the two misplaced
    entries refused on the way."""
    import companion.sim.carnival as simulated

    def no_simulated_player(*args, **kwargs):
        raise AssertionError("a simulated Carnival player was started inside the service")

    monkeypatch.setattr(simulated, "carnival_game", no_simulated_player)
    monkeypatch.setattr(simulated, "SimulatedCarnivalTable", no_simulated_player)
    head, turns = _turns(SCRIPT)
    rolls = [dice for dice, _ in turns]
    video = game_video(tmp_path / "tray.avi", rolls, fps=1 / FRAME_PERIOD_S, lead_s=LEAD_S, tumble_s=TUMBLE_S,
                       rest_s=REST_S, gap_s=GAP_S)
    _check_rest_frames(video, rolls)
    config = write_config(tmp_path, players={"names": list(PLAYERS)},
                          camera={"source": f"opencv:{video.path}", "frame_period_s": FRAME_PERIOD_S},
                          dice={"tray": list(TRAY), "settle_s": SETTLE_S},
                          service={"announcers": ["console", "lights"]})
    tap = CallTap(monkeypatch)
    companion = Companion(tap, config, "carnival")
    refused = []
    try:
        companion.wait_bound()
        for obs in head:
            reply = companion.enter(obs)
            assert reply["ok"] and not any(c["type"] == "invalid_observation" for c in reply["calls"]), reply
        # While Ana's turn waits for her dice: Ben ending a turn (not his) and Ana assigning dice
        # she has not rolled are refused, and the game goes on.
        for wrong in ({"type": "end_turn", "player": "Ben"}, {"type": "assign", "player": "Ana", "dice": [1, 1]}):
            reply = companion.enter(wrong)
            assert reply["ok"] and [c["type"] for c in reply["calls"]] == ["invalid_observation"], reply
            refused.append(reply["calls"][0]["reason"])
        for dice, entries in turns:
            rolled = tap.next("rolled", "dice_unreadable", timeout=15)
            assert rolled.TYPE == "rolled" and tuple(rolled.dice) == dice, rolled.to_json()
            for obs in entries:
                reply = companion.enter(obs)
                assert reply["ok"] and not any(c["type"] == "invalid_observation" for c in reply["calls"]), \
                    (obs, reply)
        winner = tap.next("winner", timeout=10)
        assert companion.join() == 0
    finally:
        companion.stop()
    invalid = [c for c in tap.calls if isinstance(c, InvalidObservation)]
    assert len(invalid) == 2
    assert refused[0] == "it is Ana's turn, not Ben's" and refused[1].startswith("not now"), refused
    # Every other call is the referee's on the script, in order: the camera's rolls and the
    # entries made the very game the players played, to its winner.
    expected = _expected_calls(SCRIPT)
    assert [_plain(c) for c in tap.calls if not isinstance(c, InvalidObservation)] == expected
    assert expected[-1]["type"] == "winner" and _plain(winner) == expected[-1]
    # The rolls came from the camera and were journaled as observations.
    from companion.journal import Journal

    journal = Journal(tmp_path / "journal.db", readonly=True)
    try:
        entries = list(journal.entries(journal.sessions()[-1].id))
    finally:
        journal.close()
    journaled = [tuple(e.body["dice"]) for e in entries if e.kind == "observation" and e.type == "roll"]
    assert journaled == rolls
    assert tap.services[-1].sources[0].rolls == len(rolls)


# ------------------------------------------------------------------ a cocked die, four dice

TRAY_PHOTOS = Path(__file__).resolve().parents[2] / "shared" / "data" / "dice-tray"


def _tray_photo(name: str, remove: list[int]):
    """A dice-tray photograph (path-traced, exact truth) with the dice ``remove`` (indices of its
    truth record) painted out of it (OpenCV's inpainting over their label-mask pixels)."""
    image = cv2.imread(str(TRAY_PHOTOS / "images" / name))
    labels = cv2.imread(str(TRAY_PHOTOS / "masks" / name.replace(".jpg", ".png")), cv2.IMREAD_UNCHANGED)
    hole = np.isin(labels, [10 + k for k in remove]).astype(np.uint8)
    hole = cv2.dilate(hole, np.ones((7, 7), np.uint8))
    return cv2.inpaint(image, hole, 9, cv2.INPAINT_TELEA) if hole.any() else image


@pytest.mark.skipif(not (TRAY_PHOTOS / "truth.json").is_file(), reason="dice-tray photographs not present")
def test_a_cocked_die_and_four_dice_are_called_and_are_no_roll(tmp_path, monkeypatch, mock_factory):
    """`companion run --game carnival --table hardware`, the dice camera a video of a real tray
    calibrated by its geometry (dice_036 of the dice-tray photographs: four flat dice and one
    cocked against the wall): four dice in the tray are "I see 4 dice", three with one cocked are
    "a die is cocked: roll it again", neither is a roll; three flat dice then are Ana's roll."""
    import json

    from companion.readers.dice_tray import TrayGeometry

    im = next(i for i in json.loads((TRAY_PHOTOS / "truth.json").read_text())["images"]
              if i["image"] == "dice_036.jpg")
    cam = im["camera"]
    geometry = TrayGeometry.from_camera(cam["K"], cam["R_world_to_cam"], cam["t_world_to_cam_mm"], (640, 480),
                                        np.array(im["tray"]["inner_polygon_mm"])[:, :2])
    cal = tmp_path / "cal"
    cal.mkdir()
    (cal / "dice-tray.toml").write_text(geometry.to_toml("dice_036.jpg"))
    # dice 0-3 flat (6, 2, 5, 5), die 4 cocked; die 3 lies where the reader does not find it
    empty = _tray_photo("dice_036.jpg", [0, 1, 2, 3, 4])
    four = _tray_photo("dice_036.jpg", [3])  # cocked, 5, 6, 2: four dice
    cocked = _tray_photo("dice_036.jpg", [2, 3])  # cocked, 6, 2
    flat = _tray_photo("dice_036.jpg", [3, 4])  # 5, 6, 2 (the 5 not read: unknown)
    rng = np.random.default_rng(3)
    path = tmp_path / "tray.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (640, 480))
    assert writer.isOpened()

    def still(image, frames):
        for _ in range(frames):
            writer.write(image)

    def tumble(frames=5):
        for _ in range(frames):  # a hand over the tray, somewhere else each frame
            frame = empty.copy()
            x, y = int(rng.integers(150, 450)), int(rng.integers(120, 330))
            cv2.rectangle(frame, (x, y), (x + 90, y + 60), (90, 120, 170), -1)
            writer.write(frame)

    still(empty, 15)
    for rest in (four, cocked, flat):
        tumble()
        still(rest, 12)
        tumble(3)
        still(empty, 6)
    still(empty, 40)
    writer.release()
    config = write_config(tmp_path, players={"names": list(PLAYERS)},
                          camera={"source": f"opencv:{path}", "frame_period_s": FRAME_PERIOD_S},
                          dice={"settle_s": SETTLE_S}, calibration={"dir": str(cal)},
                          service={"announcers": ["console", "lights"]})
    tap = CallTap(monkeypatch)
    companion = Companion(tap, config, "carnival")
    try:
        companion.wait_bound()
        reply = companion.enter(SCRIPT[0])
        assert reply["ok"], reply
        count = tap.next("dice_count", "dice_cocked", "rolled", "dice_unreadable", timeout=60)
        assert count.TYPE == "dice_count" and (count.seen, count.needed, count.player) == (4, 3, "Ana"), count
        call = tap.next("dice_count", "dice_cocked", "rolled", "dice_unreadable", timeout=60)
        assert call.TYPE == "dice_cocked" and (call.count, call.player) == (1, "Ana"), call
        roll = tap.next("dice_count", "dice_cocked", "rolled", "dice_unreadable", timeout=60)
        assert roll.TYPE in ("rolled", "dice_unreadable") and roll.player == "Ana", roll
        assert set(roll.dice) - {"unknown"} <= {5, 6, 2}
    finally:
        companion.stop()
    source = tap.services[-1].sources[0]
    assert source.rolls == 1  # four dice and a cocked die were no roll
    from companion.announcers.speech import Catalogue

    assert Catalogue("en").text(call, "carnival") == "Ana, a die is cocked: roll it again."
