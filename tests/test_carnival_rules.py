"""The Carnival rules engine, rule by rule. Each test names the section of the Portuguese
rulebook (shared/rules/carnival.pt.txt) or the ruling of docs/carnival.md it checks:
Preparação (setup), Fluxo do Jogo 1-5 (the turn), Ações e Como Jogar, Ações de Rolagem de
Dados, Cartas Wild, Tickets, Construção de Atrações, Fim de Jogo."""

from __future__ import annotations

import dataclasses

import pytest

from companion.events import InvalidObservation, Tick
from companion.games.carnival import (
    RIDES,
    WILD,
    Action,
    ActionBlocked,
    ActionDeclared,
    ActionDone,
    ActionImpossible,
    Assign,
    Build,
    Built,
    CarnivalReferee,
    CarnivalState,
    DeckSpec,
    Declare,
    DiceAssigned,
    DiceUnreadable,
    Discard,
    Discarded,
    DiscardRefilled,
    EndTurn,
    GameStart,
    GameStarted,
    MoveWild,
    NaturalSet,
    RefillDiscard,
    Ride,
    Roll,
    Rolled,
    Ticket,
    TurnEnded,
    TurnStarted,
    WildExchange,
    WildExchanged,
    WildLoose,
    WildMoved,
    Winner,
    can_start_ride,
)

REF = CarnivalReferee()


def start(players=("Ana", "Ben"), discard=None) -> CarnivalState:
    discard = discard or tuple(f"swings:{p}" for p in ("banners", "lights", "materials", "seats"))[: len(players)]
    state, calls = REF.apply(REF.initial_state(), GameStart(t=0.0, players=players, discard=discard))
    assert not _invalid(calls), calls
    return state


def table(
    midways: dict[str, dict[str, tuple]] | None = None,
    hands: dict[str, tuple[int, tuple[str, ...]]] | None = None,
    tickets: dict[str, int] | None = None,
    players=("Ana", "Ben"),
    **changes,
) -> CarnivalState:
    """A game in progress built by hand: ``midways[name][ride] = (parts, wilds[, natural])``,
    ``hands[name] = (count, known cards)``; Ana to play, step ``choose`` unless changed."""
    state = start(players)
    new_players = []
    for p in state.players:
        rides = []
        for r in RIDES:
            spec = (midways or {}).get(p.name, {}).get(r, ((), 0))
            parts, wilds = spec[0], spec[1]
            natural = spec[2] if len(spec) > 2 else False
            rides.append(Ride(tuple(sorted(parts)), wilds, natural))
        count, known = (hands or {}).get(p.name, (p.hand_count, p.hand_known))
        new_players.append(
            dataclasses.replace(
                p,
                midway=tuple(rides),
                hand_count=count,
                hand_known=tuple(sorted(known)),
                tickets=(tickets or {}).get(p.name, 3),
            )
        )
    changes.setdefault("step", "choose")
    return dataclasses.replace(state, players=tuple(new_players), **changes)


def play(state: CarnivalState, *observations) -> tuple[CarnivalState, list]:
    calls = []
    for obs in observations:
        state, more = REF.apply(state, obs)
        calls += more
    return state, calls


def _invalid(calls) -> list[InvalidObservation]:
    return [c for c in calls if isinstance(c, InvalidObservation)]


def rejected(state: CarnivalState, obs, words: str) -> None:
    """``obs`` is refused with a reason containing ``words`` and the state is unchanged."""
    new, calls = REF.apply(state, obs)
    assert new is state
    assert len(calls) == 1 and isinstance(calls[0], InvalidObservation), calls
    assert words in calls[0].reason, calls[0].reason


def rolled(state, dice=(6, 5, 1), assign=(6, 5), player="Ana", t=1.0):
    state, calls = play(state, Roll(t=t, player=player, dice=dice))
    if len(set(dice)) > 1:
        state, more = play(state, Assign(t=t, player=player, dice=assign))
        calls += more
    assert not _invalid(calls), calls
    return state


# --------------------------------------------------------------------------- Preparação


def test_setup_white_tip_cards_removed_for_two_and_three_players():
    """Preparação 1: the white-tip cards leave the deck for 2 and 3 players (ruling: one copy
    of each of the 20 parts)."""
    spec = DeckSpec()
    assert spec.totals(4)["carousel:seats"] == 4 and spec.totals(3)["carousel:seats"] == 3
    assert spec.totals(2)[WILD] == spec.totals(4)[WILD] == 6
    assert sum(spec.totals(4).values()) == 86 and sum(spec.totals(2).values()) == 66


def test_setup_deal_wild_plus_five_and_discard_pile_of_one_card_per_player():
    """Preparação 2: each hand is a wild plus five cards; as many face-up cards as players
    start the discard pile; the rest is the deck."""
    state, calls = play(
        REF.initial_state(),
        GameStart(t=0.0, players=("Ana", "Ben", "Caio"), discard=("carousel:seats", WILD, "swings:lights")),
    )
    started = [c for c in calls if isinstance(c, GameStarted)][0]
    assert started.first == "Ana" and started.discard_top == "swings:lights"
    assert all(p.hand_count == 6 and p.hand_known == (WILD,) for p in state.players)
    assert state.deck == 66 - 3 * 6 - 3 == started.deck
    rejected(REF.initial_state(), GameStart(t=0.0, players=("Ana", "Ben"), discard=(WILD,)), "one per player")


