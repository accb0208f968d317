"""``companion run --game monsieur-carrousel``: the Monsieur Carrousel service.

Assembles the referee, the kids' YES/NO and die buttons, the LEDs and buzzer, the console, the
spoken prompts (espeak-ng, ``[speech]``) and the simulated table (``[monsieur_carrousel_sim]``):
simulated children roll the die, seat the kids, spin the carousel and press YES or NO when
asked. Every observation and call is journaled; an unfinished game is resumed with its players
and seed. With no audio device every prompt is still rendered and written as a WAV file in
``[speech] cache_dir``, and the buzzer plays the prompt's pattern.

Called by :mod:`companion.commands.run` (see that command for the options).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import IO, Any

from companion.events import Call

__all__ = ["build_monsieur_carrousel_service", "PromptConsole", "GAME"]

GAME = "monsieur-carrousel"


class PromptConsole:
    """Console announcer that prints each call as the sentence the kids hear (in the
    configured language), with the raindrops and seats where they change; calls without a
    sentence are printed as the general console does.

    Args:
        catalogue: the :class:`~companion.announcers.speech.Catalogue` of the language.
        stream: a text stream (default: standard output); flushed after every line.
    """

    def __init__(self, catalogue: Any, stream: IO[str] | None = None):
        self.catalogue = catalogue
        self.stream = stream or sys.stdout

    def announce(self, call: Call, summary: Mapping[str, Any]) -> None:
        """Print the call's line: session time (s), then the sentence."""
        from companion.announcers.console import describe

        text = self.catalogue.text(call, GAME) if call.TYPE != "invalid_observation" else None
        if text is None:
            text = describe(call)
        data = call.to_json()
        if call.TYPE in ("raindrop", "sunbeam_judged"):
            text += f"  [raindrops {data['raindrops']} of {summary.get('raindrops_max', 8)}]"
        elif call.TYPE == "kid_seated":
            text += f"  [seat {data['seat']}; {data['seated']} of 12 seated]"
        try:
            self.stream.write(f"{call.t:9.1f} s  {text}\n")
            self.stream.flush()
        except (OSError, ValueError):
            pass  # a closed terminal must not stop the referee

    def show_spin(self, obs: Any) -> None:
        """Print a spin seen by the encoder: its start, or its stop with turns and angle."""
        if obs.TYPE == "spin_started":
            text = "(the carousel turns)"
        elif obs.TYPE == "spin_stopped":
            doubt = f"; uncertain: {obs.reason}" if getattr(obs, "uncertain", False) else ""
            text = (f"(the carousel stops: {obs.revolutions:.2f} turns {obs.direction}, "
                    f"at {obs.angle_deg:.1f} degrees{doubt})")
        else:
            return
        try:
            self.stream.write(f"{obs.t:9.1f} s  {text}\n")
            self.stream.flush()
        except (OSError, ValueError):
            pass

    def close(self) -> None:
        """Nothing to release."""


def _shaft_spins(config: Any, angle_deg: float, seed: int, vocabulary: Any = None) -> Any:
    """The simulated shaft and the rotation tracker, when ``[encoder] backend`` is ``sim`` (or
    ``auto`` with no Pico plugged in): the simulated table's spins are then made by the
    shaft's physics and reported by the tracker. None for a real encoder."""
    from companion.rotation import reader_from_config, tracker_from_config
    from companion.rotation.simulated import SimulatedShaft
    from companion.sim.shaft import ShaftSpins

    reader = reader_from_config(config)
    if not isinstance(reader, SimulatedShaft):
        return None
    reader.stop()
    enc = config["encoder"]
    cpr = 4 * enc["lines_per_rev"]
    shaft = SimulatedShaft(counts_per_rev=cpr, seed=seed, spin_every_s=None, drop_every_s=None,
                           index_count=0 if enc["index"] else None,
                           start_count=round(angle_deg / 360.0 * cpr))
    convert = (lambda obs: vocabulary.observation(obs.to_json())) if vocabulary is not None else None
    return ShaftSpins(shaft, tracker_from_config(config, shaft), convert=convert)


