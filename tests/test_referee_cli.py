"""`companion referee carrousel --events`: the rulebook's situations as JSON Lines, end to end
through the command line (a real subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from companion.games.carrousel import Position, shuffled_deck, deal

ROOT = Path(__file__).resolve().parent.parent
SEED = 3
ANA, BEN = (c[0] for c in deal(shuffled_deck(SEED), 2)[0])  # their first active cards


def referee(lines, *extra, stdin=False):
    text = "".join((json.dumps(x) if not isinstance(x, str) else x) + "\n" for x in lines)
    if stdin:
        args, inp = ["--events", "-"], text
    else:
        path = ROOT / ".pytest_cache" / f"events-{os.getpid()}.jsonl"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
        args, inp = ["--events", str(path)], None
    proc = subprocess.run(
        [sys.executable, "-m", "companion", "--config", os.devnull, "referee", "carrousel", *args, *extra],
        input=inp, capture_output=True, text=True, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return [json.loads(x) for x in proc.stdout.splitlines()], proc.stderr


def spaces(text):
    return list(Position.from_text(text).spaces)


def order_for(card, first_space=5):
    rest = tuple(c for c in ("black", "yellow", "blue", "green", "red") if c not in card)
    return list(Position.from_line(tuple(card) + rest, first_space).spaces)


def start(t=0.0, position=".gbyrk."):
    return {"type": "game_start", "t": t, "players": ["Ana", "Ben"], "spaces": spaces(position), "seed": SEED}


def test_correct_order_then_claim_scores_a_point():
    """Correct Order: put the horses in the card's order, press: one point, a new card."""
    calls, _ = referee([start(), {"type": "board", "t": 3.0, "spaces": order_for(ANA)}, {"type": "claim", "t": 3.4, "player": "Ana"}])
    point = [c for c in calls if c["type"] == "point"]
    assert point and point[0]["player"] == "Ana" and point[0]["card"] == list(ANA) and point[0]["score"] == 1


def test_dead_end_after_twenty_seconds_then_the_correction():
    """Special Cases (Dead end): called at 20.0 s, then the last horse to the front is confirmed."""
    calls, _ = referee([start(), {"type": "tick", "t": 20.05}, {"type": "board", "t": 21.0, "spaces": spaces("..byrkg")}])
    assert [c["type"] for c in calls[1:3]] == ["dead_end", "dead_end_corrected"]
    assert calls[1]["t"] == 20.0 and calls[1]["horse"] == "green"


def test_illegal_move_is_called_at_once():
    """Moving the Horses: three horses moved in one go is called as it happens."""
    calls, _ = referee([start(), {"type": "board", "t": 1.0, "spaces": spaces(".gbkyr.")}])
    assert calls[1]["type"] == "illegal_move" and calls[1]["t"] == 1.0


def test_wrong_claim_is_a_penalty():
    """Course of the Game: a claim that does not match is penalised."""
    calls, _ = referee([start(), {"type": "claim", "t": 1.0, "player": "Ben"}])
    assert calls[1]["type"] == "penalty" and calls[1]["player"] == "Ben" and calls[1]["lost_card"] is None


def test_a_gap_is_an_illegal_move_and_the_game_goes_on_from_the_board_seen():
    """Moving the Horses: a stable board with a gap between horses is an illegal move (reason:
    a gap); a claim then is judged on that board (a penalty), and closing the gap on the
    claimer's order is a lucky bird after the mistake."""
    gap = spaces(".gbyrk.")[:3] + ["empty"] + ["red", "black", "yellow"][:3]
    calls, err = referee([
        start(),
        {"type": "board", "t": 1.2, "spaces": gap},
        {"type": "claim", "t": 1.5, "player": "Ben"},
        {"type": "board", "t": 2.0, "spaces": order_for(ANA)},
    ])
    assert [c["type"] for c in calls[1:]] == ["illegal_move", "penalty", "lucky_bird"], calls
    assert calls[1]["after"] == gap and "a gap" in calls[1]["reason"] and err == ""
    assert calls[3]["player"] == "Ana" and calls[3]["reason"] == "mistake"


def test_bad_lines_are_reported_by_number_and_the_game_goes_on():
    """Bad input: malformed JSON, unknown type, six horses, a horse twice, an unknown colour,
    an unknown player: each an invalid_observation naming its line; later lines are still judged."""
    lines = [
        start(),
        "{not json",
        {"type": "teleport", "t": 1.0},
        {"type": "board", "t": 1.1, "spaces": ["black", "yellow", "blue", "green", "red", "red", "empty"]},
        {"type": "board", "t": 1.2, "spaces": ["black", "black", "blue", "green", "red", "empty", "empty"]},
        {"type": "board", "t": 1.3, "spaces": ["purple", "yellow", "blue", "green", "red", "empty", "empty"]},
        {"type": "claim", "t": 1.4, "player": "Zed"},
        {"type": "board", "t": 2.0, "spaces": order_for(ANA)},
        {"type": "claim", "t": 2.5, "player": "Ana"},
    ]
    calls, err = referee(lines)
    invalid = [c for c in calls if c["type"] == "invalid_observation"]
    assert [c["line"] for c in invalid] == [2, 3, 4, 5, 6, 7]
    assert "not valid JSON" in invalid[0]["reason"]
    assert "unknown observation type 'teleport'" in invalid[1]["reason"]
    assert "red horse stands on 2 spaces" in invalid[2]["reason"]
    assert "black horse stands on 2 spaces" in invalid[3]["reason"]
    assert "unknown colour 'purple'" in invalid[4]["reason"]
    assert "unknown player 'Zed'" in invalid[5]["reason"]
    assert any(c["type"] == "point" and c["player"] == "Ana" for c in calls)
    assert err.count("companion referee: line") == 6


def test_deterministic_and_standard_input():
    """The same input gives the same output, byte for byte; '-' reads standard input."""
    lines = [start(), {"type": "board", "t": 1.0, "spaces": spaces(".gbykr.")}, {"type": "claim", "t": 1.5, "player": "Ana"}, {"type": "tick", "t": 40.0}]
    a, _ = referee(lines)
    b, _ = referee(lines, stdin=True)
    assert a == b and len(a) >= 4


def test_example_file_in_the_docs_runs_clean():
    """docs/examples/carrousel-demo.jsonl (the documented example) gives no invalid line."""
    proc = subprocess.run(
        [sys.executable, "-m", "companion", "--config", os.devnull, "referee", "carrousel", "--events", "docs/examples/carrousel-demo.jsonl"],
        capture_output=True, text=True, cwd=ROOT,
    )
    types = [json.loads(x)["type"] for x in proc.stdout.splitlines()]
    assert proc.returncode == 0 and "invalid_observation" not in types
    assert {"game_started", "move", "point", "penalty", "dead_end", "dead_end_corrected", "illegal_move"} <= set(types)


def test_missing_events_file_is_one_line_error(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "companion", "--config", os.devnull, "referee", "carrousel", "--events", str(tmp_path / "none.jsonl")],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert proc.returncode == 2 and proc.stderr.startswith("companion: error: --events") and "Traceback" not in proc.stderr