def test_setup_midway_of_five_rides_and_three_tickets_each():
    """Preparação 3: five Midway cards, one per ride, and three Tickets each."""
    state = start()
    for p in state.players:
        assert len(p.midway) == 5 and all(r == Ride() for r in p.midway)
        assert p.tickets == 3


def test_setup_two_to_four_players():
    """Preparação 1: a game for 2 to 4 players."""
    rejected(REF.initial_state(), GameStart(t=0.0, players=("Ana",), discard=(WILD,)), "2 to 4")
    five = ("A", "B", "C", "D", "E")
    rejected(REF.initial_state(), GameStart(t=0.0, players=five, discard=(WILD,) * 5), "2 to 4")


def test_first_observation_must_be_game_start():
    rejected(REF.initial_state(), Roll(t=0.0, player="Ana", dice=(1, 2, 3)), "game_start")


# --------------------------------------------------------------------------- Fluxo do Jogo


def test_turn_step1_empty_discard_pile_refilled_from_the_deck_first():
    """Fluxo do Jogo 1: with no discard pile, the top deck card is turned up before anything."""
    state = table(discard=(), step="refill_discard")
    rejected(state, Roll(t=1.0, player="Ana", dice=(1, 2, 3)), "step 1")
    deck = state.deck
    state, calls = play(state, RefillDiscard(t=1.0, card="carousel:lights"))
    assert state.discard == ("carousel:lights",) and state.deck == deck - 1
    assert isinstance(calls[0], DiscardRefilled) and state.step == "choose"
    rejected(state, RefillDiscard(t=2.0, card="carousel:seats"), "not empty")


def test_turn_step2_discard_down_to_six():
    """Fluxo do Jogo 2: a hand of more than six is discarded down to exactly six."""
    state = table(hands={"Ana": (8, (WILD,))}, step="discard_down")
    rejected(state, Roll(t=1.0, player="Ana", dice=(1, 2, 3)), "six")
    rejected(state, Discard(t=1.0, player="Ana", cards=("carousel:seats",)), "exactly 2")
    state, calls = play(state, Discard(t=1.0, player="Ana", cards=("carousel:seats", "swings:lights")))
    assert isinstance(calls[0], Discarded) and state.active_player.hand_count == 6
    assert state.discard[-1] == "swings:lights" and state.step == "choose"


def test_turn_step2_applies_at_the_start_of_the_next_turn():
    """Fluxo do Jogo 2: the next player starts with discard_down when they hold more than six."""
    state = table(hands={"Ben": (7, ())}, step="build")
    state, calls = play(state, EndTurn(t=1.0, player="Ana"))
    turn = [c for c in calls if isinstance(c, TurnStarted)][0]
    assert turn.player == "Ben" and turn.step == "discard_down" == state.step


def test_turn_step3_option1_wild_exchange_from_hand_draws_as_many():
    """Fluxo do Jogo 3.1: a wild and any hand cards discarded, as many cards drawn."""
    state = table()
    deck = state.deck
    state, calls = play(state, WildExchange(t=1.0, player="Ana", wild_from="hand", cards=("carousel:seats", "swings:seats")))
    ex = calls[0]
    assert isinstance(ex, WildExchanged) and ex.drew == 3 and ex.cards[0] == WILD
    assert state.active_player.hand_count == 6 and state.deck == deck - 3
    assert state.discard[-3:] == (WILD, "carousel:seats", "swings:seats")
    assert state.step == "build"  # no dice this turn
    rejected(state, Roll(t=2.0, player="Ana", dice=(1, 2, 3)), "not now")


def test_turn_step3_option1_wild_exchange_from_the_midway():
    """Fluxo do Jogo 3.1: the wild may come from the player's own Midway."""
    state = table(midways={"Ana": {"carousel": (("banners", "lights"), 1)}})
    state, calls = play(state, WildExchange(t=1.0, player="Ana", wild_from="carousel"))
    assert state.active_player.ride("carousel") == Ride(("banners", "lights"), 0)
    assert state.active_player.hand_count == 7 and calls[0].drew == 1
    rejected(table(), WildExchange(t=1.0, player="Ana", wild_from="swings"), "no wild")


def test_turn_step3_option1_needs_a_wild():
    """Fluxo do Jogo 3.1: without a wild in hand (all seen elsewhere) there is no exchange."""
    state = table(hands={"Ana": (6, ("carousel:seats",) * 6)})
    rejected(state, WildExchange(t=1.0, player="Ana"), "not in Ana's hand")


def test_turn_step3_option2_choose_two_of_three_dice():
    """Fluxo do Jogo 3.2: three dice rolled, two chosen for the tableau."""
    state, calls = play(table(), Roll(t=1.0, player="Ana", dice=(6, 2, 4)))
    assert isinstance(calls[0], Rolled) and calls[0].actions == ("midway_steal", "discard_draw", "hand_trade")
    rejected(state, Assign(t=1.0, player="Ana", dice=(6, 2, 4)), "choose 2")
    rejected(state, Assign(t=1.0, player="Ana", dice=(6, 6)), "not among")
    state, calls = play(state, Assign(t=1.0, player="Ana", dice=(2, 4)))
    assert isinstance(calls[0], DiceAssigned) and state.dice == (2, 4)


def test_turn_step3_every_die_placed_before_any_action():
    """Fluxo do Jogo 3.2: no action before the dice are all on the tableau."""
    state, _ = play(table(), Roll(t=1.0, player="Ana", dice=(6, 2, 4)))
    rejected(state, Declare(t=1.0, player="Ana", die=2), "choose two dice")


