"""Carrossel rules, one test (or more) per rule, each naming its rulebook section.

Rulebook: shared/rules/carrossel.txt. The worked examples of the rulebook are tests named
``test_example_*``. Game data: calibration/carrossel.toml, whose 4-player side is the physical
table the camera reads (shared/data/carrossel-table/README.md): seen from above with the zero
mark up, sector A on top, D right, C below, B left (A, D, C, B clockwise), each a 4 x 3 grid of
its own with bare board between the sectors:

                A12 A11 A10 A9
                A8  A7  A6  A5
                A4  A3  A2  A1
    B9  B5  B1                  D4  D8  D12
    B10 B6  B2                  D3  D7  D11
    B11 B7  B3                  D2  D6  D10
    B12 B8  B4                  D1  D5  D9
                C1  C2  C3  C4
                C5  C6  C7  C8
                C9  C10 C11 C12

Seats (4 players, clockwise): Ana before A at setup, Ben before D, Cleo before C, Dev before B;
a clockwise quarter turn gives each the sector of the player before them (Ana: B).

On that table no cell has a neighbour in another sector, so the rulebook's examples of a
sequence or objective set across two sectors are tested on a board whose sectors touch (the
fixture ``touching_sectors``: the 8 x 8 disc assumed before the table was matched).

Client ids (assumed values): tiger 1-4 (1 VP), 5-7 (2), 8-9 (3); fish 10-13, 14-16, 17-18;
swan 19-22, 23-25, 26-27; horse 28-31, 32-34, 35-36; the Dragon 37.
"""

from __future__ import annotations

import dataclasses
import itertools
import re

import pytest

from companion.events import InvalidObservation
from companion.games.carrossel import (
    ANIMALS,
    DEFAULT_DATA,
    AbilityUsed,
    BoardAligned,
    BoardTurned,
    BoardTurnedOk,
    CarrosselReferee,
    Choose,
    GameOver,
    GameStart,
    IllegalPlay,
    PlayObserved,
    PlayReceived,
    Revealed,
    RotationReversed,
    RoundStarted,
    Scored,
    SequenceOptions,
    StateError,
    TurnBoard,
    WrongTurn,
    can_play,
    check_invariants,
    final_scores,
    judge_turn,
    legal_plays,
    player_sectors,
    scoring_options,
    sectors_facing,
    table_from_json,
)

REF = CarrosselReferee()
DATA = REF.data
NAMES = ("Ana", "Ben", "Cleo", "Dev")
SIDE4 = DATA.boards["four"]

# A 4-player side whose sectors touch (the disc assumed before the side was matched to the
# physical table), sectors A, B, C, D clockwise, seats before A, B, C, D: the rules of a
# sequence or an objective set across sectors, which the physical table cannot show.
TOUCHING_BOARD = """[board.four]
sectors = ["A", "B", "C", "D"]
bearing_deg = { A = 315, B = 45, C = 135, D = 225 }
grid = [
  "  .   .  A1  A2 B10  B6   .   .",
  "  .  A3  A4  A5 B11  B7  B3   .",
  " A6  A7  A8  A9 B12  B8  B4  B1",
  "A10 A11 A12   .   .  B9  B5  B2",
  " D2  D5  D9   .   . C12 C11 C10",
  " D1  D4  D8 D12  C9  C8  C7  C6",
  "  .  D3  D7 D11  C5  C4  C3   .",
  "  .   .  D6 D10  C2  C1   .   .",
]

"""


@pytest.fixture
def touching_sectors(tmp_path, monkeypatch):
    """Swap this module's referee for one on :data:`TOUCHING_BOARD` (the shipped game data
    otherwise), for the test's duration."""
    text = DEFAULT_DATA.read_text(encoding="utf-8")
    start, end = text.index("[board.four]"), text.index("[board.three]")
    text = text[:start] + TOUCHING_BOARD + text[end:]
    text, n4 = re.subn(r"(?m)^four = \[.*\]$", "four = [315, 45, 135, 225]", text)
    text, n2 = re.subn(r"(?m)^two = \[.*\]$", "two = [90, 270]", text)
    assert (n4, n2) == (1, 1)
    path = tmp_path / "carrossel.toml"
    path.write_text(text, encoding="utf-8")
    ref = CarrosselReferee(data=str(path))
    side = ref.data.boards["four"]
    assert any(len({side.cells[i].sector for i in t}) > 1 for t in side.lines)
    monkeypatch.setitem(globals(), "REF", ref)
    monkeypatch.setitem(globals(), "DATA", ref.data)
    monkeypatch.setitem(globals(), "SIDE4", side)
    return ref


def start(n: int = 4, seed: int = 1, **kw):
    state, calls = REF.apply(
        REF.initial_state(), GameStart(t=0.0, players=NAMES[:n], seed=seed, **kw)
    )
    assert state.phase == "play", calls
    return state


def arrange(
    state, *, board=None, booths=None, won=None, standees=None, deck_top=(), round=2, **replace
):
    """Put tiles on the board (from their owners' supply), clients in booths / won piles
    (moved from wherever they were), standees on tiles; keep every invariant."""
    side = DATA.boards[state.side]
    booths, won, standees = booths or {}, won or {}, standees or {}
    wanted = set(itertools.chain(*booths.values(), *won.values(), deck_top))
    deck = [c for c in state.deck if c not in wanted]
    players = []
    for p in state.players:
        booth = tuple(c for c in p.booth if c not in wanted)
        queue = tuple(c for c in p.queue if c not in wanted)
        if p.name in booths:
            deck += booth
            booth = tuple(booths[p.name])
        players.append(
            dataclasses.replace(p, booth=booth, queue=queue, won=p.won + tuple(won.get(p.name, ())))
        )
    for k, p in enumerate(players):
        booth = list(p.booth)
        while len(booth) < 3:
            booth.append(deck.pop(0))
        players[k] = dataclasses.replace(p, booth=tuple(booth))
    tiles = list(state.tiles)
    st = list(state.standees)
    by_colour = {p.colour: k for k, p in enumerate(players)}
    for name, text in (board or {}).items():
        colour, animal = text.split()
        i = side.by_name[name]
        assert tiles[i] is None, name
        tiles[i] = (colour, animal)
        k = by_colour[colour]
        counts = list(players[k].tiles)
        counts[ANIMALS.index(animal)] -= 1
        players[k] = dataclasses.replace(players[k], tiles=tuple(counts))
    for name, ids in standees.items():
        st[side.by_name[name]] = tuple(ids)
    state = dataclasses.replace(
        state,
        players=tuple(players),
        deck=tuple(deck_top) + tuple(deck),
        tiles=tuple(tiles),
        standees=tuple(st),
        round=round,
        **replace,
    )
    check_invariants(DATA, state)
    return state


