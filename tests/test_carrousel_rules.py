"""The Carrousel rules engine, rule by rule. Each test names the rulebook section
(shared/rules/carrousel.txt) or the the rulings in docs/vocabulary.md ruling it checks."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from companion.events import InvalidObservation, Tick
from companion.games.carrousel import (
    CARDS,
    COLOURS,
    MOVE_KINDS,
    Board,
    CardCorrected,
    CardSeen,
    CarrouselReferee,
    Claim,
    ClaimTooLate,
    DeadEnd,
    DeadEndCorrected,
    DeadEndNotCorrected,
    GameStart,
    GameStarted,
    IllegalMove,
    LuckyBird,
    Move,
    MoveMade,
    Penalty,
    Point,
    Position,
    PositionError,
    GAP_REASON,
    Winner,
    classify,
    deal,
    hand_size,
    shuffled_deck,
    target_points,
)

START = Position.from_text(".gbyrk.")  # first black, then red, yellow, blue, green (last)
ALL_POSITIONS = [
    Position.from_line(line, first)
    for line in itertools.permutations(COLOURS)
    for first in range(7)
]


def make_deck(*hands_then_pile: list[tuple[str, str, str]], n_players: int = 2) -> list[list[str]]:
    """A full 60-card deck whose first cards are dealt as given: one list per player (their
    face-up cards, top first), then optionally the top of the draw pile."""
    k = hand_size(n_players)
    chosen = list(hands_then_pile)
    rest = [c for c in CARDS if all(c not in part for part in chosen)]
    # Orders the tests start from go to the bottom of the pile unless asked for, so that no
    # filler card scores a lucky bird by chance (every face-up card counts in advanced rules).
    starts = [Position.from_text(x).first_three for x in (".gbyrk.", ".gbykr.", ".gbkyr.", "..byrkg")]
    bottom = [c for c in starts if c in rest]
    rest = [c for c in rest if c not in starts]
    deck: list[tuple[str, str, str]] = []
    for p in range(n_players):
        mine = list(chosen[p]) if p < len(chosen) else []
        while len(mine) < k:
            mine.append(rest.pop())
        deck += mine
    pile_top = list(chosen[n_players]) if len(chosen) > n_players else []
    deck += pile_top + rest + bottom
    assert sorted(deck) == sorted(CARDS)
    return [list(c) for c in deck]


def start(players=("Ana", "Ben"), position=START, deck=None, seed=None, advanced=False, dead_end_s=20.0):
    ref = CarrouselReferee()
    if deck is None and seed is None:
        seed = 1
    obs = GameStart(
        t=0.0,
        players=players,
        spaces=position.spaces,
        seed=seed,
        deck=tuple(tuple(c) for c in deck) if deck else None,
        advanced=advanced,
        dead_end_s=dead_end_s,
    )
    state, calls = ref.apply(ref.initial_state(), obs)
    return ref, state, calls


def board(t, text):
    return Board(t=t, spaces=Position.from_text(text).spaces)


def types(calls):
    return [c.TYPE for c in calls]


# ------------------------------------------------------------------------------ Components


def test_components_sixty_cards_are_the_ordered_triples_of_distinct_colours():
    """Components / ruling (docs/vocabulary.md): 60 cards, the 60 ordered triples of the 5 horse colours."""
    assert len(CARDS) == 60 == len(set(CARDS))
    assert all(len(set(c)) == 3 and set(c) <= set(COLOURS) for c in CARDS)


def test_components_five_horses_seven_spaces():
    """Components: 5 horses on a carousel of 7 spaces."""
    assert len(COLOURS) == 5
    assert len(START.spaces) == 7


# ----------------------------------------------------------------------------------- Setup


@pytest.mark.parametrize("n,k,pile", [(2, 9, 42), (3, 6, 42), (4, 5, 40)])
def test_setup_deal_sizes(n, k, pile):
    """Setup: 9 face-up cards each with 2 players, 6 with 3, 5 with 4; the rest is the pile."""
    hands, draw = deal(shuffled_deck(5), n)
    assert [len(h) for h in hands] == [k] * n
    assert len(draw) == pile
    assert sorted(sum(hands, ()) + draw) == sorted(CARDS)


def test_setup_horses_must_stand_on_consecutive_spaces():
    """Setup: the 5 horses stand on 5 consecutive spaces; a gap is not a position."""
    with pytest.raises(PositionError, match="consecutive"):
        Position.from_text(".gb.yrk")


@pytest.mark.parametrize(
    "spaces,message",
    [
        (["black", "yellow", "blue", "green", "red", "red", "empty"], "red horse stands on 2"),
        (["black", "yellow", "blue", "green", "red", "empty"], "expected 7 spaces"),
        (["black", "yellow", "blue", "green", "purple", "empty", "empty"], "unknown colour 'purple'"),
        (["black", "yellow", "blue", "green", "empty", "empty", "empty"], "expected 5 horses"),
    ],
)
def test_setup_impossible_positions_are_rejected_with_the_reason(spaces, message):
    """Setup: six horses, a missing horse or an unknown colour is not a Carrousel position."""
    with pytest.raises(PositionError, match=message):
        Position.from_spaces(spaces)


def test_setup_the_first_horse_has_the_empty_spaces_ahead():
    """Setup + ruling (docs/vocabulary.md): the carousel turns counter-clockwise (towards higher space numbers);
    the first horse is the one with the empty spaces just ahead of it."""
    pos = Position.from_text(".gbyrk.")
    assert pos.first_space == 5
    assert pos.line == ("black", "red", "yellow", "blue", "green")
    assert pos.first_three == ("black", "red", "yellow")
    wrapped = Position.from_text("rk..gby")  # horses on 4,5,6,0,1: first is on space 1
    assert wrapped.first_three == ("black", "red", "yellow")


@pytest.mark.parametrize("n,target", [(2, 20), (3, 15), (4, 10)])
def test_victory_targets(n, target):
    """Victory: 20 points with 2 players, 15 with 3, 10 with 4."""
    assert target_points(n) == target
    _, state, calls = start(players=tuple(f"P{i}" for i in range(n)))
    assert state.target == target and calls[0].target == target


def test_setup_player_count_out_of_range_is_an_invalid_observation():
    """Setup: deals exist for 2 to 4 players only."""
    ref = CarrouselReferee()
    state, calls = ref.apply(
        ref.initial_state(), GameStart(t=0, players=("Solo",), spaces=START.spaces, seed=1)
    )
    assert types(calls) == ["invalid_observation"] and "2 to 4" in calls[0].reason
    assert state.phase == "waiting"


# ----------------------------------------------------------------------- Moving the Horses


def test_moving_the_horses_every_move_type_is_generated():
    """Moving the Horses: swap two; first to last; last to front; both knock-outs; total
    chaos - and nothing else."""
    moves = START.legal_moves()
    kinds = {m.kind for m in moves}
    assert kinds == set(MOVE_KINDS)
    count = {k: sum(m.kind == k for m in moves) for k in MOVE_KINDS}
    # 10 pairs to swap; 1 + 1; the last horse knocks out any of 4; the first knocks out any
    # of 4; 4 neighbouring pairs x 2 orders.
    assert count == {
        "swap": 10,
        "first_to_last": 1,
        "last_to_front": 1,
        "knock_out_to_front": 4,
        "knock_out_to_end": 4,
        "total_chaos": 8,
    }


def test_moving_the_horses_examples():
    """Moving the Horses: each move type, applied to .gbyrk. (line k r y b g)."""
    assert str(START.apply(Move("swap", ("black", "red")))) == ".gbykr."
    first_to_last = START.apply(Move("first_to_last", ("black",)))
    assert first_to_last.line == ("red", "yellow", "blue", "green", "black")
    last_to_front = START.apply(Move("last_to_front", ("green",)))
    assert last_to_front.line == ("green", "black", "red", "yellow", "blue")
    # The last horse takes yellow's place; yellow goes to the very first place.
    ko_front = START.apply(Move("knock_out_to_front", ("green", "yellow")))
    assert ko_front.line == ("yellow", "black", "red", "green", "blue")
    # The first horse takes blue's place; blue goes to the very end.
    ko_end = START.apply(Move("knock_out_to_end", ("black", "blue")))
    assert ko_end.line == ("red", "yellow", "black", "green", "blue")
    # Red and yellow (neighbours) onto the two empty spaces, red just ahead of black.
    chaos = START.apply(Move("total_chaos", ("red", "yellow")))
    assert str(chaos) == "ygb..kr"


@pytest.mark.parametrize("pos", ALL_POSITIONS[::7])
def test_moving_the_horses_every_legal_move_keeps_five_in_a_row_and_moves_one_or_two(pos):
    """Moving the Horses: a move involves 1 or 2 horses and leaves no empty space between."""
    for move in pos.legal_moves():
        after = pos.apply(move)
        assert after.is_contiguous()
        moved = [c for c in COLOURS if pos.space_of(c) != after.space_of(c)]
        assert 1 <= len(moved) <= 2, (str(pos), str(move), str(after))


@given(st.sampled_from(ALL_POSITIONS), st.data())
def test_classify_agrees_with_legal_moves(pos, data):
    """Moving the Horses (python-chess style): classify(before, after) names a legal move
    exactly when one legal move turns before into after."""
    successors = {pos.apply(m).spaces for m in pos.legal_moves()}
    other = data.draw(st.sampled_from(ALL_POSITIONS))
    move = classify(pos, other)
    if other.spaces in successors:
        assert move is not None and pos.apply(move) == other
    else:
        assert move is None


def test_moving_three_horses_is_illegal():
    """Moving the Horses: never more than two horses at once."""
    ref, state, _ = start()
    state, calls = ref.apply(state, board(1.0, ".gbkyr."))  # k, y, r rotated
    assert types(calls) == ["illegal_move"]
    assert "3 horses moved" in calls[0].reason
    assert state.position == Position.from_text(".gbkyr.")  # the table is what it is


def test_moving_the_horses_a_legal_move_is_called_with_its_type():
    """Moving the Horses: the referee names the move it saw."""
    ref, state, _ = start()
    state, calls = ref.apply(state, board(1.0, "kgbyr.."))
    assert calls == [
        MoveMade(
            t=1.0,
            kind="first_to_last",
            horses=("black",),
            spaces=Position.from_text("kgbyr..").spaces,
            first_three=("red", "yellow", "blue"),
        )
    ]


GAP = ("empty", "green", "blue", "empty", "red", "black", "yellow")  # START with yellow pulled out
ANA_ORDER = ".gbyrk."  # START: its first three are Ana's card below


def test_a_board_with_a_gap_is_an_illegal_move_and_becomes_the_position():
    """Moving the Horses: after every move the 5 horses stand one after another. A stable
    board with a gap is an illegal move (reason: a gap), and the referee goes on from the
    board the camera sees."""
    ref, state, _ = start()
    new, calls = ref.apply(state, Board(t=1.0, spaces=GAP))
    assert calls == [IllegalMove(t=1.0, before=START.spaces, after=GAP, reason=GAP_REASON)]
    assert new.position.spaces == GAP and new.position.has_gap
    # The same gap read again is not a new move; another gap is another illegal move.
    again, calls = ref.apply(new, Board(t=1.5, spaces=GAP))
    assert calls == []
    other = ("empty", "green", "empty", "blue", "red", "black", "yellow")
    _, calls = ref.apply(again, Board(t=2.0, spaces=other))
    assert types(calls) == ["illegal_move"] and calls[0].reason == GAP_REASON and calls[0].before == GAP


def test_a_gap_has_no_first_three():
    """A board with a gap has no first horse: its line and first three are refused, no move
    of the rulebook starts from it."""
    pos = Position.from_reading(GAP)
    assert pos.has_gap and not START.has_gap
    with pytest.raises(PositionError, match="gap"):
        pos.first_three
    assert pos.legal_moves() == [] and classify(pos, START) is None
    with pytest.raises(PositionError, match="consecutive"):
        Position.from_spaces(GAP)  # still not a position to start from (Setup)
    with pytest.raises(PositionError, match="expected 5 horses"):
        Position.from_reading(("empty",) * 3 + ("red", "black", "yellow", "blue"))


def test_a_claim_on_a_board_with_a_gap_is_a_penalty_judged_on_the_board_seen():
    """A claim after the gap is judged on the board as it is, not on the last good one: even
    when the board before the gap matched the claimer's card, it is a penalty."""
    ref, state, _ = start(deck=make_deck([ANA_CARD], [BEN_CARD]))
    assert START.first_three == ANA_CARD
    state, _ = ref.apply(state, Board(t=1.0, spaces=GAP))
    state, calls = ref.apply(state, Claim(t=1.4, player="Ana"))
    assert types(calls) == ["penalty"] and calls[0].player == "Ana" and calls[0].first_three == ("", "", "")
    assert state.player("Ana").score == 0


