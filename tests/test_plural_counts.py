"""Counts agree with their nouns in every catalogue: "1 enfant assis sur 12", not
"1 enfants"; French takes 0 and 1 in the singular ([meta] zero_is_singular), English and
Portuguese only 1."""

from __future__ import annotations

import re

import pytest

from companion.announcers.speech import Catalogue
from companion.games import referee_for

GAME = "monsieur-carrousel"


def _suffix(lang: str, call: dict, summary: dict) -> str:
    catalogue = Catalogue(lang)
    return catalogue.suffix(referee_for(GAME).vocabulary.call(call), GAME, summary)


@pytest.mark.parametrize("seated, words", [(0, "0 enfant assis"), (1, "1 enfant assis"), (2, "2 enfants assis"),
                                           (12, "12 enfants assis")])
def test_french_kids_seated_agree_for_every_count(seated, words):
    call = {"type": "kid_seated", "t": 1.0, "player": "Ana", "kid": "Lulu", "seat": 3, "colour": "red",
            "picture": "lion", "seated": seated}
    assert _suffix("fr", call, {}) == f"(siège 3 ; {words} sur 12)"


@pytest.mark.parametrize("raindrops, words", [(0, "0 goutte de pluie"), (1, "1 goutte de pluie"),
                                              (2, "2 gouttes de pluie"), (8, "8 gouttes de pluie")])
def test_french_raindrops_agree_for_every_count(raindrops, words):
    call = {"type": "raindrop", "t": 1.0, "player": "Ana", "raindrops": raindrops, "left": 8 - raindrops}
    assert _suffix("fr", call, {"raindrops_max": 8}) == f"({words} sur 8)"


@pytest.mark.parametrize("lang", ["en", "fr", "pt-BR"])
def test_every_count_with_its_noun_in_a_suffix_goes_through_its_plural_forms(lang):
    """A field written straight before a French plural noun (``{seated} enfants``) is the
    mistake the forms tables exist for; the English and Portuguese suffixes put the noun after
    the total ("1 of 12 kids seated"), which agrees for every count."""
    for n in range(13):
        kid = {"type": "kid_seated", "t": 1.0, "player": "Ana", "kid": "Lulu", "seat": 3, "colour": "red",
               "picture": "lion", "seated": n}
        text = _suffix(lang, kid, {})
        if lang == "fr":
            assert ("enfants" in text) == (n > 1), text
        assert not re.search(r"\b1 (enfants|kids|crianças)\b", text), text