def test_turn_step3_triple_forces_all_three_actions_with_the_bullseye():
    """Fluxo do Jogo 3.2: on a triple the third die goes to the bullseye; all three actions."""
    state, calls = play(table(), Roll(t=1.0, player="Ana", dice=(1, 1, 1)))
    assigned = [c for c in calls if isinstance(c, DiceAssigned)][0]
    assert assigned.bullseye == 1 and state.dice == (1, 1, 1) and state.step == "actions"
    hand = state.active_player.hand_count
    for i in range(3):
        rejected(state, EndTurn(t=2.0 + i, player="Ana"), "still to be carried out")
        state, calls = play(state, Declare(t=2.0 + i, player="Ana", die=1), Action(t=2.0 + i, player="Ana"))
        assert not _invalid(calls)
    assert state.active_player.hand_count == hand + 3 and state.dice == ()


def test_turn_step4_building_comes_after_the_actions():
    """Fluxo do Jogo 4: building follows the dice actions."""
    state = rolled(table(hands={"Ana": (6, ("carousel:banners", "carousel:lights"))}), (1, 2, 3), (1, 2))
    rejected(state, Build(t=2.0, player="Ana", ride="carousel", cards=("carousel:banners", "carousel:lights")), "actions first")


def test_turn_step5_hand_refilled_to_three():
    """Fluxo do Jogo 5: fewer than three cards in hand -> draw up to three."""
    state = table(hands={"Ana": (1, ())}, step="build")
    deck = state.deck
    state, calls = play(state, EndTurn(t=1.0, player="Ana"))
    ended = [c for c in calls if isinstance(c, TurnEnded)][0]
    assert ended.drew == 2 and state.players[0].hand_count == 3 and state.deck == deck - 2
    assert state.active_player.name == "Ben" and state.turn == 2


def test_turn_order_follows_the_seats_and_wraps():
    state = table(players=("Ana", "Ben", "Caio"), step="build", active=2)
    state, _ = play(state, EndTurn(t=1.0, player="Caio"))
    assert state.active_player.name == "Ana"


def test_only_the_active_player_acts():
    rejected(table(), Roll(t=1.0, player="Ben", dice=(1, 2, 3)), "Ana's turn")
    rejected(table(), Roll(t=1.0, player="Zoe", dice=(1, 2, 3)), "unknown player")


# ------------------------------------------------------------------ Ações e Como Jogar


def test_actions_target_declared_before_the_action():
    """Ações e Como Jogar: the target is declared first, so that others may block."""
    state = rolled(table(hands={"Ben": (3, ())}), (3, 1, 2), (3, 1))
    rejected(state, Action(t=2.0, player="Ana"), "declare")
    state, calls = play(state, Declare(t=2.0, player="Ana", die=3, target="Ben"))
    assert isinstance(calls[0], ActionDeclared) and calls[0].action == "hand_draw" and calls[0].target == "Ben"
    rejected(state, Declare(t=2.0, player="Ana", die=1), "carry it out")


def test_actions_must_all_be_carried_out_in_any_order():
    """Ações e Como Jogar: rolled actions must be carried out, in any order."""
    state = rolled(table(), (1, 2, 5), (1, 2))
    rejected(state, EndTurn(t=2.0, player="Ana"), "still to be carried out")
    state, _ = play(state, Declare(t=2.0, player="Ana", die=2), Action(t=2.0, player="Ana"))
    state, _ = play(state, Declare(t=3.0, player="Ana", die=1), Action(t=3.0, player="Ana"))
    state, calls = play(state, EndTurn(t=4.0, player="Ana"))
    assert not _invalid(calls)


def test_actions_no_limit_against_one_player():
    """Ações e Como Jogar: any number of actions against the same player in a turn."""
    state = rolled(table(hands={"Ben": (5, ())}, tickets={"Ben": 0}), (3, 3, 3))
    for i in range(3):
        state, calls = play(state, Declare(t=2.0 + i, player="Ana", die=3, target="Ben"), Action(t=2.0 + i, player="Ana"))
        assert not _invalid(calls)
    assert state.player("Ben").hand_count == 2


def test_actions_impossible_for_everyone_are_dropped():
    """Ruling (docs/carnival.md): an action nobody can carry out is dropped at the end of the turn."""
    state = rolled(table(), (5, 6, 1), (5, 6))  # Ben's Midway is empty: nothing to take
    rejected(state, Declare(t=2.0, player="Ana", die=5, target="Ben"), "no card that may be taken")
    state, calls = play(state, EndTurn(t=2.0, player="Ana"))
    dropped = [c for c in calls if isinstance(c, ActionImpossible)]
    assert [c.action for c in dropped] == ["midway_trade", "midway_steal"]


# ---------------------------------------------------------- Ações de Rolagem de Dados


def test_action_deck_draw():
    """Ações de Rolagem de Dados, Deck Draw: the deck's top card, unseen, into the hand."""
    state = rolled(table(), (1, 2, 3), (1, 2))
    deck, hand = state.deck, state.active_player.hand_count
    state, calls = play(state, Declare(t=2.0, player="Ana", die=1), Action(t=2.0, player="Ana"))
    assert state.deck == deck - 1 and state.active_player.hand_count == hand + 1
    rejected(rolled(table(), (1, 2, 3), (1, 2)), Declare(t=2.0, player="Ana", die=1, target="Ben"), "no target")