def test_lucky_bird_when_the_gap_closes_on_a_matching_order():
    """Special Cases (lucky bird, because of an opponent's mistake): once the gap is closed the
    first three are checked; the closing itself is not judged as a move (none starts from a
    gap)."""
    ref, state, _ = start(position=Position.from_text(".gbykr."), deck=make_deck([ANA_CARD], [BEN_CARD]))
    state, calls = ref.apply(state, Board(t=1.0, spaces=GAP))
    assert types(calls) == ["illegal_move"]  # no lucky bird on a board without a first three
    state, calls = ref.apply(state, board(2.0, ANA_ORDER))
    assert calls == [LuckyBird(t=2.0, player="Ana", card=ANA_CARD, score=1,
                               next_card=state.player("Ana").active, reason="mistake")]
    # A closing that matches nobody's card says nothing; the next change is judged as a move.
    ref, state, _ = start(deck=make_deck([BEN_CARD], [ANA_CARD[::-1]]))
    state, _ = ref.apply(state, Board(t=1.0, spaces=GAP))
    state, calls = ref.apply(state, board(2.0, ".gbykr."))
    assert calls == [] and str(state.position) == ".gbykr."
    _, calls = ref.apply(state, board(3.0, ".gbyrk."))
    assert types(calls) == ["move"] and calls[0].kind == "swap"


