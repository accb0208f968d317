"""Extra fields a call's sentence needs, worked out from its own fields (no language here).

A catalogue sentence can only name a call's fields; some of what players need to hear is in
them only in a compact, machine form: the spaces before and after an illegal Carrousel move
(which horses moved?), a Carrossel play's text form (``"Ana: 3 swan"``), a scoring option's text
form, a booth's awards (``{"6": "Bn4>neutral"}``). :func:`derived_fields` turns those into plain
values (names, numbers, lists of small records) that the catalogue then puts into words with its
``[words.*]`` and ``[items]`` tables. Pure functions of the call's JSON form; unknown shapes give
no extra field rather than an error (the sentence then uses what the call has).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["derived_fields"]

Fields = dict[str, Any]

_PLAY = re.compile(r"^(?P<player>.*): (?P<slot>\d+) (?P<animals>[a-z_+]+)(?P<rest>.*)$")
_OPTION = re.compile(r"^(?P<cells>[A-Za-z0-9 ]+):")


def _carrousel_illegal_move(c: Mapping[str, Any]) -> Fields:
    before, after = list(c.get("before", ())), list(c.get("after", ()))
    if len(before) != len(after):
        return {}
    moved = [h for h in before if h not in ("empty", "unknown") and h in after and before.index(h) != after.index(h)]
    return {"moved": moved, "moved_count": len(moved), "too_many": len(moved) > 2, "gap": _has_gap(after)}


def _has_gap(spaces: list[str]) -> bool:
    """Five horses with an empty space between two of them (the two empties not neighbours)."""
    empties = [i for i, s in enumerate(spaces) if s == "empty"]
    n = len(spaces)
    return n == 7 and len(empties) == 2 and (empties[1] - empties[0]) % n not in (1, n - 1)


def _carrousel_penalty(c: Mapping[str, Any]) -> Fields:
    return {"gap": not any(c.get("first_three") or ())}  # judged on a board with a gap


def _carrousel_draw(c: Mapping[str, Any]) -> str:
    """What was drawn after a point: ``card`` (named), ``unseen`` (the camera reads it) or ``none``."""
    return "card" if c.get("next_card") else ("unseen" if c.get("next_unseen") else "none")


def _carrousel_point(c: Mapping[str, Any]) -> Fields:
    return {"own": not c.get("owner") or c.get("owner") == c.get("player"), "draw": _carrousel_draw(c)}


def _carrousel_lucky_bird(c: Mapping[str, Any]) -> Fields:
    return {"draw": _carrousel_draw(c)}


def _first_horse(spaces: list[str]) -> str | None:
    """The first horse of a position (the one with the empty spaces just ahead of it)."""
    n = len(spaces)
    for i, s in enumerate(spaces):
        if s not in ("empty", "unknown") and spaces[(i + 1) % n] == "empty":
            return s
    return None


def _carrousel_dead_end_not_corrected(c: Mapping[str, Any]) -> Fields:
    horse = _first_horse(list(c.get("expected", ())))
    return {"horse": horse} if horse else {}


def _play(text: str) -> Fields:
    m = _PLAY.match(text or "")
    if not m:
        return {}
    return {"slot": int(m.group("slot")), "animals": m.group("animals").split("+")}


_CARROSSEL_REASONS: tuple[tuple[str, re.Pattern[str]], ...] = (  # games/carrossel.py, check_play
    ("not_a_slot", re.compile(r"^slot (?P<slot>\d+) is not a slot of sector (?P<sector>\S+)$")),
    ("occupied", re.compile(r"^slot (?P<slot>\d+) of sector (?P<sector>\S+) is occupied$")),
    ("jump_no_free_slot", re.compile(r"^Jump: sector (?P<sector>\S+) has no free slot below (?P<slot>\d+)$")),
    ("jump_slot_free", re.compile(r"^Jump: slot (?P<slot>\d+) is free, the ability would do nothing$")),
    ("slot_discarded", re.compile(r"^slot card (?P<slot>\d+) is in the discard pile$")),
    ("slot_not_held", re.compile(r"^slot card (?P<slot>\d+) is not one of the player's slot cards$")),
    ("first_round", re.compile(r"^first round: the slot card must be one of (?P<allowed>\d+(?:, \d+)*)$")),
    ("tile_count", re.compile(r"^expected (?P<expected>\d+) animal tile\(s\), one per sector, got (?P<got>\d+)$")),
    ("tiles_left", re.compile(r"^(?P<owner>.+) has (?P<left>\d+) (?P<animal>[a-z]+) tile\(s\) left, "
                              r"the play needs (?P<needed>\d+)$")),
    ("client_not_won", re.compile(r"^client #(?P<client>\d+) is not one of (?P<owner>.+)'s won clients$")),
    ("client_used", re.compile(r"^client #(?P<client>\d+) was already used \(in the discard pile\)$")),
    ("dragon", re.compile(r"^the Dragon client acts when it appears at a booth; it cannot be played$")),
    ("ticket_without_ability", re.compile(r"^ticket: only with the Single ticket \(Horse\) ability$")),
    ("ticket_no_match", re.compile(r"^Single ticket: no client at (?P<owner>.+)'s booth matches (?P<animals>[a-z]+(?:/[a-z]+)*)$")),
    ("ticket_not_matching", re.compile(r"^ticket: client #(?P<ticket>\d+) is not a matching client at (?P<owner>.+)'s booth$")),
    ("already_played", re.compile(r"^already played this round; the reveal is simultaneous$")),
    ("unknown_player", re.compile(r"^unknown player (?P<name>.+)$")),
    ("unknown_animal", re.compile(r"^unknown animal (?P<name>.+) \(known: (?P<known>[a-z]+(?:, [a-z]+)*)\)$")),
)


def _reason_record(reason: str, patterns: tuple[tuple[str, re.Pattern[str]], ...]) -> Fields:
    """A referee's reason as a record: its ``kind`` (choosing its sentence), its parts (numbers
    as ints, ``allowed``, ``animals`` and ``known`` as lists) and its ``text``; ``other`` when no pattern
    matches."""
    for kind, pattern in patterns:
        m = pattern.match(reason)
        if not m:
            continue
        out: Fields = {"kind": kind, "text": reason}
        for k, v in m.groupdict().items():
            out[k] = (_numbers(v) if k == "allowed" else v.split("/") if k == "animals"
                      else v.split(", ") if k == "known" else int(v) if v.isdigit() else v)
        return out
    return {"kind": "other", "text": reason}


def _carrossel_illegal_play(c: Mapping[str, Any]) -> Fields:
    return {**_play(c.get("play", "")), "reasons": [_reason_record(str(c.get("reason", "")), _CARROSSEL_REASONS)]}


def _carrossel_ability_used(c: Mapping[str, Any]) -> Fields:
    detail = str(c.get("detail", ""))
    detail = re.sub(r"\[\]", "none", detail)
    detail = re.sub(r"\[([^\]]*)\]", r"\1", detail).replace("->", "to").replace("#", "")
    return {"detail_text": detail, "details": [_ability_detail(str(c.get("detail", "")))]}


_ABILITY_DETAILS: tuple[tuple[str, re.Pattern[str]], ...] = (  # the referee's detail texts (games/carrossel.py)
    ("removed", re.compile(r"^standees removed from (?P<cells>.+)$")),
    ("jump", re.compile(r"^slot card (?P<slot>\d+) -> slot\(s\) (?P<to>\d+(?:, \d+)*)$")),
    ("recover", re.compile(r"^slot cards \[(?P<slots>[\d, ]*)\] and clients \[(?P<clients>[\d, ]*)\] back in hand$")),
    ("ticket", re.compile(r"^client #(?P<client>\d+) \((?P<animal>[a-z]+)\) sits on (?P<cell>\S+)$")),
)


def _numbers(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"\d+", text)]


def _ability_detail(detail: str) -> Fields:
    """One record of an ability's detail, with the ``kind`` that chooses its sentence:
    ``removed`` (``cells``) or ``removed_none``; ``jump`` (``slot``, ``to``); ``recover``
    (``slots``, ``clients``), ``recover_slots``, ``recover_clients`` or ``recover_none`` by what
    went back; ``ticket`` (``client``, ``animal``, ``cell``); else ``other`` (``text``)."""
    for kind, pattern in _ABILITY_DETAILS:
        m = pattern.match(detail)
        if not m:
            continue
        if kind == "removed":
            cells = [] if m.group("cells") == "no tile" else m.group("cells").split(", ")
            return {"kind": "removed" if cells else "removed_none", "cells": cells, "text": detail}
        if kind == "jump":
            return {"kind": kind, "slot": int(m.group("slot")), "to": _numbers(m.group("to")), "text": detail}
        if kind == "recover":
            slots, clients = _numbers(m.group("slots")), _numbers(m.group("clients"))
            which = ("" if slots and clients else "_slots" if slots else "_clients" if clients else "_none")
            return {"kind": kind + which, "slots": slots, "clients": clients, "text": detail}
        return {"kind": kind, "client": int(m.group("client")), "animal": m.group("animal"), "cell": m.group("cell"),
                "text": detail}
    return {"kind": "other", "text": detail}


_CARNIVAL_REASONS: tuple[tuple[str, re.Pattern[str]], ...] = (  # games/carnival.py, _impossible
    ("no_card_to_draw", re.compile(r"^no card left to draw$")),
    ("discard_empty", re.compile(r"^the discard pile is empty$")),
    ("empty_hand", re.compile(r"^(?P<player>.+) has no card in hand$")),
    ("nothing_to_take", re.compile(r"^(?P<player>.+)'s Midway has no card that may be taken$")),
    ("all_duplicates", re.compile(r"^every card of (?P<player>.+)'s Midway would duplicate one of (?P<me>.+)'s$")),
    ("no_trade", re.compile(r"^no trade with (?P<player>.+) leaves both Midways without a duplicate$")),
    ("no_other_player", re.compile(r"^no other player$")),
)


def _carnival_action_impossible(c: Mapping[str, Any]) -> Fields:
    """``reasons``: one record per reason (the referee joins them with "; "), each with the
    ``kind`` that chooses its sentence and its players (``player``, ``me``); a reason of
    another shape is ``other`` with its ``text``."""
    return {"reasons": [_reason_record(part, _CARNIVAL_REASONS) for part in str(c.get("reason", "")).split("; ") if part]}


def _carrossel_revealed(c: Mapping[str, Any]) -> Fields:
    tiles = []
    cells = c.get("cells", {})
    for player, text in c.get("plays", {}).items():
        play = _play(text)
        if play:
            tiles.append({"player": player, **play, "cells": list(cells.get(player, ()))})
    return {"tiles": tiles}


def _carrossel_sequence_options(c: Mapping[str, Any]) -> Fields:
    choices = []
    for number, text in enumerate(c.get("options", ()), 1):
        m = _OPTION.match(text)
        # Two options may use the same cells with the clients seated the other way round: say
        # which client sits where, or the player cannot tell them apart.
        seats = []
        for token in text.partition(":")[2].split():
            cell, _, rest = token.partition("=")
            client = rest.partition(">")[0].rpartition("#")[2]
            if cell and client:
                seats.append({"client": client, "cell": cell})
        placed = ", ".join(f"{x['client']}\u2192{x['cell']}" for x in seats)  # 16→A2: the same in every language
        choices.append({"number": number, "cells": m.group("cells").split() if m else [], "placed": placed})
    return {"choices": choices, "count": len(choices)}


def _carrossel_scored(c: Mapping[str, Any]) -> Fields:
    clients = []
    for client, where in c.get("awards", {}).items():
        cell, _, owner = str(where).partition(">")
        clients.append({"client": client, "cell": cell, "owner": owner})
    return {"clients": clients}


def _carrossel_turn_board(c: Mapping[str, Any]) -> Fields:
    return {"turn": abs(float(c.get("turn_deg", 0.0)))}


def _carrossel_wrong_turn(c: Mapping[str, Any]) -> Fields:
    turned = float(c.get("turned_deg", 0.0))
    expected = float(c.get("expected_turn_deg", 0.0))
    return {
        "turned": abs(turned),
        "turned_way": "clockwise" if turned >= 0 else "counterclockwise",
        "expected_turn": abs(expected),
        "expected_way": "clockwise" if expected >= 0 else "counterclockwise",
    }


def _carrossel_game_over(c: Mapping[str, Any]) -> Fields:
    reason = str(c.get("reason", ""))
    if reason.startswith("not enough client cards"):
        return {"end": "clients"}
    m = re.match(r"^(?P<player>.+) cannot make a legal move", reason)
    if m:
        return {"end": "stuck", "stuck": m.group("player")}
    return {"end": "other"}


def _carnival_wild_moved(c: Mapping[str, Any]) -> Fields:
    if c.get("to_ride") is None:
        return {"where": "discarded"}
    return {"where": "moved" if c.get("from_ride") else "placed"}


_DERIVED: dict[tuple[str, str], Callable[[Mapping[str, Any]], Fields]] = {
    ("carrousel", "point"): _carrousel_point,
    ("carrousel", "lucky_bird"): _carrousel_lucky_bird,
    ("carrousel", "illegal_move"): _carrousel_illegal_move,
    ("carrousel", "penalty"): _carrousel_penalty,
    ("carrousel", "dead_end_not_corrected"): _carrousel_dead_end_not_corrected,
    ("carrossel", "illegal_play"): _carrossel_illegal_play,
    ("carrossel", "ability_used"): _carrossel_ability_used,
    ("carrossel", "revealed"): _carrossel_revealed,
    ("carrossel", "sequence_options"): _carrossel_sequence_options,
    ("carrossel", "scored"): _carrossel_scored,
    ("carrossel", "turn_board"): _carrossel_turn_board,
    ("carrossel", "wrong_turn"): _carrossel_wrong_turn,
    ("carrossel", "game_over"): _carrossel_game_over,
    ("carnival", "wild_moved"): _carnival_wild_moved,
    ("carnival", "action_impossible"): _carnival_action_impossible,
}


def derived_fields(game: str, call: Mapping[str, Any]) -> Fields:
    """Extra fields for the sentence of ``call`` (its JSON form, with ``type``) in ``game``.

    Carrousel ``point``: ``own`` (the scorer's own card), ``draw`` (``card``: the next card
    named, ``unseen``: turned up for the camera to read, ``none``: no card left; also for
    ``lucky_bird``); ``illegal_move``: ``moved`` (horses
    whose space changed), ``moved_count``, ``too_many`` (more than two moved), ``gap`` (the
    board after it has a gap between horses); ``penalty``: ``gap`` (judged on a board with a gap);
    ``dead_end_not_corrected``: ``horse`` (the one that should have gone to the front).
    Carrossel ``illegal_play``: ``slot``, ``animals``, ``reasons`` (one record, its ``kind``
    choosing its sentence, see ``_CARROSSEL_REASONS``); ``ability_used``: ``detail_text`` (the
    detail without list brackets) and ``details`` (one record, its ``kind`` choosing its
    sentence: ``removed``, ``jump``, ``recover``..., see :func:`_ability_detail`); ``revealed``: ``tiles`` (records of
    ``player``, ``slot``, ``animals``, ``cells``); ``sequence_options``: ``choices`` (records of
    ``number``, ``cells``), ``count``; ``scored``: ``clients`` (records of ``client``, ``cell``,
    ``owner``); ``turn_board``: ``turn`` (degrees, unsigned); ``wrong_turn``: ``turned``,
    ``turned_way``, ``expected_turn``, ``expected_way``; ``game_over``: ``end`` (``clients``,
    ``stuck`` with ``stuck`` the player, or ``other``). Carnival ``wild_moved``: ``where``
    (``moved``, ``placed`` from the hand, ``discarded``); ``action_impossible``: ``reasons``
    (records whose ``kind`` chooses each reason's sentence: ``no_card_to_draw``,
    ``discard_empty``, ``empty_hand``, ``nothing_to_take``, ``all_duplicates``, ``no_trade``,
    ``no_other_player``, with ``player`` and ``me`` where they name one; ``other`` with
    ``text``). Other calls: none.
    """
    fn = _DERIVED.get((game, str(call.get("type", ""))))
    if fn is None:
        return {}
    try:
        return fn(call)
    except (TypeError, ValueError, AttributeError):
        return {}