def test_action_discard_draw_takes_the_top_card_seen_by_all():
    """Ações de Rolagem de Dados, Discard Draw: the discard pile's top card."""
    state = rolled(table(), (2, 1, 3), (2, 1))
    top = state.discard[-1]
    state, calls = play(state, Declare(t=2.0, player="Ana", die=2), Action(t=2.0, player="Ana"))
    assert calls[-1].took == top and top in state.active_player.hand_known


def test_action_hand_draw_takes_a_random_hidden_card():
    """Ações de Rolagem de Dados, Hand Draw: a random card of another player's hand."""
    state = rolled(table(hands={"Ben": (4, (WILD,))}), (3, 1, 2), (3, 1))
    state, calls = play(state, Declare(t=2.0, player="Ana", die=3, target="Ben"), Action(t=2.0, player="Ana"))
    done = calls[-1]
    assert isinstance(done, ActionDone) and done.hands == {"Ana": 7, "Ben": 3}
    # Which card went is hidden: the table no longer knows Ben holds the wild.
    assert state.player("Ben").hand_known == ()
    rejected(rolled(table(), (3, 1, 2), (3, 1)), Declare(t=2.0, player="Ana", die=3, target="Ana"), "another player")


def test_action_against_an_empty_hand_is_refused():
    """Bad input: a Hand Draw or Hand Trade against an empty hand."""
    state = rolled(table(hands={"Ben": (0, ())}), (3, 4, 1), (3, 4))
    rejected(state, Declare(t=2.0, player="Ana", die=3, target="Ben"), "no card in hand")
    rejected(state, Declare(t=2.0, player="Ana", die=4, target="Ben"), "no card in hand")


def test_action_hand_trade_keeps_both_hand_sizes():
    """Ações de Rolagem de Dados, Hand Trade: take a random card, give one back."""
    state = rolled(table(hands={"Ben": (4, ())}), (4, 1, 2), (4, 1))
    state, calls = play(state, Declare(t=2.0, player="Ana", die=4, target="Ben"), Action(t=2.0, player="Ana"))
    assert calls[-1].hands == {"Ana": 6, "Ben": 4}


def test_action_midway_trade_swaps_one_card_each_way():
    """Ações de Rolagem de Dados, Midway Trade: take a Midway card, give one of yours."""
    state = table(
        midways={"Ana": {"swings": (("seats",), 0)}, "Ben": {"carousel": (("banners", "lights"), 0)}}
    )
    state = rolled(state, (5, 1, 2), (5, 1))
    state, calls = play(
        state,
        Declare(t=2.0, player="Ana", die=5, target="Ben"),
        Action(t=2.0, player="Ana", take="carousel:lights", give="swings:seats"),
    )
    assert not _invalid(calls)
    assert state.player("Ana").ride("carousel").parts == ("lights",)
    assert state.player("Ana").ride("swings").parts == ()
    assert state.player("Ben").ride("carousel").parts == ("banners",)
    assert state.player("Ben").ride("swings").parts == ("seats",)


def test_action_midway_trade_never_makes_a_duplicate():
    """Ações de Rolagem de Dados, Midway Trade: neither Midway may end with a duplicate."""
    state = table(
        midways={
            "Ana": {"swings": (("seats",), 0), "carousel": (("lights",), 0)},
            "Ben": {"carousel": (("banners", "lights"), 0)},
        }
    )
    state = rolled(state, (5, 1, 2), (5, 1))
    state, _ = play(state, Declare(t=2.0, player="Ana", die=5, target="Ben"))
    rejected(state, Action(t=2.0, player="Ana", take="carousel:lights", give="swings:seats"), "no duplicate")
    rejected(state, Action(t=2.0, player="Ana", take="carousel:banners", give="carousel:lights"), "no duplicate")
    new, calls = play(state, Action(t=2.0, player="Ana", take="carousel:banners", give="swings:seats"))
    assert not _invalid(calls)


def test_action_midway_steal_takes_a_card_and_discards_from_hand():
    """Ações de Rolagem de Dados, Midway Steal: take a Midway card, discard a hand card."""
    state = table(midways={"Ben": {"carousel": (("banners", "lights"), 0)}})
    state = rolled(state, (6, 1, 2), (6, 1))
    state, _ = play(state, Declare(t=2.0, player="Ana", die=6, target="Ben"))
    rejected(state, Action(t=2.0, player="Ana", take="carousel:banners"), "discard")
    state, calls = play(state, Action(t=2.0, player="Ana", take="carousel:banners", discard=WILD))
    assert state.player("Ana").ride("carousel").parts == ("banners",)
    assert state.player("Ben").ride("carousel").parts == ("lights",)
    assert state.discard[-1] == WILD and state.player("Ana").hand_count == 5


def test_action_midway_steal_that_would_duplicate_is_refused():
    """Bad input: a steal that would duplicate a card in the taker's Midway."""
    state = table(
        midways={"Ana": {"carousel": (("banners",), 0)}, "Ben": {"carousel": (("banners", "lights"), 0)}}
    )
    state = rolled(state, (6, 1, 2), (6, 1))
    state, _ = play(state, Declare(t=2.0, player="Ana", die=6, target="Ben"))
    rejected(state, Action(t=2.0, player="Ana", take="carousel:banners", discard=WILD), "no duplicate")
    state, calls = play(state, Action(t=2.0, player="Ana", take="carousel:lights", discard=WILD))
    assert state.player("Ana").ride("carousel").parts == ("banners", "lights")


# ------------------------------------------------------------------------ Cartas Wild