def test_the_dead_end_waits_for_the_gap_to_close():
    """Dead end (Special Cases): the last horse goes to the front; a board with a gap has no
    last horse, so a dead end due meanwhile is called when the gap closes."""
    ref, state, _ = start(deck=make_deck([BEN_CARD], [("blue", "green", "red")]), dead_end_s=5.0)
    state, _ = ref.apply(state, Board(t=1.0, spaces=GAP))
    assert ref.next_deadline(state) is None
    state, calls = ref.apply(state, Tick(t=8.0))
    assert calls == []
    state, calls = ref.apply(state, board(9.0, ".gbykr."))
    assert types(calls) == ["dead_end"] and calls[0].t == 9.0 and calls[0].horse == "green"


def test_a_horse_in_a_hand_is_not_judged():
    """Course of the Game: a player takes one or two horses in hand; the reading with four (or
    three) horses on the board is a moment of the move, unknown, not an observation error."""
    ref, state, _ = start()
    for spaces in (("empty", "green", "blue", "empty", "empty", "black", "empty"),
                   ("empty", "green", "blue", "yellow", "empty", "black", "empty")):
        new, calls = ref.apply(state, Board(t=1.0, spaces=spaces))
        assert calls == [] and new.position == START


def test_a_board_with_hidden_spaces_is_not_judged():
    """the rulings in docs/vocabulary.md (Readers never guess): a reading with an unknown space waits for a full one."""
    ref, state, _ = start()
    hidden = ("empty", "unknown", "unknown", "yellow", "red", "black", "empty")
    new, calls = ref.apply(state, Board(t=1.0, spaces=hidden))
    assert calls == [] and new.position == START


