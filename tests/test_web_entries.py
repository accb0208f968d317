"""The entries, correction and game pages in a real browser (Debian's headless Chromium driven by
Playwright) against `companion run`: a whole Carrossel game at a real table (the board's turns
on the fake Pico, everything else entered on the page only), a refusal shown in words, a board
corrected on the Carrousel table, a new game started from the game page."""

from __future__ import annotations

import threading

import pytest

from tests.real_table import CallTap, Companion, RunningPico
from tests.web_page import WebTap, shot, web_config


@pytest.fixture
def pico():
    p = RunningPico()
    yield p
    p.close()


def enter(page, obs: dict) -> str:
    """Fill the entries page's form with ``obs`` (field by field, as a player would), send it, and
    return the reply shown on the page."""
    box = page.locator("#reply")
    before = box.get_attribute("data-n") or "0"
    page.select_option("#kind", obs["type"])
    for name, value in obs.items():
        if name in ("type", "t"):
            continue
        field = page.locator(f"#fields [name='{name}']")
        if field.evaluate("e => e.tagName") == "SELECT":
            field.select_option("" if value is None else str(value).lower() if isinstance(value, bool) else str(value))
        else:
            field.fill("" if value is None else ",".join(map(str, value)) if isinstance(value, list) else str(value))
    page.click("#send")
    page.wait_for_function(f"(document.querySelector('#reply').dataset.n || '0') !== '{before}'", timeout=30_000)
    return box.inner_text()


def test_a_carrossel_game_is_played_to_its_end_with_the_page_as_the_only_entry(tmp_path, monkeypatch, mock_factory,
                                                                                 pico, browser):
    from companion.sim.carrossel import generate_game

    script = generate_game(5, ("Ana", "Ben"), uncertain_rate=0.0, angle_noise_deg=2.0)
    config = web_config(tmp_path, players={"names": ["Ana", "Ben"]},
                        encoder={"backend": "pico", "port": pico.port, "index": False, "settle_s": 0.1},
                        service={"announcers": ["console", "lights", "web"]})
    tap, web = CallTap(monkeypatch), WebTap(monkeypatch)
    companion = Companion(tap, config, "carrossel")
    page = browser.new_page(viewport={"width": 420, "height": 900})  # a phone held in one hand
    try:
        companion.wait_bound()
        page.goto(web.url() + "entries")
        page.wait_for_selector("#conn:text('live')")
        # A play that no rule allows is refused, in words, and the game goes on.
        first = script[0].to_json()
        assert "Carrossel starts" in enter(page, first) or tap.next("game_started")
        refused = enter(page, {"type": "play", "player": "Ana", "slot": 99, "animals": ["swan"], "ability": None,
                               "ticket": None})
        assert "not allowed" in refused and "99" in refused, refused
        assert "refused" in page.get_attribute("#reply", "class")
        shot(page, "web-entries")
        angle_cw = 0.0
        for obs in script[1:]:
            if obs.TYPE == "board_turned":  # the board is turned on the real shaft; the Pico counts it
                last_turn = next((c for c in reversed(tap.calls) if c.TYPE == "turn_board"), None)
                delta = (obs.angle_deg - angle_cw) % 360.0
                if (last_turn is not None and last_turn.turn_deg < 0) or (last_turn is None and delta > 180):
                    delta -= 360.0
                if abs(delta) < 1.0:
                    continue
                pico.turn(-delta, rps=1.0)
                angle_cw = obs.angle_deg
                tap.next("board_turned_ok", "wrong_turn", "board_aligned", "invalid_observation")
                continue
            reply = enter(page, obs.to_json())
            assert "not allowed" not in reply and "refused" not in page.get_attribute("#reply", "class"), reply
        over = tap.next("game_over", timeout=30)
        assert companion.join() == 0
    finally:
        page.close()
        companion.stop()
    expected = generate_game(5, ("Ana", "Ben"), uncertain_rate=0.0, angle_noise_deg=2.0)
    from companion.games import referee_for

    ref = referee_for("carrossel")
    state, calls = ref.initial_state(), []
    for obs in expected:
        state, more = ref.apply(state, obs)
        calls += more
    want = [c for c in calls if c.TYPE == "game_over"][0]
    assert over.to_json()["scores"] == want.to_json()["scores"]
    assert over.to_json()["winners"] == want.to_json()["winners"]