def play_all(state, t: float = 1.0, **plays):
    """Every player plays; ``plays[name] = (slot, animals[, ability[, ticket]])``; the others
    play their first legal play without an ability (slot 1, a tiger)."""
    calls = []
    for p in state.players:
        if p.name in plays:
            spec = plays[p.name]
            animals = (spec[1],) if isinstance(spec[1], str) else tuple(spec[1])
            obs = PlayObserved(
                t=t,
                player=p.name,
                slot=spec[0],
                animals=animals,
                ability=spec[2] if len(spec) > 2 else None,
                ticket=spec[3] if len(spec) > 3 else None,
            )
        else:
            first = legal_plays(DATA, state, p.name, abilities=False)[0]
            obs = PlayObserved(t=t, player=p.name, slot=first.slot, animals=first.animals)
        state, more = REF.apply(state, obs)
        calls += more
    return state, calls


def of(calls, kind):
    return [c for c in calls if isinstance(c, kind)]


def cell(state, name):
    i = DATA.boards[state.side].by_name[name]
    return state.tiles[i], state.standees[i]


def won(state, name):
    return state.player(name).won


# ------------------------------------------------------------------------------- Setup


def test_setup_four_players_booths_tiles_slot_cards_objectives():
    """Setup 4-8: 14 tiles and 12 slot cards each, 3 clients per booth, 4 objectives."""
    s = start(4)
    for p in s.players:
        assert sum(p.tiles) == 14 and p.tiles == (3, 3, 3, 3, 2)
        assert sorted(p.slots) == list(range(1, 13))
        assert len(p.booth) == 3 and p.queue == ()
    assert len(s.objectives) == 4 and len(set(s.objectives)) == 4
    assert len(s.deck) == 37 - 12
    # The physical table: seats clockwise before A, D, C, B (the letters run counter-clockwise).
    assert player_sectors(DATA, s) == {"Ana": ("A",), "Ben": ("D",), "Cleo": ("C",), "Dev": ("B",)}
    check_invariants(DATA, s)


def test_setup_dragon_client_in_the_middle_of_the_deck():
    """Setup 5: the Dragon client is put in the middle of the shuffled deck before the booths."""
    for seed in range(5):
        s = start(4, seed=seed)
        assert s.deck.index(DATA.dragon) == 37 // 2 - 12


def test_setup_given_deck_and_objectives_are_used_as_read():
    """Setup 5 and 8, as read from a real table: the deck order and the objectives given."""
    deck = tuple(range(37, 0, -1))
    s = start(4, seed=None, clients=deck, objectives=(1, 5, 9, 13))
    assert s.player("Ana").booth == (37, 36, 35) and s.objectives == (1, 5, 9, 13)


def test_setup_bad_deck_is_rejected():
    """Setup 5: the deck must be the game's client cards once each."""
    s, calls = REF.apply(
        REF.initial_state(),
        GameStart(t=0, players=NAMES, clients=(1, 1, 2), objectives=(1, 2, 3, 4)),
    )
    assert s.phase == "waiting" and "clients" in of(calls, InvalidObservation)[0].reason


def test_two_players_setup_removes_marked_clients_and_adds_a_queue():
    """Rules for 2 Players, Setup: marked clients removed, a queue of 3, two sectors each."""
    s = start(2)
    marked = {c.id for c in DATA.clients.values() if c.two_player_removed}
    assert set(s.boxed) == marked
    for p in s.players:
        assert len(p.booth) == 3 and len(p.queue) == 3
    # The physical table (the two-player seats ASSUMED): A and D, then C and B, clockwise.
    assert player_sectors(DATA, s) == {"Ana": ("A", "D"), "Ben": ("C", "B")}
    check_invariants(DATA, s)


def test_three_players_setup_neutral_tiles_on_unnumbered_slots():
    """Rules for 3 Players, Setup: 3-player side, the 12 non-Dragon tiles of the unused colour
    on the un-numbered slots, its Dragons in the box."""
    s = start(3)
    side = DATA.boards["three"]
    assert s.side == "three" and s.neutral == "green"
    neutral = [s.tiles[c.index] for c in side.cells if c.slot is None]
    assert (
        all(t is not None and t[0] == "green" and t[1] != "dragon" for t in neutral)
        and len(neutral) == 12
    )
    assert ("green", "dragon", 2) in s.box_tiles
    check_invariants(DATA, s)


# ----------------------------------------------------------------------- Phase 1 - Play


def test_phase1_first_round_only_slots_4_5_9_10():
    """Phase 1 - Play: in the first round only slots 4, 5, 9 or 10."""
    s = start(4)
    s2, calls = REF.apply(s, PlayObserved(t=1, player="Ana", slot=3, animals=("fish",)))
    assert s2 is s and "first round" in of(calls, IllegalPlay)[0].reason
    _, calls = REF.apply(s, PlayObserved(t=1, player="Ana", slot=9, animals=("fish",)))
    assert of(calls, PlayReceived)


def test_three_players_first_move_not_restricted():
    """Rules for 3 Players, Play: the first move need not be on 4, 5, 9 or 10."""
    s = start(3)
    _, calls = REF.apply(s, PlayObserved(t=1, player="Ana", slot=3, animals=("fish",)))
    assert of(calls, PlayReceived)