# ------------------------------------------------------------- Correct Order and claims

ANA_CARD = ("black", "red", "yellow")  # what START shows
BEN_CARD = ("green", "black", "red")  # START after last_to_front


def test_correct_order_claim_scores_turns_the_card_and_draws_a_new_one():
    """Correct Order: a matching first three scores a point; the card is turned over and a
    new card is drawn from the draw pile."""
    pile_top = ("blue", "green", "red")
    ref, state, calls = start(
        position=Position.from_text(".gbykr."),  # first three: red black yellow
        deck=make_deck([ANA_CARD], [BEN_CARD], [pile_top]),
    )
    state, calls = ref.apply(state, board(1.0, ".gbyrk."))
    state, calls = ref.apply(state, Claim(t=1.5, player="Ana"))
    assert calls == [
        Point(t=1.5, player="Ana", card=ANA_CARD, score=1, next_card=pile_top, owner="Ana")
    ]
    ana = state.player("Ana")
    assert ana.won == (ANA_CARD,) and ana.active == pile_top
    assert len(ana.face_up) == 9 and len(state.draw_pile) == 41


def test_at_a_table_whose_deck_order_is_unseen_the_drawn_card_is_never_announced_from_a_guess():
    """A real table: only the active cards were read (``unseen_order``); after a point the
    referee does not name the card it guessed would be drawn: ``next_unseen``, and the camera's
    ``card_seen`` of the card really turned up is what counts."""
    from companion.games.carrousel import CardCorrected, CardSeen

    ref = CarrouselReferee()
    guess = ("blue", "green", "red")
    state, _ = ref.apply(ref.initial_state(), GameStart(
        t=0.0, players=("Ana", "Ben"), spaces=Position.from_text(".gbykr.").spaces,
        deck=tuple(make_deck([ANA_CARD], [BEN_CARD], [guess])), unseen_order=True))
    state, _ = ref.apply(state, board(1.0, ".gbyrk."))
    state, calls = ref.apply(state, Claim(t=1.5, player="Ana"))
    assert calls == [Point(t=1.5, player="Ana", card=ANA_CARD, score=1, next_card=None, owner="Ana",
                           next_unseen=True)]
    turned_up = ("yellow", "blue", "green")
    assert turned_up != guess
    state, calls = ref.apply(state, CardSeen(t=2.0, player="Ana", card=turned_up))
    assert [c.TYPE for c in calls] == ["card_corrected"] and isinstance(calls[0], CardCorrected)
    assert state.player("Ana").active == turned_up


