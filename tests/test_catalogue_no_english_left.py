"""Sentences in French and Brazilian Portuguese have no English left in them: the two-player
Carrossel turn ("either way"), Carnival's reasons for an impossible action, Carrossel's ability
details; and the English ones read as sentences ("clients none back in hand" no more)."""

from __future__ import annotations

import pytest

from companion.announcers.speech import Catalogue
from companion.announcers.wording import derived_fields
from companion.games.carnival import ActionImpossible
from companion.games.carrossel import AbilityUsed, TurnBoard
from tests.test_catalogues import simulated_calls

LANGS = ["en", "fr", "pt-BR"]

#: What Carnival's referee gives as reasons (companion/games/carnival.py, _impossible), and the
#: English words of each that must not be left in another language's sentence.
CARNIVAL_REASONS = {
    "no card left to draw": "left to draw",
    "the discard pile is empty": "discard pile",
    "Ben has no card in hand": "no card in hand",
    "Ben's Midway has no card that may be taken": "may be taken",
    "every card of Ben's Midway would duplicate one of Ana's": "would duplicate",
    "no trade with Ben leaves both Midways without a duplicate": "no trade with",
    "no other player": "other player",
}


def test_two_player_carrossel_turn_is_either_way_in_every_language():
    from companion.games.carrossel import CarrosselReferee  # noqa: F401  (the engine makes "either")

    call = TurnBoard(t=1.0, turn_deg=180.0, direction="either", target_deg=90.0)
    texts = {lang: Catalogue(lang).text(call, "carrossel") for lang in LANGS}
    assert texts["en"] == "Turn the board 180 degrees either way."
    assert texts["fr"] == "Tourne le plateau de 180 degrés dans un sens ou dans l'autre."
    assert texts["pt-BR"] == "Gire o tabuleiro 180 graus para qualquer lado."


def test_the_two_player_game_asks_for_either_way():
    turns = [c for c in simulated_calls("carrossel") if c.type == "turn_board" and c.direction == "either"]
    assert turns  # the 2-player simulated game (seed 6) turns the board
    for lang in ("fr", "pt-BR"):
        assert all("either" not in Catalogue(lang).text(c, "carrossel") for c in turns)


@pytest.mark.parametrize("lang", ["fr", "pt-BR"])
def test_each_carnival_reason_is_a_sentence_of_the_language(lang):
    cat = Catalogue(lang)
    for reason, english in CARNIVAL_REASONS.items():
        call = ActionImpossible(t=1.0, player="Ana", action="midway_trade", reason=reason)
        text = cat.text(call, "carnival", console=True)
        assert english not in text, (lang, text)
        assert "Ben" in text or "Ben" not in reason, (lang, text)
    both = ActionImpossible(t=1.0, player="Ana", action="midway_steal",
                            reason="Ben's Midway has no card that may be taken; Cleo has no card in hand")
    text = cat.text(both, "carnival", console=True)
    assert "Ben" in text and "Cleo" in text and "may be taken" not in text and "no card in hand" not in text


def test_english_reasons_stay_as_they_were():
    cat = Catalogue("en")
    for reason in CARNIVAL_REASONS:
        call = ActionImpossible(t=1.0, player="Ana", action="midway_trade", reason=reason)
        assert cat.text(call, "carnival", console=True).endswith(f": {reason}.")


def test_every_reason_of_the_simulated_carnival_games_has_a_sentence():
    calls = [c for c in simulated_calls("carnival") if c.type == "action_impossible"]
    assert calls
    for c in calls:
        reasons = derived_fields("carnival", {"type": c.type, "reason": c.reason})["reasons"]
        assert reasons and all(r["kind"] != "other" for r in reasons), c.reason
        for lang in ("fr", "pt-BR"):
            text = Catalogue(lang).text(c, "carnival", console=True)
            assert not any(part in text for part in c.reason.split("; ")), (lang, text)