def test_phase1_simultaneous_reveal_places_nothing_before_everyone_played():
    """Phase 1 - Play, 1-2: choices are face down until all reveal at once."""
    s = start(4)
    s, calls = REF.apply(s, PlayObserved(t=1, player="Ana", slot=9, animals=("fish",)))
    assert cell(s, "A9")[0] is None and of(calls, PlayReceived)[0].waiting_for == (
        "Ben",
        "Cleo",
        "Dev",
    )
    s2, calls = REF.apply(s, PlayObserved(t=2, player="Ana", slot=4, animals=("fish",)))
    assert s2 is s and "already played" in of(calls, IllegalPlay)[0].reason
    s, calls = play_all(s, t=3, Ben=(4, "horse"), Cleo=(5, "swan"), Dev=(10, "tiger"))
    rev = of(calls, Revealed)[0]
    assert rev.cells == {"Ana": ("A9",), "Ben": ("D4",), "Cleo": ("C5",), "Dev": ("B10",)}
    assert cell(s, "A9")[0] == ("red", "fish") and s.player("Ana").tiles[ANIMALS.index("fish")] == 2


def test_phase1_discarded_slot_card_cannot_be_played():
    """Phase 1 - Play, 3: a played slot card is discarded and cannot be played again."""
    s = start(4)
    s, _ = play_all(s, Ana=(9, "fish"))
    assert 9 in s.player("Ana").slots_played and 9 not in s.player("Ana").slots
    s, _ = REF.apply(s, BoardTurned(t=2, angle_deg=90))
    _, calls = REF.apply(s, PlayObserved(t=3, player="Ana", slot=9, animals=("fish",)))
    assert "discard pile" in of(calls, IllegalPlay)[0].reason


def test_phase1_slot_must_be_unoccupied():
    """Phase 1 - Play: the number must match an unoccupied slot of your sector."""
    s = arrange(start(4), board={"A7": "blue tiger"})
    _, calls = REF.apply(s, PlayObserved(t=1, player="Ana", slot=7, animals=("fish",)))
    assert "occupied" in of(calls, IllegalPlay)[0].reason


def test_phase1_a_tile_the_player_does_not_have():
    """Game Components / Phase 1: a player plays only their own remaining tiles (2 Dragons)."""
    s = arrange(start(4), board={"A1": "red dragon", "A2": "red dragon"})
    _, calls = REF.apply(s, PlayObserved(t=1, player="Ana", slot=7, animals=("dragon",)))
    assert "0 dragon tile(s) left" in of(calls, IllegalPlay)[0].reason
    _, calls = REF.apply(s, PlayObserved(t=1, player="Ana", slot=7, animals=("unicorn",)))
    assert "unknown animal" in of(calls, IllegalPlay)[0].reason


def test_phase1_unknown_player_is_invalid_observation():
    """Bad input: a player not in the game is an invalid observation, the state unchanged."""
    s = start(4)
    s2, calls = REF.apply(s, PlayObserved(t=1, player="Zoe", slot=9, animals=("fish",)))
    assert s2 is s and "unknown player" in of(calls, InvalidObservation)[0].reason


def test_two_players_one_slot_card_two_tiles():
    """Rules for 2 Players, Play: two tiles, one per sector, on the slot of ONE slot card."""
    s = start(2)
    _, calls = REF.apply(s, PlayObserved(t=1, player="Ana", slot=9, animals=("fish",)))
    assert "expected 2 animal tile(s)" in of(calls, IllegalPlay)[0].reason
    s, calls = play_all(s, Ana=(9, ("fish", "horse")), Ben=(4, ("swan", "swan")))
    assert of(calls, Revealed)[0].cells == {"Ana": ("A9", "D9"), "Ben": ("C4", "B4")}
    assert s.player("Ana").slots_played == (9,)


# ---------------------------------------------------------------------- Phase 2 - Score


def test_example_red_blue_scoring():
    """Phase 2 - Score, first example: red's sequence; blue gets the 1 VP tiger, red the fish
    and horse (2 + 1 VP)."""
    s = arrange(start(4), board={"A6": "red fish", "A7": "blue tiger"}, booths={"Ana": (2, 15, 29)})
    s, calls = play_all(s, Ana=(8, "horse"))
    scored = of(calls, Scored)
    assert len(scored) == 1 and scored[0].player == "Ana" and scored[0].phase == 2
    assert scored[0].awards == {"2": "A7>Ben", "15": "A6>Ana", "29": "A8>Ana"}
    assert sum(DATA.clients[c].vp for c in won(s, "Ana")) == 3
    assert sum(DATA.clients[c].vp for c in won(s, "Ben")) == 1
    assert cell(s, "A7")[1] == (2,) and cell(s, "A8")[1] == (29,)
    assert len(s.player("Ana").booth) == 3 and not set(s.player("Ana").booth) & {2, 15, 29}


def test_example_sequence_partly_in_another_sector(touching_sectors):
    """Phase 2 - Score, second example: a valid sequence in red's sector with two of its
    tiles in another sector (at least ONE tile in the sector). On a board whose sectors touch:
    the physical table has no such sequence (test_no_sequence_spans_two_sectors_on_the_table)."""
    s = arrange(
        start(4),
        board={"B12": "blue tiger", "B8": "green horse"},
        booths={"Ana": (2, 15, 29), "Ben": (19, 20, 21)},
    )
    s, calls = play_all(s, Ana=(9, "fish"))
    scored = of(calls, Scored)
    assert [x.player for x in scored] == ["Ana"] and set(scored[0].cells) == {"A9", "B12", "B8"}


def test_phase2_sequence_needs_a_tile_in_the_sector():
    """Phase 2 - Score: a sequence wholly in another sector is not valid for you."""
    s = arrange(
        start(4),
        board={"B12": "blue tiger", "B8": "green horse", "B4": "yellow fish"},
        booths={"Ana": (2, 15, 29), "Ben": (19, 20, 21)},
    )
    _, calls = play_all(s, Ana=(1, "swan"))
    assert not of(calls, Scored)


def test_example_horses_and_swan_the_sector_player_chooses_recipients():
    """Phase 2 - Score, third example and Who decides: 2 horses + 1 swan; the swan goes to
    red, the horses to blue or yellow as red chooses."""
    s = arrange(
        start(4), board={"A6": "blue horse", "A7": "yellow horse"}, booths={"Ana": (29, 33, 20)}
    )
    s, calls = play_all(s, Ana=(8, "swan"))
    opts = of(calls, SequenceOptions)
    assert len(opts) == 1 and opts[0].player == "Ana" and len(opts[0].options) == 2
    assert s.phase == "score" and not of(calls, Scored)
    k = next(i for i, o in enumerate(opts[0].options, 1) if "horse#33>Cleo" in o)
    s2, calls = REF.apply(s, Choose(t=5, player="Ben", option=1))
    assert s2 is s and of(calls, InvalidObservation)
    s, calls = REF.apply(s, Choose(t=5, player="Ana", option=k))
    assert of(calls, Scored)[0].awards == {"29": "A6>Ben", "33": "A7>Cleo", "20": "A8>Ana"}
    assert 33 in won(s, "Cleo") and 29 in won(s, "Ben") and 20 in won(s, "Ana")