def test_course_of_the_game_wrong_claim_puts_a_won_card_at_the_bottom_of_the_pile():
    """Course of the Game: a claim whose order does not match costs one won card, which goes
    to the bottom of the draw pile."""
    ref, state, _ = start(position=Position.from_text(".gbykr."), deck=make_deck([ANA_CARD], [BEN_CARD]))
    state, _ = ref.apply(state, board(1.0, ".gbyrk."))
    state, _ = ref.apply(state, Claim(t=1.5, player="Ana"))
    assert state.player("Ana").score == 1
    state, calls = ref.apply(state, board(2.0, ".gbykr."))
    state, calls = ref.apply(state, Claim(t=2.5, player="Ana"))
    assert types(calls) == ["penalty"]
    assert calls[0].lost_card == ANA_CARD and calls[0].score == 0
    assert state.draw_pile[-1] == ANA_CARD and state.player("Ana").won == ()


def test_penalty_with_no_won_card_loses_nothing():
    """ruling (docs/vocabulary.md): a penalised player with no won card loses nothing."""
    ref, state, _ = start(position=Position.from_text(".gbykr."), deck=make_deck([ANA_CARD], [BEN_CARD]))
    pile = state.draw_pile
    state, calls = ref.apply(state, Claim(t=1.0, player="Ben"))
    assert types(calls) == ["penalty"] and calls[0].lost_card is None and calls[0].score == 0
    assert state.draw_pile == pile


def test_claim_is_judged_on_the_last_stable_reading():
    """ruling (docs/vocabulary.md): a claim is judged on the last full reading at the press; a reading with a
    hand over the board does not count."""
    ref, state, _ = start(position=Position.from_text(".gbykr."), deck=make_deck([ANA_CARD], [BEN_CARD]))
    state, _ = ref.apply(state, board(1.0, ".gbyrk."))
    state, _ = ref.apply(state, Board(t=1.2, spaces=("empty",) + ("unknown",) * 5 + ("empty",)))
    state, calls = ref.apply(state, Claim(t=1.3, player="Ana"))
    assert types(calls) == ["point"]


def test_claim_from_an_unknown_player_is_rejected():
    """Bad input: a claim from a player who is not at the table."""
    ref, state, _ = start()
    new, calls = ref.apply(state, Claim(t=1.0, player="Zed"))
    assert types(calls) == ["invalid_observation"] and "Zed" in calls[0].reason
    assert new == state


def test_double_press_after_a_point_is_too_late_not_a_penalty():
    """ruling (docs/vocabulary.md): the earliest press wins; a second press on the order just scored is late,
    not wrong (a double press must not cost a point)."""
    ref, state, _ = start(position=Position.from_text(".gbykr."), deck=make_deck([ANA_CARD], [BEN_CARD]))
    state, _ = ref.apply(state, board(1.0, ".gbyrk."))
    state, _ = ref.apply(state, Claim(t=1.5, player="Ana"))
    state, calls = ref.apply(state, Claim(t=1.52, player="Ana"))
    assert calls == [ClaimTooLate(t=1.52, player="Ana", card=ANA_CARD, scored_by="Ana")]
    assert state.player("Ana").score == 1


