"""`companion run --game carrousel --camera sim`: the referee learns the table only from the
simulated camera's rendered frames, and its calls match the ground truth."""

from __future__ import annotations

import io

from companion.clock import ManualClock
from companion.assembly import assemble
from companion.config import validate
from companion.games.carrousel import Board, CarrouselReferee
from companion.journal import Journal


def test_camera_sim_calls_match_the_true_positions(tmp_path):
    config = validate({"service": {"pin_factory": "mock", "announcers": ["console", "lights"]}, "sim": {"seed": 3}})
    journal = Journal(tmp_path / "j.db")
    service = assemble("carrousel", config, journal, ManualClock, "sim", players=["Ana", "Ben"], new=True,
                       stream=io.StringIO(), options={"camera": "sim"})
    sim = service.scheduled[0]
    truth: list[tuple[float, tuple[str, ...]]] = [(0.0, sim.position.spaces)]  # the setup
    set_position = sim._set_position

    def record(t, position):
        truth.append((t, position.spaces))
        set_position(t, position)

    sim._set_position = record
    seen: list = []
    emit = service.emit

    def tap(obs):
        seen.append(obs)
        emit(obs)

    service.emit = tap
    service.run(until=20.0)
    service.close()
    boards = [o for o in seen if isinstance(o, Board)]
    assert len(boards) >= 4
    # Every position the players made was read, in order, and nothing else was read.
    assert [b.spaces for b in boards] == [s for _, s in truth][: len(boards)]
    assert len(truth) - len(boards) <= 1  # the last move may still be settling at the end
    # The calls made from the camera equal the calls made from the true positions.
    ref = CarrouselReferee()
    start = next(o for o in seen if o.TYPE == "game_start")
    others = [o for o in seen if o.TYPE != "board" and o.TYPE != "game_start"]

    def calls(board_obs):
        state, out = ref.apply(ref.initial_state(), start)[0], []
        for o in sorted(board_obs + others, key=lambda o: o.t):
            state, c = ref.apply(state, o)
            out += [(x.TYPE, getattr(x, "player", None), getattr(x, "kind", None)) for x in c]
        return out

    true_boards = [Board(t=b.t, spaces=s) for b, (_, s) in zip(boards, truth)]
    assert calls(boards) == calls(true_boards)
    kinds = {c[0] for c in calls(boards)}
    assert "point" in kinds and "move" in kinds