def test_phase2_identical_clients_give_no_choice():
    """Who decides: when the recipients make no difference (two identical 1 VP horses), there
    is one option and it is scored at once."""
    s = arrange(
        start(4), board={"A6": "blue horse", "A7": "yellow horse"}, booths={"Ana": (29, 30, 20)}
    )
    s, calls = play_all(s, Ana=(8, "swan"))
    assert not of(calls, SequenceOptions) and len(of(calls, Scored)) == 1


def test_example_choosing_sequence_a_or_b():
    """Choosing a sequence: the sector's player scores EITHER sequence A or sequence B."""
    s = arrange(
        start(4),
        board={"A6": "blue tiger", "A7": "yellow fish", "A4": "green tiger", "A12": "blue fish"},
        booths={"Ana": (6, 15, 33)},
    )
    s, calls = play_all(s, Ana=(8, "horse"))
    options = of(calls, SequenceOptions)[0].options
    assert len(options) == 2
    # The column A4 A8 A12 (the table's column c = 3), whatever order the text lists it in.
    k = next(i for i, o in enumerate(options, 1) if set(o.split(":")[0].split()) == {"A4", "A8", "A12"})
    s, calls = REF.apply(s, Choose(t=5, player="Ana", option=k))
    assert set(of(calls, Scored)[0].cells) == {"A4", "A8", "A12"}
    assert cell(s, "A6")[1] == () and cell(s, "A7")[1] == ()  # sequence A not scored
    s2, calls = REF.apply(s, Choose(t=6, player="Ana", option=1))
    assert s2 is s and of(calls, InvalidObservation)


def test_example_two_standees_on_one_tile_five_steps(touching_sectors):
    """Two standees on one tile, steps 1-5: red's fish is in red's sequence and in yellow's;
    yellow chooses (blue: tiger, yellow: 2 VP fish, red: 1 VP fish); red has no choice (blue:
    tiger, red: fish and 2 VP horse); red gets 2 fish clients for the same tile. On a board
    whose sectors touch (one tile in two sectors' sequences cannot happen on the table)."""
    s = start(4, colours=("red", "yellow", "blue", "green"))
    s = arrange(
        s,
        board={"A7": "blue tiger", "A8": "red horse", "B12": "yellow fish", "B8": "blue tiger"},
        booths={"Ana": (2, 11, 33), "Ben": (3, 15, 12)},
    )
    s, calls = play_all(s, Ana=(9, "fish"))
    # Step 1-2: the fish is in both; yellow has up to 3 clients for it: a choice for yellow.
    opts = of(calls, SequenceOptions)
    assert [o.player for o in opts] == ["Ben"] and len(opts[0].options) == 2
    # Step 3: yellow decides.
    k = next(i for i, o in enumerate(opts[0].options, 1) if "fish#15>Ben" in o)
    s, calls = REF.apply(s, Choose(t=5, player="Ben", option=k))
    by_player = {x.player: x for x in of(calls, Scored)}
    assert by_player["Ben"].awards == {"3": "B8>Cleo", "15": "B12>Ben", "12": "A9>Ana"}
    # Step 4: red had no choice.
    assert by_player["Ana"].awards == {"2": "A7>Cleo", "11": "A9>Ana", "33": "A8>Ana"}
    # Step 5: two standees on red's fish; red holds two fish clients for it.
    assert sorted(cell(s, "A9")[1]) == [11, 12]
    assert sorted(won(s, "Ana")) == [11, 12, 33] and sorted(won(s, "Cleo")) == [2, 3]
    check_invariants(DATA, s)


def test_phase2_tile_with_a_standee_cannot_be_in_a_sequence():
    """Two standees on one tile, note: a tile that already has a standee is not free."""
    s = arrange(
        start(4),
        board={"A6": "red fish", "A7": "blue tiger"},
        booths={"Ana": (2, 15, 29)},
        won={"Ana": (10,)},
        standees={"A6": (10,)},
    )
    _, calls = play_all(s, Ana=(8, "horse"))
    assert not of(calls, Scored)


def test_phase2_only_rows_and_columns_never_diagonal_or_l():
    """Phase 2 - Score: a sequence is in a row or column, never diagonal or an "L"."""
    booth = (2, 15, 29)
    side = SIDE4
    tiles = [None] * len(side.cells)
    # The table's sector A: A1 A6 A11 a diagonal, A5 A1 A6 an "L" (corner A5).
    diagonal = {"A1": ("blue", "tiger"), "A6": ("red", "fish"), "A11": ("red", "horse")}
    ell = {"A1": ("blue", "tiger"), "A5": ("red", "fish"), "A6": ("red", "horse")}
    assert tuple(sorted(side.by_name[n] for n in diagonal)) in side.diagonals
    assert tuple(sorted(side.by_name[n] for n in ell)) in side.l_shapes
    owner = {"red": "Ana", "blue": "Ben"}
    for shape in (diagonal, ell):
        tiles = [None] * len(side.cells)
        for name, t in shape.items():
            tiles[side.by_name[name]] = t
        assert scoring_options(DATA, side, tiles, [()] * len(tiles), booth, ["A"], owner) == []
    # The same three tiles in a row (A1 A2 A3) are a sequence.
    tiles = [None] * len(side.cells)
    for name, t in zip(("A1", "A2", "A3"), diagonal.values()):
        tiles[side.by_name[name]] = t
    assert len(scoring_options(DATA, side, tiles, [()] * len(tiles), booth, ["A"], owner)) == 1


def test_phase2_dragon_tiles_are_jokers_several_allowed():
    """Dragon Animal tile: a joker for one animal each; a sequence may hold several."""
    s = arrange(
        start(4), board={"A6": "blue dragon", "A7": "yellow dragon"}, booths={"Ana": (2, 15, 29)}
    )
    s, calls = play_all(s, Ana=(8, "horse"))
    assert of(calls, SequenceOptions) or of(calls, Scored)