def test_simultaneous_claims_earliest_wins_in_the_advanced_rules():
    """ruling (docs/vocabulary.md): simultaneous claims are resolved by the earliest time; with the advanced
    rules both may match, the first scores, the second is too late."""
    ref, state, _ = start(
        position=Position.from_text(".gbykr."), deck=make_deck([ANA_CARD], [BEN_CARD]), advanced=True
    )
    state, _ = ref.apply(state, board(1.0, ".gbyrk."))
    state, calls = ref.apply(state, Claim(t=1.40, player="Ben"))
    assert calls[0] == Point(t=1.4, player="Ben", card=ANA_CARD, score=1, next_card=BEN_CARD, owner="Ana")
    state, calls = ref.apply(state, Claim(t=1.41, player="Ana"))
    assert types(calls) == ["claim_too_late"]


def test_observations_must_come_in_time_order():
    """The engine is pure and time comes with each observation: time never goes backwards."""
    ref, state, _ = start()
    state, _ = ref.apply(state, Tick(t=5.0))
    new, calls = ref.apply(state, Claim(t=4.0, player="Ana"))
    assert types(calls) == ["invalid_observation"] and "backwards" in calls[0].reason
    assert new == state


# ------------------------------------------------------------------------------- Victory


def test_victory_first_to_the_target_wins_and_the_game_ends():
    """Victory: the first player to the target (20 with 2 players) wins; nothing after."""
    ref, state, _ = start(position=Position.from_text(".gbykr."), seed=3)
    t = 1.0
    seen = []
    while state.phase == "playing":
        card = state.player("Ana").active
        target = Position.from_line(card + tuple(c for c in COLOURS if c not in card), 2)
        if state.position != target:
            # Put the horses in order for Ana (whatever it takes: the referee may call it
            # illegal and score a lucky bird, which does not matter here).
            state, calls = ref.apply(state, Board(t=t, spaces=target.spaces))
            seen += calls
        if state.phase == "playing":
            state, calls = ref.apply(state, Claim(t=t + 0.1, player="Ana"))
            seen += calls
        t += 1.0
    winners = [c for c in seen if isinstance(c, Winner)]
    assert len(winners) == 1 and seen[-1] is winners[0]
    assert winners[0].player == "Ana" and winners[0].scores["Ana"] == 20
    state2, calls = ref.apply(state, Claim(t=t, player="Ben"))
    assert types(calls) == ["invalid_observation"] and "over" in calls[0].reason
    assert state2 == state


# ------------------------------------------------------------------------------- Dead end


def test_dead_end_is_called_once_at_twenty_seconds_with_the_expected_correction():
    """Special Cases (Dead end): 20 s without a point: the last horse goes to the front."""
    ref, state, _ = start()
    assert ref.next_deadline(state) == 20.0
    state, calls = ref.apply(state, Tick(t=19.99))
    assert calls == []
    state, calls = ref.apply(state, Tick(t=20.4))
    assert calls == [DeadEnd(t=20.0, horse="green", expected=Position.from_text("..byrkg").spaces)]
    state, calls = ref.apply(state, Tick(t=45.0))
    assert calls == []  # called once
    assert ref.next_deadline(state) is None


def test_dead_end_is_called_before_the_observation_that_comes_after_it():
    """Special Cases (Dead end): timed at its due time even when no tick came in between."""
    ref, state, _ = start()
    state, calls = ref.apply(state, board(21.0, ".gbykr."))
    assert types(calls) == ["dead_end_not_corrected", "move"] or types(calls)[0] == "dead_end"
    assert calls[0].t == 20.0 and calls[0].TYPE == "dead_end"


def test_dead_end_correction_is_confirmed_and_restarts_the_clock():
    """ruling (docs/vocabulary.md): the clock restarts after each dead-end move."""
    ref, state, _ = start()
    state, _ = ref.apply(state, Tick(t=20.0))
    state, calls = ref.apply(state, board(22.5, "..byrkg"))
    assert types(calls) == ["dead_end_corrected"]
    assert ref.next_deadline(state) == 42.5


def test_dead_end_wrong_correction_is_flagged():
    """Special Cases (Dead end): any other change than the last horse to the front is flagged,
    and the move is judged as usual."""
    ref, state, _ = start()
    state, _ = ref.apply(state, Tick(t=20.0))
    state, calls = ref.apply(state, board(22.0, ".gbykr."))
    assert types(calls) == ["dead_end_not_corrected", "move"]
    assert calls[0].expected == Position.from_text("..byrkg").spaces
    assert ref.next_deadline(state) == 42.0