def test_wild_moved_between_established_incomplete_rides_in_own_turn():
    """Cartas Wild: a wild may be reassigned to another established, incomplete ride."""
    state = table(
        midways={"Ana": {"carousel": (("banners", "lights"), 1), "swings": (("seats",), 0)}, "Ben": {"swings": (("seats",), 1)}},
        step="build",
    )
    state, calls = play(state, MoveWild(t=1.0, player="Ana", from_ride="carousel", to_ride="swings"))
    assert isinstance(calls[0], WildMoved)
    assert state.active_player.ride("swings").wilds == 1 and state.active_player.ride("carousel").wilds == 0
    rejected(state, MoveWild(t=2.0, player="Ana", from_ride="swings", to_ride="bumper_cars"), "not an established")
    rejected(state, MoveWild(t=2.0, player="Ben", from_ride="swings", to_ride="carousel"), "own turn")


def test_wild_never_alone_must_be_moved_or_discarded_at_once():
    """Cartas Wild: a wild left alone by an action is moved at once or discarded."""
    state = table(
        midways={"Ben": {"carousel": (("banners",), 1), "swings": (("seats", "lights"), 0)}}
    )
    state = rolled(state, (6, 1, 2), (6, 1))
    state, calls = play(
        state,
        Declare(t=2.0, player="Ana", die=6, target="Ben"),
        Action(t=2.0, player="Ana", take="carousel:banners", discard=WILD),
    )
    loose = [c for c in calls if isinstance(c, WildLoose)][0]
    assert loose.player == "Ben" and loose.rides == ("swings",)
    assert REF.expected(state) == ("move_wild",)
    rejected(state, Declare(t=3.0, player="Ana", die=1), "loose wild")
    state, calls = play(state, MoveWild(t=3.0, player="Ben", to_ride="swings"))
    assert state.player("Ben").ride("swings").wilds == 1 and state.player("Ben").loose_wilds == 0


def test_wild_loose_with_no_ride_is_discarded():
    """Cartas Wild: with no established, incomplete ride, the loose wild is discarded."""
    state = table(midways={"Ben": {"carousel": (("banners",), 1)}})
    state = rolled(state, (6, 1, 2), (6, 1))
    state, _ = play(
        state,
        Declare(t=2.0, player="Ana", die=6, target="Ben"),
        Action(t=2.0, player="Ana", take="carousel:banners", discard=WILD),
    )
    rejected(state, MoveWild(t=3.0, player="Ben", to_ride="carousel"), "not an established")
    state, calls = play(state, MoveWild(t=3.0, player="Ben", to_ride=None))
    assert state.discard[-1] == WILD and state.player("Ben").loose_wilds == 0


def test_wild_taken_from_another_midway_is_placed_by_the_taker():
    """Cartas Wild: wilds may be taken from other Midways; the receiver places them."""
    state = table(
        midways={"Ana": {"swings": (("seats", "lights"), 0)}, "Ben": {"carousel": (("banners", "lights"), 1)}}
    )
    state = rolled(state, (6, 1, 2), (6, 1))
    state, _ = play(state, Declare(t=2.0, player="Ana", die=6, target="Ben"))
    rejected(state, Action(t=2.0, player="Ana", take=WILD, discard=WILD), "name the ride")
    state, calls = play(state, Action(t=2.0, player="Ana", take=WILD, take_ride="carousel", discard="swings:banners"))
    assert state.player("Ana").loose_wilds == 1
    state, calls = play(state, MoveWild(t=3.0, player="Ana", to_ride="swings"))
    assert state.player("Ana").ride("swings").wilds == 1


def test_wild_cannot_start_a_ride_alone():
    """Cartas Wild / Construção de Atrações: a wild never stands alone on a ride."""
    assert "wilds alone" in can_start_ride("carousel", (WILD, WILD))


# --------------------------------------------------------------------------- Tickets


def test_ticket_blocks_the_declared_action_even_of_a_bystander():
    """Tickets: a Ticket blocks an action just declared, even one not aimed at its player."""
    state = rolled(table(players=("Ana", "Ben", "Caio"), hands={"Ben": (3, ())}), (3, 1, 2), (3, 1))
    state, _ = play(state, Declare(t=2.0, player="Ana", die=3, target="Ben"))
    state, calls = play(state, Ticket(t=2.5, player="Caio"))
    assert isinstance(calls[0], ActionBlocked) and calls[0].blocker == "Caio" and calls[0].tickets == 2
    assert state.dice == (1,) and state.player("Ben").hand_count == 3 and state.ticket_discards == 1


def test_ticket_one_per_turn():
    """Tickets: one Ticket, and only one, per player per turn (ticket played twice: refused)."""
    state = rolled(table(hands={"Ben": (5, ())}), (3, 3, 3))
    state, _ = play(state, Declare(t=2.0, player="Ana", die=3, target="Ben"), Ticket(t=2.1, player="Ben"))
    state, _ = play(state, Declare(t=3.0, player="Ana", die=3, target="Ben"))
    rejected(state, Ticket(t=3.1, player="Ben"), "already used a Ticket this turn")
    # The tip of the rulebook: several actions against one player; only one can be blocked.
    state, calls = play(state, Action(t=3.2, player="Ana"))
    assert calls[-1].hands["Ben"] == 4


def test_ticket_can_be_used_again_next_turn():
    """Tickets: the limit is per turn."""
    state = rolled(table(hands={"Ben": (5, ())}), (3, 1, 2), (3, 1))
    state, _ = play(state, Declare(t=2.0, player="Ana", die=3, target="Ben"), Ticket(t=2.1, player="Ben"))
    state, _ = play(state, Declare(t=3.0, player="Ana", die=1), Action(t=3.0, player="Ana"))
    state, _ = play(state, EndTurn(t=4.0, player="Ana"))
    assert state.ticket_users == ()