def test_phase2_dragon_standee_only_on_a_dragon_tile():
    """Dragon Client standee: only on a Dragon tile."""
    side = SIDE4
    owner = {"red": "Ana", "blue": "Ben"}
    tiles = [None] * len(side.cells)
    for name, t in {"A6": ("blue", "tiger"), "A7": ("red", "fish"), "A8": ("red", "horse")}.items():
        tiles[side.by_name[name]] = t
    assert scoring_options(DATA, side, tiles, [()] * len(tiles), (2, 15, 37), ["A"], owner) == []
    tiles[side.by_name["A8"]] = ("red", "dragon")
    opts = scoring_options(DATA, side, tiles, [()] * len(tiles), (2, 15, 37), ["A"], owner)
    assert len(opts) == 1 and (side.by_name["A8"], 37) in opts[0].awards


def test_phase2_scoring_is_compulsory_and_booths_are_refilled():
    """Phase 2 - Score, 1 and 3: a valid sequence must be scored; the booth gets 3 again."""
    s = arrange(start(4), board={"A6": "red fish", "A7": "blue tiger"}, booths={"Ana": (2, 15, 29)})
    deck_top = s.deck[:3]
    s, calls = play_all(s, Ana=(8, "horse"))
    assert s.player("Ana").booth == deck_top
    assert s.phase == "rotate" and of(calls, TurnBoard)


def test_three_players_clients_won_by_neutral_leave_the_game():
    """Rules for 3 Players, Play: neutral tiles make sequences; their clients go to the box."""
    neutral = ("tiger", "fish", "swan", "horse") * 3
    s = start(3, neutral=neutral)
    side = DATA.boards["three"]
    # An1 (5,7) is neutral; above it A5 (4,7) and A4 (3,7): a column.
    n_animal = s.tiles[side.by_name["An1"]][1]
    s = arrange(
        s,
        board={"A4": "blue tiger"},
        booths={"Ana": (2, {"tiger": 10, "fish": 11, "swan": 20, "horse": 30}[n_animal], 15)},
    )
    s, calls = play_all(s, Ana=(5, "fish"))
    scored = of(calls, Scored)
    assert scored and any(v.endswith(">neutral") for v in scored[0].awards.values())
    lost = [int(c) for c, v in scored[0].awards.items() if v.endswith(">neutral")]
    assert set(lost) <= set(s.boxed) and not set(lost) & set(won(s, "Ana") + won(s, "Ben"))
    check_invariants(DATA, s)


# --------------------------------------------------------- Phase 3 - Rotate / 4 - Score


def test_phase3_quarter_turn_clockwise_gives_new_sectors():
    """Phase 3 - Rotate (Setup 2: the roof points clockwise): a quarter turn; each player has
    a new sector; Phase 4 scores on it; then a new round."""
    s, calls = play_all(start(4), Ana=(9, "fish"))
    tb = of(calls, TurnBoard)[0]
    assert (tb.turn_deg, tb.direction, tb.target_deg) == (90.0, "clockwise", 90.0)
    s, calls = REF.apply(s, BoardTurned(t=2, angle_deg=88.0))
    # The physical table: clockwise, each booth gets the sector that faced the booth
    # counter-clockwise of it (A -> B -> C -> D at any one booth).
    assert of(calls, BoardTurnedOk)[0].sectors == {
        "Ana": ("B",),
        "Ben": ("A",),
        "Cleo": ("D",),
        "Dev": ("C",),
    }
    rs = of(calls, RoundStarted)[0]
    assert rs.round == 2 and s.phase == "play"


def test_phase3_wrong_direction_and_wrong_amount_are_called():
    """Phase 3 - Rotate: turning the other way or by another amount is called, the game
    waits for the expected angle."""
    s, _ = play_all(start(4), Ana=(9, "fish"))
    s, calls = REF.apply(s, BoardTurned(t=2, angle_deg=271.0))
    w = of(calls, WrongTurn)[0]
    assert w.reason == "wrong_direction" and w.target_deg == 90.0 and s.phase == "rotate"
    s, calls = REF.apply(s, BoardTurned(t=3, angle_deg=180.0))
    assert of(calls, WrongTurn)[0].reason == "wrong_amount"
    s, calls = REF.apply(s, BoardTurned(t=4, angle_deg=5.0))
    assert calls == [] and s.phase == "rotate"  # back where it was: not turned yet
    s, calls = REF.apply(s, BoardTurned(t=5, angle_deg=91.0))
    assert of(calls, BoardTurnedOk) and s.phase == "play"


def test_board_must_not_turn_outside_phase3():
    """Phase 3 - Rotate is the only time the board turns: a turn during play is called, and
    the return to the right angle is confirmed."""
    s = start(4)
    s, calls = REF.apply(s, BoardTurned(t=1, angle_deg=45.0))
    assert of(calls, WrongTurn)[0].reason == "not_now" and of(calls, WrongTurn)[0].target_deg == 0.0
    s, calls = REF.apply(s, BoardTurned(t=2, angle_deg=359.0))
    assert of(calls, BoardAligned)
    s, calls = REF.apply(s, BoardTurned(t=3, angle_deg=180.0, uncertain=True))
    assert calls == []


def test_three_players_third_turn_and_two_players_half_turn():
    """Phase 3 - Rotate on the 3-player side (a third) and Rules for 2 Players, Rotate (180)."""
    s, calls = play_all(start(3), Ana=(3, "fish"))
    assert of(calls, TurnBoard)[0].turn_deg == 120.0
    s, calls = REF.apply(s, BoardTurned(t=2, angle_deg=90.0))
    assert of(calls, WrongTurn)[0].reason == "wrong_amount"
    s, calls = play_all(start(2), Ana=(9, ("fish", "fish")))
    assert of(calls, TurnBoard)[0].turn_deg == 180.0
    s, calls = REF.apply(s, BoardTurned(t=2, angle_deg=181.0))
    assert of(calls, BoardTurnedOk)[0].sectors == {"Ana": ("C", "B"), "Ben": ("A", "D")}