def test_dead_end_clock_restarts_at_each_point_not_at_moves():
    """ruling (docs/vocabulary.md): the dead-end clock restarts at the start and at each point scored; moves do
    not restart it."""
    ref, state, _ = start(position=Position.from_text(".gbykr."), deck=make_deck([ANA_CARD], [BEN_CARD]))
    state, _ = ref.apply(state, board(10.0, ".gbyrk."))
    assert ref.next_deadline(state) == 20.0
    state, _ = ref.apply(state, Claim(t=12.0, player="Ana"))
    assert ref.next_deadline(state) == 32.0


def test_dead_end_time_comes_from_the_options():
    """The 20 s is configurable (the benchmark shortens it); the rulebook default is 20."""
    ref, state, _ = start(dead_end_s=0.5)
    assert ref.next_deadline(state) == 0.5


# ----------------------------------------------------------------------------- Lucky bird


def test_lucky_bird_at_the_start():
    """Special Cases (Lucky bird): a card matching the starting order scores at once."""
    _, state, calls = start(deck=make_deck([("x",) and ANA_CARD], [BEN_CARD]))
    assert types(calls) == ["game_started", "lucky_bird"]
    assert calls[1].player == "Ana" and calls[1].reason == "start"
    assert state.player("Ana").score == 1


def test_lucky_bird_after_a_dead_end():
    """Special Cases (Lucky bird): after the dead-end move, a matching card scores at once."""
    ref, state, _ = start(deck=make_deck([("blue", "green", "red")], [BEN_CARD]))
    state, _ = ref.apply(state, Tick(t=20.0))
    state, calls = ref.apply(state, board(21.0, "..byrkg"))
    assert types(calls) == ["dead_end_corrected", "lucky_bird"]
    assert calls[1] == LuckyBird(
        t=21.0, player="Ben", card=BEN_CARD, score=1, next_card=state.player("Ben").active, reason="dead_end"
    )


def test_lucky_bird_after_an_opponents_mistake():
    """Special Cases (Lucky bird): an opponent's wrong claim leaves an order matching my card:
    I score at once."""
    ref, state, _ = start(deck=make_deck([("blue", "green", "red")], [("yellow", "red", "black")]))
    state, _ = ref.apply(state, board(1.0, ".gbkry."))  # first three: yellow red black (swap)
    state, calls = ref.apply(state, Claim(t=1.2, player="Ana"))
    assert types(calls) == ["penalty", "lucky_bird"]
    assert calls[1].player == "Ben" and calls[1].reason == "mistake"


def test_lucky_bird_after_an_illegal_move():
    """Special Cases (Lucky bird) + ruling (docs/vocabulary.md): an illegal move is a mistake too."""
    ref, state, _ = start(deck=make_deck([("blue", "green", "red")], [("red", "yellow", "black")]))
    state, calls = ref.apply(state, board(1.0, ".gbkyr."))  # 3 horses rotated
    assert types(calls) == ["illegal_move", "lucky_bird"]


# ------------------------------------------------------------------------ Advanced rules


def test_advanced_rules_an_opponents_card_counts():
    """Advanced Rules: every face-up card on the table counts, an opponent's too; the
    claimer wins it and its owner draws a new one."""
    pile_top = ("blue", "green", "red")
    ref, state, _ = start(
        position=Position.from_text(".gbykr."),
        deck=make_deck([("green", "yellow", "blue")], [BEN_CARD, ANA_CARD], [pile_top]),
        advanced=True,
    )
    state, _ = ref.apply(state, board(1.0, ".gbyrk."))
    state, calls = ref.apply(state, Claim(t=1.2, player="Ana"))
    assert types(calls) == ["point"] and calls[0].owner == "Ben" and calls[0].card == ANA_CARD
    assert state.player("Ana").won == (ANA_CARD,)
    assert state.player("Ben").face_up[1] == pile_top


def test_basic_rules_an_opponents_card_does_not_count():
    """Basic rules (ruling; docs/vocabulary.md): only the claimer's top face-up card counts."""
    ref, state, _ = start(
        position=Position.from_text(".gbykr."),
        deck=make_deck([("green", "yellow", "blue")], [BEN_CARD, ANA_CARD]),
    )
    state, _ = ref.apply(state, board(1.0, ".gbyrk."))
    state, calls = ref.apply(state, Claim(t=1.2, player="Ana"))
    assert types(calls) == ["penalty"]