def test_carrossel_ability_details_are_worded_in_each_language():
    calls = [c for c in simulated_calls("carrossel") if c.type == "ability_used"]
    assert {c.ability for c in calls} >= {"recover", "jump"}
    english = ("back in hand", "slot card", "standees removed", "sits on", "->", "[", "none")
    for c in calls:
        assert derived_fields("carrossel", {"type": c.type, "detail": c.detail})["details"][0]["kind"] != "other", c.detail
        for lang in ("fr", "pt-BR"):
            text = Catalogue(lang).text(c, "carrossel", console=True)
            assert not any(w in text for w in english), (lang, text)
    recover = AbilityUsed(t=1.0, player="Dev", client=26, ability="recover",
                          detail="slot cards [9, 7, 1] and clients [] back in hand")
    assert Catalogue("en").text(recover, "carrossel", console=True) == (
        "Dev uses the recover ability of client 26: back in hand: slot cards 9, 7 and 1.")
    assert "9, 7 et 1" in Catalogue("fr").text(recover, "carrossel", console=True)


#: What Carrossel's referee gives as the reason of an illegal play (companion/games/carrossel.py,
#: check_play and the reveal), with the English words that must not be left elsewhere.
CARROSSEL_REASONS = {
    "slot 3 is not a slot of sector A": "is not a slot",
    "slot 3 of sector B is occupied": "is occupied",
    "Jump: sector C has no free slot below 2": "no free slot",
    "Jump: slot 5 is free, the ability would do nothing": "would do nothing",
    "slot card 4 is in the discard pile": "discard pile",
    "slot card 4 is not one of the player's slot cards": "slot cards",
    "first round: the slot card must be one of 1, 2, 3": "first round",
    "expected 2 animal tile(s), one per sector, got 1": "one per sector",
    "Ana has 0 tiger tile(s) left, the play needs 1": "the play needs",
    "client #12 is not one of Ana's won clients": "won clients",
    "client #12 was already used (in the discard pile)": "already used",
    "the Dragon client acts when it appears at a booth; it cannot be played": "cannot be played",
    "ticket: only with the Single ticket (Horse) ability": "only with",
    "Single ticket: no client at Ana's booth matches tiger/fish": "matches",
    "ticket: client #7 is not a matching client at Ana's booth": "matching client",
    "already played this round; the reveal is simultaneous": "already played",
    "unknown player 'Zed'": "unknown player",
    "unknown animal 'cat' (known: tiger, fish, swan, horse, dragon)": "known:",
}


@pytest.mark.parametrize("lang", ["fr", "pt-BR"])
def test_each_carrossel_illegal_play_reason_is_a_sentence_of_the_language(lang):
    from companion.games.carrossel import IllegalPlay

    cat = Catalogue(lang)
    for reason, english in CARROSSEL_REASONS.items():
        text = cat.text(IllegalPlay(t=1.0, player="Ben", play="Ben: 3 tiger", reason=reason), "carrossel", console=True)
        assert english not in text and "tiger" not in text, (lang, text)
        for number in ("3", "12", "7", "Zed"):  # what the reason names is kept
            assert number not in reason or number in text, (lang, text)


def test_english_illegal_play_reasons_read_as_before():
    from companion.games.carrossel import IllegalPlay

    cat = Catalogue("en")
    for reason in CARROSSEL_REASONS:
        text = cat.text(IllegalPlay(t=1.0, player="Ben", play="Ben: 3 tiger", reason=reason), "carrossel", console=True)
        assert text == f"Ben, that play is not allowed: {reason.replace('#', '').replace('/', ' or ')}. Play again."


def test_every_illegal_play_of_the_simulated_carrossel_games_has_a_sentence():
    calls = [c for c in simulated_calls("carrossel") if c.type == "illegal_play"]
    assert calls
    for c in calls:
        assert derived_fields("carrossel", {"type": c.type, "reason": c.reason})["reasons"][0]["kind"] != "other", c.reason
        for lang in ("fr", "pt-BR"):
            assert c.reason not in Catalogue(lang).text(c, "carrossel", console=True)