def test_dragon_client_appearing_reverses_the_rotation():
    """Reverse rotation (Dragon): as soon as the Dragon appears at a booth, the board turns
    the other way (the roof is flipped)."""
    s = arrange(
        start(4),
        board={"A6": "red fish", "A7": "blue tiger"},
        booths={"Ana": (2, 15, 29)},
        deck_top=(37,),
    )
    s, calls = play_all(s, Ana=(8, "horse"))
    assert of(calls, RotationReversed)[0].direction == "counterclockwise"
    tb = of(calls, TurnBoard)[0]
    assert tb.turn_deg == -90.0 and tb.target_deg == 270.0
    s, calls = REF.apply(s, BoardTurned(t=2, angle_deg=90.0))
    assert of(calls, WrongTurn)[0].reason == "wrong_direction"
    s, calls = REF.apply(s, BoardTurned(t=3, angle_deg=270.0))
    assert of(calls, BoardTurnedOk)[0].sectors["Ana"] == ("D",)  # the table: A -> D counter-clockwise


def test_two_players_dragon_ability_is_ignored():
    """Rules for 2 Players, Client card abilities: the Dragon does not reverse the rotation."""
    # Ana's sectors at setup: A and D; A6 A7 A8 scores, the refill draws the Dragon.
    s = arrange(
        start(2),
        board={"A6": "red fish", "A7": "blue tiger"},
        booths={"Ana": (2, 15, 29)},
        deck_top=(37,),
    )
    s, calls = play_all(s, Ana=(8, ("horse", "swan")))
    assert of(calls, Scored) and 37 in s.player("Ana").booth + s.player("Ana").queue
    assert not of(calls, RotationReversed) and s.direction == 1


def test_rotation_sectors_facing_from_an_observed_angle():
    """Phase 3 - Rotate: which sector faces each seat at an angle; ambiguous near a boundary."""
    seats = DATA.seats[4]
    # The physical table: A, D, C, B clockwise before seats 0-3 at setup.
    assert sectors_facing(SIDE4, seats, 0.0) == {"A": 0, "D": 1, "C": 2, "B": 3}
    assert sectors_facing(SIDE4, seats, -90.0) == {"A": 3, "D": 0, "C": 1, "B": 2}
    assert sectors_facing(SIDE4, seats, 44.0, margin_deg=5.0) is None
    assert judge_turn(0, 95, 90, 20).verdict == "done"
    assert judge_turn(350, 80, 90, 20).verdict == "done"  # across 0
    assert judge_turn(0, -90, 90, 20).verdict == "wrong_direction"
    assert judge_turn(0, 45, 90, 20).verdict == "wrong_amount"


# ------------------------------------------------------------------ Client Card abilities


def test_example_jump_slots_8_and_9():
    """Jump (Tiger), the rulebook's example: card 9, slots 8 and 9 occupied, 2, 5, 6, 7 free:
    the tile goes to slot 7."""
    board = {
        f"A{n}": f"{c} tiger"
        for n, c in zip(
            (1, 3, 4, 8, 9, 10, 11, 12),
            ("red", "red", "blue", "blue", "blue", "yellow", "yellow", "yellow"),
        )
    }
    s = arrange(start(4), board=board, booths={"Ana": (20, 21, 22)}, won={"Ana": (5,)})
    s, calls = play_all(s, Ana=(9, "fish", 5))
    assert of(calls, Revealed)[0].cells["Ana"] == ("A7",)
    assert of(calls, AbilityUsed)[0].ability == "jump" and 5 in s.player("Ana").used


def test_jump_needs_an_occupied_slot_and_a_smaller_free_one():
    """Jump (Tiger): for an occupied slot only (ruling), and there must be a smaller free slot."""
    s = arrange(start(4), board={"A1": "red tiger", "A2": "red tiger"}, won={"Ana": (5,)})
    _, calls = REF.apply(s, PlayObserved(t=1, player="Ana", slot=7, animals=("fish",), ability=5))
    assert "free" in of(calls, IllegalPlay)[0].reason
    _, calls = REF.apply(s, PlayObserved(t=1, player="Ana", slot=2, animals=("fish",), ability=5))
    assert "no free slot below 2" in of(calls, IllegalPlay)[0].reason


def test_swan_recovers_discarded_cards():
    """Recover discarded cards (Swan): all discards back except the Swan and the slot card
    just played."""
    s = arrange(start(4), won={"Ana": (5, 24)})
    ana = s.player("Ana")
    ana = dataclasses.replace(
        ana, slots=tuple(n for n in ana.slots if n not in (4, 9)), slots_played=(4, 9), used=(5,)
    )
    s = dataclasses.replace(s, players=(ana,) + s.players[1:])
    s, calls = play_all(s, Ana=(3, "fish", 24))
    ana = s.player("Ana")
    assert ana.slots_played == (3,) and {4, 9} <= set(ana.slots) and ana.used == (24,)
    assert of(calls, AbilityUsed)[0].ability == "recover"
    check_invariants(DATA, s)


def test_horse_single_ticket_takes_a_matching_client_at_once():
    """Single ticket (Horse): the matching client sits on the new tile at once; the booth is
    refilled to 3."""
    s = arrange(start(4), booths={"Ana": (15, 20, 29)}, won={"Ana": (33,)})
    s, calls = play_all(s, Ana=(7, "fish", 33))
    assert cell(s, "A7")[1] == (15,) and 15 in won(s, "Ana") and len(s.player("Ana").booth) == 3
    assert of(calls, AbilityUsed)[0].ability == "single_ticket"


def test_horse_single_ticket_needs_a_match_and_a_choice_when_several():
    """Single ticket (Horse): the tile must match a booth client; with several different
    matches the play names one (``ticket``)."""
    s = arrange(start(4), booths={"Ana": (15, 11, 29)}, won={"Ana": (33,)})
    _, calls = REF.apply(s, PlayObserved(t=1, player="Ana", slot=7, animals=("swan",), ability=33))
    assert "no client" in of(calls, IllegalPlay)[0].reason
    _, calls = REF.apply(s, PlayObserved(t=1, player="Ana", slot=7, animals=("fish",), ability=33))
    assert "several clients match" in of(calls, IllegalPlay)[0].reason
    s, _ = play_all(s, Ana=(7, "fish", 33, 11))
    assert 11 in won(s, "Ana") and 15 in s.player("Ana").booth


