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