def test_ticket_use_can_never_be_blocked():
    """Tickets: a Ticket cannot be blocked - it only answers a declared dice action."""
    state = rolled(table(hands={"Ben": (5, ())}), (3, 1, 2), (3, 1))
    rejected(state, Ticket(t=2.0, player="Ben"), "cannot be blocked")
    state, _ = play(state, Declare(t=2.0, player="Ana", die=3, target="Ben"), Ticket(t=2.1, player="Ben"))
    rejected(state, Ticket(t=2.2, player="Ana"), "cannot be blocked")


def test_ticket_not_against_own_action_and_not_without_tickets():
    state = rolled(table(hands={"Ben": (5, ())}, tickets={"Ben": 0}), (3, 1, 2), (3, 1))
    state, _ = play(state, Declare(t=2.0, player="Ana", die=3, target="Ben"))
    rejected(state, Ticket(t=2.1, player="Ana"), "own action")
    rejected(state, Ticket(t=2.1, player="Ben"), "no Ticket left")


def test_ticket_back_for_a_natural_set_only_below_three_and_from_the_ticket_discards():
    """Fluxo do Jogo 4 / Tickets: a natural set gives a Ticket from the Ticket discards if the
    player holds fewer than three; never more than three."""
    known = ("carousel:materials", "carousel:seats")
    base = {"Ana": {"carousel": (("banners", "lights"), 0)}}
    for tickets, pool, gained in ((2, 1, True), (3, 1, False), (2, 0, False)):
        state = table(midways=base, hands={"Ana": (4, known)}, tickets={"Ana": tickets}, step="build", ticket_discards=pool)
        state, calls = play(state, Build(t=1.0, player="Ana", ride="carousel", cards=known))
        natural = [c for c in calls if isinstance(c, NaturalSet)][0]
        assert natural.ticket_gained is gained
        assert state.active_player.tickets == tickets + gained <= 3


# ------------------------------------------------------------- Construção de Atrações


def test_build_new_ride_needs_two_different_parts_one_may_be_wild():
    """Construção de Atrações: a new ride starts with two different parts of it from the hand,
    one of which may be a wild."""
    state = table(hands={"Ana": (6, ("carousel:banners", "carousel:lights", WILD))}, step="build")
    rejected(state, Build(t=1.0, player="Ana", ride="carousel", cards=("carousel:banners",)), "two different parts")
    rejected(state, Build(t=1.0, player="Ana", ride="swings", cards=("carousel:banners", WILD)), "of the swings")
    new, calls = play(state, Build(t=1.0, player="Ana", ride="carousel", cards=("carousel:banners", WILD)))
    assert isinstance(calls[0], Built) and new.active_player.ride("carousel") == Ride(("banners",), 1)
    new, calls = play(state, Build(t=1.0, player="Ana", ride="carousel", cards=("carousel:banners", "carousel:lights")))
    assert new.active_player.ride("carousel").parts == ("banners", "lights")


def test_build_add_to_an_incomplete_ride():
    """Construção de Atrações: cards may be added to an existing, incomplete ride."""
    state = table(
        midways={"Ana": {"carousel": (("banners", "lights"), 0)}},
        hands={"Ana": (3, ("carousel:seats", "carousel:lights"))},
        step="build",
    )
    state, calls = play(state, Build(t=1.0, player="Ana", ride="carousel", cards=("carousel:seats",)))
    assert state.active_player.ride("carousel").parts == ("banners", "lights", "seats")
    rejected(state, Build(t=2.0, player="Ana", ride="carousel", cards=("carousel:lights",)), "no duplicate")


def test_build_single_part_already_in_the_midway_counts():
    """Construção de Atrações: with a single part already in the Midway (after a steal), one
    card from the hand is enough."""
    state = table(midways={"Ana": {"swings": (("seats",), 0)}}, hands={"Ana": (3, ("swings:lights",))}, step="build")
    state, calls = play(state, Build(t=1.0, player="Ana", ride="swings", cards=("swings:lights",)))
    assert not _invalid(calls) and state.active_player.ride("swings").parts == ("lights", "seats")


def test_build_complete_with_one_to_three_wilds():
    """Construção de Atrações: a ride is complete with its four parts, up to three of them wilds."""
    state = table(midways={"Ana": {"swings": (("seats",), 0)}}, hands={"Ana": (4, (WILD, WILD, WILD))}, step="build")
    state, calls = play(state, Build(t=1.0, player="Ana", ride="swings", cards=(WILD, WILD, WILD)))
    built = calls[0]
    assert built.complete and built.complete_rides == 1
    assert not any(isinstance(c, NaturalSet) for c in calls)
    rejected(state, Build(t=2.0, player="Ana", ride="swings", cards=(WILD,)), "complete")


def test_build_natural_set_is_flipped_and_locked():
    """Construção de Atrações: four parts without a wild is a natural set, locked: its cards can
    be neither traded nor taken."""
    state = table(
        midways={"Ben": {"carousel": (("banners", "lights", "materials", "seats"), 0, True), "swings": (("seats",), 0)}},
        hands={"Ana": (3, ())},
    )
    state = rolled(state, (6, 5, 1), (6, 5))
    state, _ = play(state, Declare(t=2.0, player="Ana", die=6, target="Ben"))
    rejected(state, Action(t=2.0, player="Ana", take="carousel:seats", discard="swings:lights"), "natural set")
    state, calls = play(state, Action(t=2.0, player="Ana", take="swings:seats", discard="swings:lights"))
    assert not _invalid(calls)
    # The trade is now impossible: only the natural set is left in Ben's Midway.
    rejected(state, Declare(t=3.0, player="Ana", die=5, target="Ben"), "no card that may be taken")