def test_fish_removes_standees_before_placing():
    """Remove Clients (Fish): BEFORE placing, standees leave your tiles; they can score again
    in the same round."""
    s = arrange(
        start(4),
        board={"A6": "red fish", "A7": "blue tiger"},
        booths={"Ana": (2, 15, 29)},
        won={"Ana": (10, 11)},
        standees={"A6": (10,)},
    )
    s, calls = play_all(s, Ana=(8, "horse", 11))
    assert of(calls, AbilityUsed)[0].ability == "remove_clients"
    assert set(of(calls, Scored)[0].cells) == {"A6", "A7", "A8"}
    assert cell(s, "A6")[1] == (15,)


def test_ability_card_used_once_and_dragon_not_playable():
    """Client Card abilities: one card per round, discarded after use; the Dragon's ability is
    not played (it acts when it appears)."""
    s = arrange(start(4), won={"Ana": (37,)}, board={"A2": "red dragon"})
    _, calls = REF.apply(s, PlayObserved(t=1, player="Ana", slot=7, animals=("fish",), ability=37))
    assert "Dragon" in of(calls, IllegalPlay)[0].reason
    _, calls = REF.apply(s, PlayObserved(t=1, player="Ana", slot=7, animals=("fish",), ability=5))
    assert "not one of Ana's won clients" in of(calls, IllegalPlay)[0].reason


# --------------------------------------------------------------------- END of the game


def test_end_when_a_player_cannot_match_a_slot_card():
    """END of the game: a player who cannot use any slot card ends the game at once."""
    s = arrange(start(4), board={"B7": "green tiger"})  # B: Ana's sector after the turn
    ana = s.player("Ana")
    ana = dataclasses.replace(
        ana, slots=(7, 8), slots_played=tuple(n for n in range(1, 13) if n not in (7, 8))
    )
    s = dataclasses.replace(s, players=(ana,) + s.players[1:])
    s, _ = play_all(s, Ana=(8, "fish"))
    s, calls = REF.apply(s, BoardTurned(t=2, angle_deg=90))
    over = of(calls, GameOver)[0]
    assert "Ana cannot make a legal move" in over.reason and s.phase == "over"
    _, calls = REF.apply(s, PlayObserved(t=3, player="Ana", slot=7, animals=("fish",)))
    assert "over" in of(calls, InvalidObservation)[0].reason


def test_end_when_a_player_has_no_tiles():
    """END of the game: no animal tiles left is no legal move."""
    s = start(4)
    ana = dataclasses.replace(s.player("Ana"), tiles=(0, 0, 0, 0, 0))
    s = dataclasses.replace(s, players=(ana,) + s.players[1:])
    assert not can_play(DATA, s, "Ana") and can_play(DATA, s, "Ben")


def test_end_when_booths_cannot_be_refilled():
    """END of the game / Phase 2 - Score, 3: not enough clients for 3 at every booth."""
    s = arrange(start(4), board={"A6": "red fish", "A7": "blue tiger"}, booths={"Ana": (2, 15, 29)})
    s = dataclasses.replace(s, deck=s.deck[:2], boxed=s.boxed + s.deck[2:])
    s, calls = play_all(s, Ana=(8, "horse"))
    over = of(calls, GameOver)[0]
    assert "not enough client cards" in over.reason and over.scores["Ana"] >= 3


# ------------------------------------------------- final score, objectives, tie-breaks


def table(players, objectives=(1, 3, 7, 9), board=None):
    return table_from_json(
        DATA, {"players": players, "objectives": list(objectives), "board": board or {}}
    )


def test_end_tie_breaks_vp_then_cards_then_standees_then_shared():
    """END of the game: most VP; tie: most client cards; then most standees on one's tiles;
    then a shared victory."""
    # Ana 3 VP in one card, Ben 3 VP in three cards: Ben wins on cards.
    s = table(
        [
            {"name": "Ana", "colour": "red", "won": [9]},
            {"name": "Ben", "colour": "blue", "won": [2, 3, 4]},
        ],
        objectives=(2, 4, 10, 12),
    )
    assert final_scores(DATA, s)["winners"] == ["Ben"]
    # Same VP and cards: standees decide.
    players = [
        {"name": "Ana", "colour": "red", "won": [6]},
        {"name": "Ben", "colour": "blue", "won": [7]},
    ]
    s = table(
        players,
        (2, 4, 10, 12),
        {"A1": {"tile": "red tiger", "standees": [6]}, "A2": {"tile": "blue tiger"}},
    )
    assert final_scores(DATA, s)["winners"] == ["Ana"]
    s = table(players, (2, 4, 10, 12))
    result = final_scores(DATA, s)
    assert result["winners"] == ["Ana", "Ben"] and [r["rank"] for r in result["players"]] == [1, 1]


def test_objectives_client_kinds_each_card_once():
    """OBJECTIVE cards: 4 VP per set of 4, 3 VP per 3 identical, 1 VP per pair; a card counts
    once per objective card; used cards count too."""
    won = [2, 3, 4, 6, 7, 11, 12, 20, 29]  # 5 tigers, 2 fish, a swan, a horse
    s = table(
        [
            {"name": "Ana", "colour": "red", "won": won, "used": [2, 3]},
            {"name": "Ben", "colour": "blue"},
        ],
        objectives=(1, 3, 7, 9),
    )
    row = final_scores(DATA, s)["players"][0]
    objs = {k.split()[0]: v for k, v in row["objectives"].items()}
    assert objs["#1"] == 4  # one full set of tiger+fish+swan+horse
    assert objs["#3"] == 3  # 5 tigers: one set of three
    assert objs["#7"] == 2 * 1  # tiger+fish pairs: 2 fish
    assert row["clients_vp"] == sum(DATA.clients[c].vp for c in won)
    assert row["total"] == row["clients_vp"] + sum(objs.values())