# ------------------------------------------------------------------------- the camera's card


def test_card_seen_corrects_the_tracked_card_and_keeps_sixty_cards():
    """A real deck is not seeded: the camera's reading of a player's card wins."""
    ref, state, _ = start(position=Position.from_text(".gbykr."), deck=make_deck([BEN_CARD], [("blue", "green", "red")]))
    pile_card = state.draw_pile[5]
    state, calls = ref.apply(state, CardSeen(t=1.0, player="Ana", card=pile_card))
    assert calls == [CardCorrected(t=1.0, player="Ana", was=BEN_CARD, now=pile_card)]
    assert state.player("Ana").active == pile_card
    everything = [c for p in state.players for c in p.face_up + p.won] + list(state.draw_pile)
    assert sorted(everything) == sorted(CARDS)


def test_card_seen_that_is_another_players_card_in_play_is_rejected():
    ref, state, _ = start(deck=make_deck([("blue", "green", "red")], [BEN_CARD]))
    new, calls = ref.apply(state, CardSeen(t=1.0, player="Ana", card=BEN_CARD))
    assert isinstance(calls[0], InvalidObservation) and "Ben" in calls[0].reason
    assert new == state


def test_card_seen_tracked_further_down_another_row_swaps_with_the_tracked_one():
    """Ruling (docs/vocabulary.md): the camera reads only each player's card in play; a card
    tracked lower in another player's row was a guess of the physical deck's order, so it
    changes places with the card tracked as this player's."""
    ref, state, _ = start(deck=make_deck([("blue", "green", "red")], [BEN_CARD]))
    ben_second = state.player("Ben").face_up[1]
    ana_was = state.player("Ana").active
    state, calls = ref.apply(state, CardSeen(t=1.0, player="Ana", card=ben_second))
    assert calls == [CardCorrected(t=1.0, player="Ana", was=ana_was, now=ben_second)]
    assert state.player("Ana").active == ben_second
    assert state.player("Ben").face_up[:2] == (BEN_CARD, ana_was)
    everything = [c for p in state.players for c in p.face_up + p.won] + list(state.draw_pile)
    assert sorted(everything) == sorted(CARDS)


def test_game_started_lists_each_active_card():
    _, state, calls = start(seed=11)
    assert isinstance(calls[0], GameStarted)
    assert calls[0].cards == {p.name: p.active for p in state.players}


def test_purity_apply_does_not_change_its_argument():
    """Referees are pure (ruling; docs/vocabulary.md): apply returns a new state and leaves the old one."""
    ref, state, _ = start(position=Position.from_text(".gbykr."), deck=make_deck([ANA_CARD], [BEN_CARD]))
    before = state
    copy = (state.players, state.draw_pile, state.position, state.clock_start)
    ref.apply(state, board(1.0, ".gbyrk."))
    ref.apply(state, Claim(t=1.0, player="Ana"))
    assert (before.players, before.draw_pile, before.position, before.clock_start) == copy


def test_penalty_call_reports_what_was_seen():
    ref, state, _ = start(deck=make_deck([("blue", "green", "red")], [BEN_CARD]))
    _, calls = ref.apply(state, Claim(t=1.0, player="Ana"))
    assert calls == [
        Penalty(t=1.0, player="Ana", card=("blue", "green", "red"), first_three=ANA_CARD, lost_card=None, score=0)
    ]


def test_illegal_move_call_has_before_and_after():
    ref, state, _ = start(deck=make_deck([("blue", "green", "red")], [BEN_CARD]))
    _, calls = ref.apply(state, board(1.0, ".gbkyr."))
    assert calls[0] == IllegalMove(
        t=1.0, before=START.spaces, after=Position.from_text(".gbkyr.").spaces, reason=calls[0].reason
    )


def test_dead_end_corrected_call():
    ref, state, _ = start(deck=make_deck([("blue", "green", "red")], [("yellow", "green", "red")]))
    state, _ = ref.apply(state, Tick(t=20.0))
    _, calls = ref.apply(state, board(21.0, "..byrkg"))
    assert calls == [DeadEndCorrected(t=21.0, spaces=Position.from_text("..byrkg").spaces)]
    assert DeadEndNotCorrected.TYPE == "dead_end_not_corrected"