def _run(argv, rc):
    from companion.cli import main

    rc.append(main(argv))


def test_a_misread_board_is_corrected_from_the_page_and_judged_by_the_referee(tmp_path, monkeypatch, mock_factory,
                                                                              browser):
    config = web_config(tmp_path, sim={"move_time_s": 30.0, "false_claim_rate": 0.0})
    tap, web = CallTap(monkeypatch), WebTap(monkeypatch)
    rc: list[int] = []
    thread = threading.Thread(target=_run, args=(["run", "--config", str(config), "--table", "sim", "--speed", "0.5",
                                                  "--new", "--next-game", "exit"], rc), daemon=True)
    thread.start()
    page = browser.new_page(viewport={"width": 900, "height": 900})
    try:
        tap.next("game_started")
        page.goto(web.url() + "correct")
        page.wait_for_selector("#conn:text('live')")
        service = tap.services[-1]
        spaces = list(service.referee.summary(service.state)["position"])
        horses = [i for i, c in enumerate(spaces) if c != "."]
        # The camera misread the board: on the table the first two horses stand the other way round.
        before = [page.input_value(f"[name='spaces.{i}']") for i in range(7)]
        a, b = horses[0], horses[1]
        page.select_option(f"[name='spaces.{a}']", before[b])
        page.select_option(f"[name='spaces.{b}']", before[a])
        n = page.get_attribute("#reply", "data-n") or "0"
        page.click("#send")
        page.wait_for_function(f"(document.querySelector('#reply').dataset.n || '0') !== '{n}'", timeout=30_000)
        call = tap.next("move", "illegal_move")
        from companion.web.announcer import sentence_for

        assert sentence_for(call, "carrousel", "en") in page.inner_text("#reply")
        after = list(before)
        after[a], after[b] = before[b], before[a]
        assert list(call.to_json().get("spaces") or call.to_json().get("after")) == after  # judged from the correction
        journaled = [e.body for e in service.journal.entries(service.session)
                     if e.kind == "observation" and e.type == "board"]
        assert any(list(b["spaces"]) == after for b in journaled)  # the correction is an entry of its own
        shot(page, "web-correct")
    finally:
        page.close()
        for s in tap.services:
            s.stop()
        thread.join(15)
    assert rc == [0]


def test_the_game_page_starts_the_next_game_and_refuses_one_while_playing(tmp_path, monkeypatch, mock_factory,
                                                                           browser):
    config = web_config(tmp_path, sim={"move_time_s": 0.05})
    tap, web = CallTap(monkeypatch), WebTap(monkeypatch)
    rc: list[int] = []
    thread = threading.Thread(target=_run, args=(["run", "--config", str(config), "--game", "carrossel", "--table",
                                                  "sim", "--speed", "20", "--new", "--next-game", "wait"], rc),
                              daemon=True)
    thread.start()
    page = browser.new_page(viewport={"width": 900, "height": 800})
    try:
        tap.next("game_started", timeout=30)
        page.goto(web.url() + "game")
        page.wait_for_selector("#conn:text('live')")
        n = page.get_attribute("#reply", "data-n") or "0"
        page.click("#start")  # one game at a time: refused while the Carrossel game is played
        page.wait_for_function(f"(document.querySelector('#reply').dataset.n || '0') !== '{n}'", timeout=30_000)
        assert "must end first" in page.inner_text("#reply")
        tap.next("game_over", timeout=60)
        page.wait_for_selector("#now:text('over')", timeout=30_000)
        page.select_option("#game", "carnival")
        page.click("#start")
        tap.next("game_started", timeout=30)
        assert tap.services[-1].referee.name == "carnival"
        page.wait_for_selector("#now:text('Carnival')", timeout=30_000)
        shot(page, "web-game")
    finally:
        page.close()
        for s in tap.services:
            s.stop()
        thread.join(30)
    assert rc == [0]