def test_objectives_tile_shapes_each_tile_once(touching_sectors):
    """OBJECTIVE cards: 3 VP per set of 3 tiles in a row/column, a diagonal, an "L"; across
    sectors; each tile once per card. On a board whose sectors touch (sets across sectors
    cannot happen on the table: test_objectives_tile_shapes_on_the_table)."""
    board = {
        n: {"tile": "red tiger" if k < 3 else "red fish"}
        for k, n in enumerate(["A6", "A7", "A8", "A9", "B12"])
    }
    s = table(
        [{"name": "Ana", "colour": "red"}, {"name": "Ben", "colour": "blue"}],
        objectives=(9, 10, 11, 13),
        board=board,
    )
    objs = {k.split()[0]: v for k, v in final_scores(DATA, s)["players"][0]["objectives"].items()}
    assert objs["#9"] == 3  # 5 in a row: only one disjoint set of 3
    assert objs["#10"] == 3  # three tigers A6-A8 in a row
    assert objs["#11"] == 0 and objs["#13"] == 0
    board = {
        n: {"tile": f"red {a}"}
        for n, a in {
            "A5": "fish",
            "B12": "swan",
            "B9": "horse",
            "A4": "fish",
            "A8": "tiger",
            "A9": "tiger",
        }.items()
    }
    s = table(
        [{"name": "Ana", "colour": "red"}, {"name": "Ben", "colour": "blue"}],
        objectives=(9, 11, 13, 14),
        board=board,
    )
    objs = {k.split()[0]: v for k, v in final_scores(DATA, s)["players"][0]["objectives"].items()}
    assert objs["#11"] == 3  # A5 B12 B9 on a diagonal, across sectors
    assert objs["#13"] == 3  # several "L"s among A4 A5 A8 A9 B12, but no two without a shared tile
    assert objs["#14"] == 0  # no "L" of one animal


@pytest.mark.parametrize(
    "doc, field",
    [
        (
            {
                "players": [
                    {"name": "Ana", "colour": "red", "won": [6]},
                    {"name": "Ben", "colour": "blue", "won": [6]},
                ]
            },
            "won by two players",
        ),
        (
            {
                "players": [
                    {"name": "Ana", "colour": "red", "won": [37]},
                    {"name": "Ben", "colour": "blue"},
                ],
                "board": {"A1": {"tile": "red fish", "standees": [37]}},
            },
            "Dragon client",
        ),
        (
            {
                "players": [{"name": "Ana", "colour": "red"}, {"name": "Ben", "colour": "blue"}],
                "board": {f"A{k}": {"tile": "red dragon"} for k in (1, 2, 3)},
            },
            "more than 2 red dragon",
        ),
        (
            {
                "players": [{"name": "Ana", "colour": "red"}, {"name": "Ben", "colour": "blue"}],
                "board": {"Z9": {"tile": "red fish"}},
            },
            "board.Z9",
        ),
        (
            {
                "players": [{"name": "Ana", "colour": "red"}, {"name": "Ben", "colour": "blue"}],
                "board": {"A1": {"tile": "red fish", "standees": [11]}},
            },
            "not among their won clients",
        ),
        (
            {"players": [{"name": "Ana", "colour": "pink"}, {"name": "Ben", "colour": "blue"}]},
            "players[0].colour",
        ),
        (
            {
                "players": [
                    {"name": "Ana", "colour": "red", "won": [1]},
                    {"name": "Ben", "colour": "blue"},
                ]
            },
            "two-player mark",
        ),
    ],
)
def test_state_file_that_breaks_invariants_is_an_error(doc, field):
    """Bad input: a table that breaks the invariants is an error naming the field."""
    doc = {"objectives": [1, 2, 3, 4], **doc}
    with pytest.raises(StateError, match=re.escape(field)):
        table_from_json(DATA, doc, "end.json")


def test_phase4_scores_in_the_new_sector_after_the_turn():
    """Phase 4 - Score: after the turn each player checks the sector now in front of them."""
    # B: Dev's sector at setup, Ana's after the turn; B4 B8 B12 the table's column c = 3.
    s = arrange(
        start(4),
        board={"B4": "blue tiger", "B8": "yellow fish", "B12": "green horse"},
        booths={"Ana": (2, 15, 29), "Dev": (20, 21, 22)},
    )
    s, calls = play_all(s, Ana=(3, "swan"))
    assert not of(calls, Scored) and s.phase == "rotate"
    s, calls = REF.apply(s, BoardTurned(t=2, angle_deg=90.0))
    scored = of(calls, Scored)
    assert [(x.player, x.phase) for x in scored] == [("Ana", 4)]
    assert scored[0].awards == {"2": "B4>Ben", "15": "B8>Cleo", "29": "B12>Dev"}
    assert of(calls, RoundStarted)[0].round == 3 and s.phase == "play"


def test_no_sequence_spans_two_sectors_on_the_table():
    """Phase 2 - Score / OBJECTIVE cards on the physical table: every sequence, diagonal and
    "L" lies in one sector (no cell has a neighbour in another), so the rulebook's sequences
    across sectors cannot occur there; the rule itself holds (the touching-sectors tests)."""
    for shapes in (SIDE4.lines, SIDE4.diagonals, SIDE4.l_shapes):
        assert shapes and all(len({SIDE4.cells[i].sector for i in t}) == 1 for t in shapes)
    # Per sector: rows of 4 (2 lines each) and columns of 3 (1 each); 2 diagonals each way.
    assert (len(SIDE4.lines), len(SIDE4.diagonals)) == (4 * (3 * 2 + 4), 4 * 4)


def test_objectives_tile_shapes_on_the_table():
    """OBJECTIVE cards on the physical table's numbering (slot n = 1 + 4 r + c): a row, a
    column, a diagonal and an "L" in sector A; each tile once per card."""
    board = {n: {"tile": f"red {a}"} for n, a in
             {"A1": "tiger", "A2": "tiger", "A3": "tiger", "A4": "fish", "A6": "fish", "A11": "horse"}.items()}
    s = table(
        [{"name": "Ana", "colour": "red"}, {"name": "Ben", "colour": "blue"}],
        objectives=(9, 10, 11, 13),
        board=board,
    )
    objs = {k.split()[0]: v for k, v in final_scores(DATA, s)["players"][0]["objectives"].items()}
    assert objs["#9"] == 3  # A1-A4 in a row: one disjoint set of 3
    assert objs["#10"] == 3  # three tigers A1 A2 A3
    assert objs["#11"] == 3  # A1 A6 A11 on a diagonal
    assert objs["#13"] == 3  # the "L"s A1 A2 A6 and A3 A2 A6 (corner A2) share tiles: one set