def test_build_natural_set_flipped_when_completed():
    """Construção de Atrações / Fluxo do Jogo 4: completing all four parts flips the ride."""
    state = table(
        midways={"Ana": {"carousel": (("banners", "lights", "materials"), 0)}},
        hands={"Ana": (3, ("carousel:seats",))},
        step="build",
    )
    state, calls = play(state, Build(t=1.0, player="Ana", ride="carousel", cards=("carousel:seats",)))
    assert state.active_player.ride("carousel").natural
    assert any(isinstance(c, NaturalSet) and c.ride == "carousel" for c in calls)


def test_build_card_named_must_possibly_be_in_the_hand():
    """Hidden hands are counts: a card named from the hand must not be seen elsewhere already."""
    ben = {"carousel": (("banners", "lights", "materials", "seats"), 0, True)}
    others = {"Ben": ben, "Caio": ben}
    state = table(players=("Ana", "Ben", "Caio"), midways=others, hands={"Ana": (4, ())}, step="build")
    state = dataclasses.replace(state, discard=("carousel:banners",))
    # 3 copies for 3 players: two in Midways, one on the discard pile -> none left for Ana.
    rejected(state, Build(t=1.0, player="Ana", ride="carousel", cards=("carousel:banners", "carousel:lights")), "already seen")


def test_midway_card_never_goes_back_to_a_hand():
    """Construção de Atrações: a Midway card always stays in a Midway - taken cards go to the
    taker's Midway, never the hand."""
    state = table(midways={"Ben": {"carousel": (("banners", "lights"), 0)}}, hands={"Ana": (2, ())})
    state = rolled(state, (6, 1, 2), (6, 1))
    hand = state.active_player.hand_count
    state, _ = play(
        state, Declare(t=2.0, player="Ana", die=6, target="Ben"), Action(t=2.0, player="Ana", take="carousel:lights", discard="swings:seats")
    )
    assert state.active_player.hand_count == hand - 1
    assert state.active_player.ride("carousel").parts == ("lights",)


# ------------------------------------------------------------------------- Fim de Jogo


def _three_done():
    full = (("banners", "lights", "materials", "seats"), 0, True)
    return {"bumper_cars": full, "carousel": (("banners",), 3), "ferris_wheel": (("seats", "lights"), 2)}


def test_end_four_complete_rides_win_at_once():
    """Fim de Jogo: four complete rides, with or without wilds, win immediately."""
    mid = _three_done()
    mid["swings"] = (("banners", "lights", "materials"), 0)
    state = table(midways={"Ana": mid}, hands={"Ana": (3, (WILD,))}, step="build")
    state, calls = play(state, Build(t=1.0, player="Ana", ride="swings", cards=(WILD,)))
    win = calls[-1]
    assert isinstance(win, Winner) and win.player == "Ana" and win.complete_rides["Ana"] == 4
    assert REF.is_over(state)
    rejected(state, EndTurn(t=2.0, player="Ana"), "game is over")


def test_end_win_in_the_middle_of_a_turn_by_an_action():
    """Fim de Jogo: the game ends the moment the fourth ride is complete, even by a steal."""
    mid = _three_done()
    mid["swings"] = (("banners", "lights", "materials"), 0)
    state = table(midways={"Ana": mid, "Ben": {"swings": (("seats",), 0)}}, hands={"Ana": (3, ())})
    state = rolled(state, (6, 1, 2), (6, 1))
    state, calls = play(
        state, Declare(t=2.0, player="Ana", die=6, target="Ben"), Action(t=2.0, player="Ana", take="swings:seats", discard="carousel:seats")
    )
    assert calls[-1].player == "Ana" and state.winner == "Ana"


def test_end_an_opponent_can_win_by_a_card_given_in_a_trade():
    """Fim de Jogo: whoever reaches four complete rides wins at once, even on another's turn."""
    mid = _three_done()
    mid["swings"] = (("banners", "lights", "materials"), 0)
    mid["rollercoaster"] = (("lights",), 0)
    state = table(midways={"Ben": mid, "Ana": {"swings": (("seats",), 0)}})
    state = rolled(state, (5, 1, 2), (5, 1))
    state, calls = play(
        state,
        Declare(t=2.0, player="Ana", die=5, target="Ben"),
        Action(t=2.0, player="Ana", take="rollercoaster:lights", give="swings:seats"),
    )
    assert state.winner == "Ben" and isinstance(calls[-1], Winner)
    assert any(isinstance(c, NaturalSet) and c.player == "Ben" for c in calls)


def test_end_taking_a_ride_s_last_part_leaves_its_wilds_loose():
    """Cartas Wild: a ride stripped of its only part leaves its wilds alone: loose at once."""
    mid = _three_done()
    state = table(midways={"Ben": mid, "Ana": {"swings": (("seats",), 0), "rollercoaster": (("seats",), 0)}})
    state = rolled(state, (5, 1, 2), (5, 1))
    state, calls = play(
        state,
        Declare(t=2.0, player="Ana", die=5, target="Ben"),
        Action(t=2.0, player="Ana", take="carousel:banners", give="swings:seats"),
    )
    assert state.winner is None and state.player("Ben").loose_wilds == 3
    assert any(isinstance(c, WildLoose) and c.player == "Ben" for c in calls)