def build_monsieur_carrousel_service(
    config: Any,
    opts: dict[str, Any],
    make_clock: Any,
    journal: Any,
    new: bool = False,
    stream: Any = None,
    speak: bool | None = None,
) -> Any:
    """Assemble the Monsieur Carrousel service on the simulated table.

    Args:
        config: the :class:`~companion.config.Config`.
        opts: merged command-line options (``service``, ``sim``, ``players``) of
            :mod:`companion.commands.run`.
        make_clock: ``make_clock(origin_s) -> Clock``.
        journal: the open :class:`~companion.journal.Journal`.
        new: start a new game even if the journal has an unfinished one.
        stream: where the console writes (default standard output).
        speak: override ``[speech] enabled``.

    Returns:
        The :class:`~companion.service.Service` (not yet running); its ``speech`` attribute is
        the :class:`~companion.announcers.speech.SpeechAnnouncer`, or None.

    Raises:
        companion.pins.PinFactoryError: the configured pin factory cannot start.
        companion.cli.UsageError: a wrong seat layouts file or layout name.
    """
    import dataclasses

    from companion.announcers.lights import LightsAndBuzzer
    from companion.announcers.speech import Catalogue, CatalogueError, SpeechAnnouncer
    from companion.cli import UsageError
    from companion.games import referee_from_config
    from companion.games.monsieur_carrousel import TableError
    from companion.pins import make_pin_factory
    from companion.service import Service, open_session
    from companion.sim.monsieur_carrousel import MonsieurCarrouselTable, settings_from_config
    from companion.sources.kid_buttons import KidButtons

    players = list(opts["players"])
    seed = opts["sim"]["seed"]
    pins = config["pins"]
    sp = config["speech"]
    try:
        referee = referee_from_config(GAME, config)
        catalogue = Catalogue(sp["language"])
    except (TableError, CatalogueError, ValueError) as exc:
        raise UsageError(f"[monsieur_carrousel]: {exc}") from None
    opened = open_session(referee, journal, dict(config["monsieur_carrousel"]), {"players": players, "seed": seed}, new)
    state, last_t, n, session = opened.state, opened.last_t, opened.n, opened.session
    players, seed = list(opened.table["players"]), opened.table["seed"]
    factory, _is_mock = make_pin_factory(opts["service"]["pin_factory"])
    lights = LightsAndBuzzer(players, pins["player_leds"], pins["buzzer"], factory)
    buttons = KidButtons(pins["yes_button"], pins["no_button"], pins["die_button"], referee.table.die_colours,
                         config["buttons"]["bounce_s"], factory)
    console = PromptConsole(catalogue, stream)
    speech = None
    if sp["enabled"] if speak is None else speak:
        speech = SpeechAnnouncer(GAME, sp["language"], voice=sp["voice"], cache_dir=sp["cache_dir"],
                                 speed_wpm=sp["speed_wpm"], timeout_s=sp["timeout_s"], device=sp["device"],
                                 buzzer=lights)
    clock = make_clock(opened.origin)
    settings = dataclasses.replace(settings_from_config(config), seed=seed, players=tuple(players))
    table = MonsieurCarrouselTable(settings, referee.table)
    shaft = _shaft_spins(config, table.angle_deg, seed, referee.vocabulary)
    if shaft is not None:
        shaft.show = console.show_spin
    table.shaft = shaft
    if state is not None and state.phase != "setup":
        table.resume(state, clock.now())
        console.stream.write(f"resumed session {session} at t={last_t:.1f} s after {n} observations: "
                             f"{state.seated} kids seated, {state.raindrops} raindrops\n")
        console.stream.flush()
    # Speech before the lights: on close it finishes its prompts while the buzzer still works.
    announcers: list[Any] = [console] + ([speech] if speech else []) + [lights, table]
    rotation = [shaft] if shaft is not None else []
    service = Service(referee, clock, journal=journal, session=session, sources=[buttons, table, *rotation],
                      scheduled=[table, *rotation], announcers=announcers, state=state, last_t=last_t)
    service.speech = speech  # type: ignore[attr-defined]
    return service