# ------------------------------------------------------------------------- bad input


def test_die_read_as_unknown_changes_nothing():
    """Bad input: a die read as unknown gives a clear call and nothing changes."""
    state = table()
    new, calls = play(state, Roll(t=1.0, player="Ana", dice=(3, "unknown", 5)))
    assert new is state and isinstance(calls[0], DiceUnreadable)
    rejected(state, Roll(t=1.0, player="Ana", dice=(3, 7, 5)), "1-6")
    rejected(state, Roll(t=1.0, player="Ana", dice=(3, 5)), "3 dice")


def test_bad_cards_and_time_are_refused():
    state = table(step="build")
    rejected(state, Build(t=1.0, player="Ana", ride="carousel", cards=("carousel:roof", WILD)), "not a card")
    rejected(state, Build(t=1.0, player="Ana", ride="castle", cards=(WILD,)), "ride")
    later = dataclasses.replace(state, last_t=5.0)
    rejected(later, EndTurn(t=1.0, player="Ana"), "time went backwards")


def test_tick_only_advances_time():
    state = table()
    new, calls = REF.apply(state, Tick(t=3.0))
    assert calls == [] and new.last_t == 3.0 and REF.next_deadline(new) is None


def test_deck_renewed_from_the_discard_pile_when_empty():
    """Ruling (docs/carnival.md): an empty deck is renewed from the discard pile but its top."""
    state = table(deck=0, discard=("carousel:seats", WILD, "swings:lights"), hands={"Ana": (0, ())}, step="build")
    state, calls = play(state, EndTurn(t=1.0, player="Ana"))
    assert state.discard == ("swings:lights",) and state.players[0].hand_count == 2 and state.deck == 0


def test_summary_and_expected():
    state = rolled(table(), (1, 2, 3), (1, 2))
    summary = REF.summary(state)
    assert summary["player"] == "Ana" and summary["dice"] == [1, 2] and summary["step"] == "actions"
    assert REF.expected(state) == ("declare", "move_wild", "end_turn")


def test_wild_given_in_a_trade_is_placed_by_the_receiver():
    """Cartas Wild: a player who receives a wild places it on an established, incomplete ride."""
    state = table(
        midways={"Ana": {"swings": (("seats",), 1)}, "Ben": {"carousel": (("banners", "lights"), 0)}}
    )
    state = rolled(state, (5, 1, 2), (5, 1))
    state, calls = play(
        state,
        Declare(t=2.0, player="Ana", die=5, target="Ben"),
        Action(t=2.0, player="Ana", take="carousel:lights", give=WILD, give_ride="swings"),
    )
    assert any(isinstance(c, WildLoose) and c.player == "Ben" and c.rides == ("carousel",) for c in calls)
    state, _ = play(state, MoveWild(t=3.0, player="Ben", to_ride="carousel"))
    assert state.player("Ben").ride("carousel") == Ride(("banners",), 1)
    assert state.player("Ana").ride("swings") == Ride(("seats",), 0)


def test_part_arriving_where_a_wild_stood_in_frees_the_wild():
    """Ruling 11 (docs/carnival.md): a part arriving on a full ride frees one of its wilds."""
    state = table(
        midways={"Ana": {"swings": (("seats", "lights", "banners"), 1)}, "Ben": {"swings": (("materials",), 0)}},
        hands={"Ana": (3, ())},
    )
    state = rolled(state, (6, 1, 2), (6, 1))
    state, calls = play(
        state,
        Declare(t=2.0, player="Ana", die=6, target="Ben"),
        Action(t=2.0, player="Ana", take="swings:materials", discard="carousel:seats"),
    )
    me = state.player("Ana")
    assert me.ride("swings").natural and me.ride("swings").wilds == 0 and me.loose_wilds == 1
    assert any(isinstance(c, NaturalSet) for c in calls)


def test_discard_draw_impossible_on_an_empty_discard_pile():
    """Ações de Rolagem de Dados, Discard Draw: nothing to take from an empty discard pile."""
    state = rolled(table(discard=()), (2, 1, 3), (2, 1))
    rejected(state, Declare(t=2.0, player="Ana", die=2), "discard pile is empty")


def test_deck_composition_options_are_checked():
    """Preparação 1 options (``[carnival]`` section): impossible white-tip counts are refused."""
    from companion.config import ConfigError

    with pytest.raises(ConfigError, match="white_tip_copies"):
        CarnivalReferee(copies_per_part=2, white_tip_copies=2)
    with pytest.raises(ConfigError, match="white_tip_wilds"):
        CarnivalReferee(wilds=6, white_tip_wilds=3)
    ref = CarnivalReferee(copies_per_part=3, white_tip_copies=0)
    assert ref.spec.totals(2)["carousel:seats"] == 3


def test_roll_is_a_chance_event_with_triples_one_in_thirty_six():
    """Fluxo do Jogo 3.2: three dice; a triple (all three actions) comes 6 times in 216."""
    from companion.games.carnival import roll_outcomes

    outcomes = roll_outcomes()
    assert len(outcomes) == 56 and abs(sum(outcomes.values()) - 1) < 1e-12
    assert sum(p for k, p in outcomes.items() if len(set(k)) == 1) == pytest.approx(6 / 216)
    assert outcomes[(1, 2, 3)] == pytest.approx(6 / 216)
