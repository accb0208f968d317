"""One assembly path for every game: :func:`assemble` builds a game's service from its kit.

Each game registers a :class:`Kit` beside :data:`companion.games.GAMES` (in
:data:`companion.games.KITS`): how to build its simulated table and its real inputs, and which
extra announcers and jitter delay it needs. :func:`assemble` does the steps every game shares:
open (or resume) the journal's session, make the clock, the pins, the parts register, the
announcers listed in ``[service] announcers``, the entry source, then asks the kit for the
table's sources, and returns one :class:`~companion.service.Service`. A fifth game is an engine,
a kit and a simulated table; nothing in ``companion/commands/`` changes.

``table`` is ``"sim"`` (the simulated table: seeded players, mock pins, the simulated shaft and
camera) or ``"hardware"`` (only real parts: a part that is missing raises
:class:`~companion.health.PartMissing` naming it and the fix; nothing is ever simulated, mock
pins included: :func:`table_pins`).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from typing import IO, Any

from companion.health import PartMissing, Parts

__all__ = ["Kit", "Rig", "Table", "assemble", "kit_for", "table_pins", "ANNOUNCERS"]

log = logging.getLogger("companion.assembly")

#: The announcers ``[service] announcers`` may list, in the order they are told each call.
ANNOUNCERS = ("console", "speech", "lights", "web")


@dataclasses.dataclass
class Rig:
    """What a kit builds for one table: the sources and the announcers that belong to it.

    Attributes:
        sources: started with the service (buttons, camera, encoder, the simulated table).
        scheduled: sources timed by the loop (``next_time``/``advance``): simulated ones.
        announcers: told every call after the configured announcers (a simulated table reacts
            to the calls; the dice camera learns whose turn it is).
        delay_s: the service's jitter buffer, seconds (a camera's settle time + 2 frames).
        resume: ``resume(state, t)`` of a simulated table, called when an unfinished game is
            restored (the same for every simulated table), or None.
        lines: lines printed on the console once the table is ready (what the players do first).
        prompts: calls whose sentences are rendered into the speech cache at start, on a thread
            of their own (the prompts that must come at once, such as Monsieur Carrousel's weather).
        camera: the table's camera source the web page shows (it keeps ``latest``); None = the
            first source that keeps ``latest`` (:func:`companion.web.camera.camera_of`).
        observers: told ``applied(observation, calls)`` after each observation is journaled
            (a camera that follows the referee's state: Carrossel's plays read from the board).
    """

    sources: list[Any] = dataclasses.field(default_factory=list)
    scheduled: list[Any] = dataclasses.field(default_factory=list)
    announcers: list[Any] = dataclasses.field(default_factory=list)
    delay_s: float = 0.0
    resume: Callable[[Any, float], None] | None = None
    lines: list[str] = dataclasses.field(default_factory=list)
    prompts: list[Any] = dataclasses.field(default_factory=list)
    camera: Any = None
    observers: list[Any] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Table:
    """Everything a kit may use to build its rig (made by :func:`assemble`).

    Attributes:
        game: the game's name; config: the :class:`~companion.config.Config`.
        referee: the game's engine; players: names in seat order; seed: the table's seed.
        opened: the :class:`~companion.service.Opened` session (new or resumed).
        clock: the session clock; kind: ``"sim"`` or ``"hardware"``.
        pin_factory: the gpiozero pin factory; mock_pins: True with gpiozero's mock pins.
        parts: the :class:`~companion.health.Parts` register.
        console: the console announcer (it prints spins, camera states...), or None.
        lights: the LEDs and buzzer announcer, or None.
        options: the command line's choices (``camera`` spec, ``show_moves``, ``speed``).
        on_end: ``on_end(summary)``: a finite source (a video file) has ended; the run stops.
    """

    game: str
    config: Any
    referee: Any
    players: list[str]
    seed: int
    opened: Any
    clock: Any
    kind: str
    pin_factory: Any
    mock_pins: bool
    parts: Parts
    console: Any
    lights: Any
    options: dict[str, Any]
    on_end: Callable[[str], None]

    @property
    def resumed(self) -> bool:
        """True when an unfinished game was restored from the journal."""
        return bool(self.opened.resumed)

    @property
    def hardware(self) -> bool:
        """True at a real table (``--table hardware``)."""
        return self.kind == "hardware"


@dataclasses.dataclass(frozen=True)
class Kit:
    """What a game registers beside its engine so that :func:`assemble` can build its service.

    Attributes:
        game: the game's name (a key of :data:`companion.games.GAMES`).
        options: ``options(config) -> dict``: the referee options journaled with the session.
        simulated: ``simulated(table) -> Rig``: the simulated table (``--table sim``).
        real: ``real(table) -> Rig``: the real inputs (``--table hardware``); raises
            :class:`~companion.health.PartMissing` for a missing part.
        table_settings: ``table_settings(config, players, seed, options) -> dict``: what is
            journaled to resume the same table (default players and seed).
    """

    game: str
    options: Callable[[Any], dict[str, Any]]
    simulated: Callable[[Table], Rig]
    real: Callable[[Table], Rig]
    table_settings: Callable[[Any, list[str], int, dict[str, Any]], dict[str, Any]] = (
        lambda config, players, seed, options: {"players": list(players), "seed": seed}
    )


def kit_for(game: str) -> Kit:
    """The kit registered for ``game`` in :data:`companion.games.KITS`.

    Raises:
        companion.games.UnknownGame: no such game, or a game without a kit.
    """
    import importlib

    from companion.games import GAMES, KITS, UnknownGame

    target = KITS.get(game)
    if target is None:
        known = ", ".join(sorted(k for k in GAMES if k in KITS))
        raise UnknownGame(f"unknown game {game!r} (known: {known})")
    module_name, attr = target.split(":")
    return getattr(importlib.import_module(module_name), attr)


def assemble(game: str, config: Any, journal: Any, clock: Callable[[float], Any], table: str, *,
             players: Sequence[str] | None = None, seed: int | None = None, new: bool = False,
             entries: Any = None, stream: IO[str] | None = None, options: dict[str, Any] | None = None,
             on_end: Callable[[str], None] | None = None, heartbeat: Any = None) -> Any:
    """Build the service of ``game`` at a simulated or a real table.

    Args:
        game: a game name of :data:`companion.games.KITS`.
        config: the :class:`~companion.config.Config`.
        journal: the open :class:`~companion.journal.Journal`.
        clock: ``clock(origin_s) -> Clock``: the origin is 0 for a new game and just after the
            last journaled time when resuming.
        table: ``"sim"`` or ``"hardware"``.
        players: names in seat order (default ``[players] names``); seed: the table's seed
            (default ``[sim] seed``); both are the journal's when a game is resumed.
        new: start a new game even if the journal holds an unfinished one.
        entries: the :class:`~companion.sources.entries.EntryServer`, or None.
        stream: where the console writes (default standard output).
        options: ``camera`` (a spec, overriding ``[camera] source``), ``show_moves``, ``web`` (the
            web page's :class:`~companion.web.hub.Hub`, for the ``web`` announcer; None = no page).
        on_end: called with a one-line summary when a finite source (a video file) ends.
        heartbeat: the service's heartbeat (the systemd watchdog), or None.

    Returns:
        The :class:`~companion.service.Service`, not yet running. Its ``parts`` attribute is the
        :class:`~companion.health.Parts` register, ``speech`` the speech announcer or None.

    Raises:
        PartMissing: at a real table, a part that is missing or fails (the message names it
            and the fix).
        ValueError: a bad calibration or data file (the message names it).

    A start that raises leaves no new session in the journal (the empty one it opened is
    discarded: :meth:`~companion.journal.Journal.discard_session`); a resumed game is kept.
    """
    from companion.games import referee_from_config
    from companion.service import Service, open_session

    if table not in ("sim", "hardware"):
        raise ValueError(f"table: expected 'sim' or 'hardware', got {table!r}")
    kit = kit_for(game)
    options = dict(options or {})
    referee = referee_from_config(game, config)
    players = list(players or config["players"]["names"])
    seed = config["sim"]["seed"] if seed is None else seed
    referee_options = kit.options(config)
    settings = {**kit.table_settings(config, players, seed, options), "table": table}
    opened = open_session(referee, journal, referee_options, settings, new)
    # A start refused before anything was observed (a part missing) leaves no session: the
    # empty one just opened is discarded (a resumed game's is kept, whatever happens).
    try:
        players = list(opened.table.get("players", players))
        seed = int(opened.table.get("seed", seed))
        the_clock = clock(opened.origin)
        parts = Parts(clock=the_clock.now)
        factory, mock_pins = table_pins(config, table, parts)
        names = list(config["service"]["announcers"])
        if table == "hardware" and not names:
            raise ValueError("[service] announcers is empty: at a real table nothing would tell the players "
                             "the calls; list console, speech and/or lights")
        console = speech = lights = None
        if "console" in names:
            from companion.announcers.console import ConsoleAnnouncer

            console = ConsoleAnnouncer(stream=stream, show_moves=options.get("show_moves", True), game=game,
                                       language=config["speech"]["language"])
        if "lights" in names:
            lights = _lights(game, config, players, factory, parts)
        if "speech" in names and config["speech"]["enabled"]:
            speech = _speech(game, config, table, lights, parts)
        web = None
        if "web" in names and config["web"]["enabled"] and options.get("web") is not None:
            from companion.web import WebAnnouncer

            web = WebAnnouncer(options["web"], game, players, table)  # the page's server runs in `companion run`
        ended: list[str] = []
        service_box: list[Any] = []

        def end(summary: str) -> None:
            ended.append(summary)
            if on_end is not None:
                on_end(summary)
            if service_box:
                service_box[0].stop()

        ctx = Table(game=game, config=config, referee=referee, players=players, seed=seed, opened=opened,
                    clock=the_clock, kind=table, pin_factory=factory, mock_pins=mock_pins, parts=parts,
                    console=console, lights=lights, options=options, on_end=end)
        rig = kit.real(ctx) if table == "hardware" else kit.simulated(ctx)
        if opened.resumed and rig.resume is not None and opened.state is not None:
            rig.resume(opened.state, the_clock.now())
        if speech is not None and rig.prompts:
            _warm(speech, game, rig.prompts)
        by_name = {"console": console, "speech": speech, "lights": lights, "web": web}
        # Speech before the lights: on close it finishes its prompts while the buzzer still works.
        announcers = [by_name[n] for n in ANNOUNCERS if n in names and by_name[n] is not None]
        sources = list(rig.sources)
        observers: list[Any] = list(rig.observers)
        if entries is not None:
            entry_source = entries.source(game, referee.vocabulary)
            sources.append(entry_source)
            observers.append(entry_source)
            parts.set("entry socket", "ok", str(entries.path))
        service = Service(referee, the_clock, journal=journal, session=opened.session, sources=sources,
                          scheduled=rig.scheduled, announcers=[*announcers, *rig.announcers],
                          state=opened.state, last_t=opened.last_t, delay_s=rig.delay_s, observers=observers,
                          paused=lambda: parts.any_lost, heartbeat=heartbeat,
                          paused_at=the_clock.now() if opened.paused else None,  # paused by the players
                          restate=opened.asked)  # a resumed game says again what it waits for
        service_box.append(service)
        if web is not None:
            from companion.web.camera import CameraView, camera_of

            camera = camera_of(rig)  # the camera page's frames: encoded only when a page asks
            options["web"].camera = CameraView(camera, config) if camera is not None else None
            web.attach(service)
        parts.tell = service.tell
        parts.note_table = service.note_table  # type: ignore[attr-defined]  # a part's settings kept for a restart
        service.parts = parts  # type: ignore[attr-defined]
        service.speech = speech  # type: ignore[attr-defined]
        service.table_kind = table  # type: ignore[attr-defined]
        service.ended = ended  # type: ignore[attr-defined]
        service.players = players  # type: ignore[attr-defined]
        out = console.stream if console is not None else None
        if out is not None:
            if opened.resumed:
                out.write(f"resumed session {opened.session} at t={opened.last_t:.1f} s after {opened.n} "
                          f"observations{_scores(referee.summary(opened.state))}\n")
            for line in rig.lines:
                out.write(line + "\n")
            out.flush()
        return service
    except BaseException:
        if not opened.resumed:
            from companion.journal import JournalError

            try:
                journal.discard_session(opened.session)
            except JournalError as exc:  # the refusal is the news; the empty session stays
                log.warning("%s", exc)
        raise


def _warm(speech: Any, game: str, prompts: Sequence[Any]) -> None:
    """Render the sentences of ``prompts`` into the speech cache on a thread of their own, so
    that they play at once when called (espeak-ng takes tens of milliseconds a sentence here,
    more on a Pi)."""
    import threading

    texts: list[str] = []
    for call in prompts:
        text = speech.catalogue.text(call, game)
        if text and text not in texts:
            texts.append(text)
    threading.Thread(target=speech.warm, args=(texts,), name="speech-warm", daemon=True).start()


def _scores(summary: Any) -> str:
    scores = summary.get("scores") if isinstance(summary, dict) else None
    if not isinstance(scores, dict) or not scores:
        return ""
    return "; scores: " + ", ".join(f"{p} {s}" for p, s in scores.items())


def table_pins(config: Any, table: str, parts: Parts | None = None) -> tuple[Any, bool]:
    """The gpiozero pin factory of a table, from ``[service] pin_factory``.

    Args:
        config: the :class:`~companion.config.Config`.
        table: ``"sim"`` (mock pins are fine: the simulated players press them) or
            ``"hardware"`` (real pins only).
        parts: the parts register, told the pins' state (``ok`` or ``mock``); None = not told.

    Returns:
        ``(factory, is_mock)``.

    Raises:
        PartMissing: at a real table, no real pins: not a Raspberry Pi (``auto``), a named
            factory that cannot start, or ``[service] pin_factory = "mock"``, pretend pins that
            no button at the table drives (the line names the key, as ``companion doctor``
            does). Only a test lends mock pins to a real table
            (:func:`companion.pins.mock_pins_for_tests`).
    """
    from companion.pins import PinFactoryError, is_raspberry_pi, make_pin_factory, pins_for_tests

    name = config["service"]["pin_factory"]
    no_pins = PartMissing("GPIO pins", "this is not a Raspberry Pi, so there are no buttons, LEDs or buzzer",
                          "run on the Pi, or play the simulated table with --table sim")
    if table == "hardware" and name == "mock":
        lent = pins_for_tests()
        if lent is None:
            where = str(config.source) if getattr(config, "source", None) else "the configuration file"
            raise PartMissing("GPIO pins", "[service] pin_factory is 'mock' (pretend pins: no button, LED or buzzer "
                              "of the table would work)",
                              f'set [service] pin_factory = "auto" in {where}, or play the simulated table '
                              "with --table sim")
        if parts is not None:
            parts.set("pins", "mock", "gpiozero mock pins lent by a test (companion.pins.mock_pins_for_tests)")
        return lent, True
    if table == "hardware" and name == "auto" and not is_raspberry_pi():
        raise no_pins
    if table == "hardware" and name == "auto":  # a Pi: its GPIO library must start, never mock pins
        from companion import pins

        try:
            factory = pins._default_factory_quietly()
        except Exception as exc:  # gpiozero raises many kinds here (BadPinFactory, ImportError...)
            raise PartMissing("GPIO pins", f"this Raspberry Pi's GPIO cannot start ({exc})",
                              "install lgpio (./dev installs it, or .venv/bin/pip install lgpio), add the user "
                              "to the gpio group; `companion doctor` checks each; or play the simulated table "
                              "with --table sim") from None
        if parts is not None:
            parts.set("pins", "ok", f"gpiozero {type(factory).__name__}")
        return factory, False
    try:
        factory, is_mock = make_pin_factory(name)
    except PinFactoryError as exc:
        raise PartMissing("GPIO pins", str(exc), "run on the Raspberry Pi with lgpio installed "
                          "(./dev installs it there), or fix [service] pin_factory") from None
    if is_mock:
        if table == "hardware":
            raise no_pins  # 'auto' on a Pi whose GPIO library failed
        if parts is not None:
            parts.set("pins", "mock", "gpiozero mock pins" + (" (pin_factory = mock)" if name == "mock" else ""))
    elif parts is not None:
        parts.set("pins", "ok", f"gpiozero {type(factory).__name__}")
    return factory, is_mock


def gpio_part(what: str, build: Callable[[], Any]) -> Any:
    """Build a gpiozero device group; a pin that cannot be used is :class:`PartMissing`."""
    try:
        return build()
    except Exception as exc:
        if type(exc).__module__.startswith("gpiozero"):
            raise PartMissing(what, f"GPIO: {exc}", "check [pins] in the configuration and that no "
                              "other program uses those pins") from None
        raise


def _lights(game: str, config: Any, players: Sequence[str], factory: Any, parts: Parts) -> Any:
    from companion.announcers.lights import LightsAndBuzzer

    pins = config["pins"]
    return gpio_part("LEDs and buzzer", lambda: LightsAndBuzzer(list(players), pins["player_leds"], pins["buzzer"],
                                                                 factory, game=game))


def _speech(game: str, config: Any, table: str, lights: Any, parts: Parts) -> Any:
    """The speech announcer; at a real table, an audio output is required. At any table the
    WAV cache folder ``[speech] cache_dir`` must be writable (espeak-ng renders every prompt
    into it): one that is not stops the start with one line naming the key (a
    :class:`~companion.announcers.speech.CacheDirError`, a ValueError), rather than a failure at
    every prompt."""
    from companion.announcers.speech import (
        AudioPlayer,
        Catalogue,
        CatalogueError,
        SpeechAnnouncer,
        check_cache_dir,
    )

    sp = config["speech"]
    try:
        Catalogue(sp["language"])
    except CatalogueError as exc:
        raise ValueError(f"[speech] language: {exc}") from None
    check_cache_dir(sp["cache_dir"], getattr(config, "source", None))
    player = AudioPlayer(device=sp["device"], timeout_s=sp["timeout_s"])
    device = f"aplay{' -D ' + sp['device'] if sp['device'] else ''}"
    if table == "hardware":
        # At a real table the device must really play: a tenth of a second of silence.
        problem = player.check()
        if problem:
            raise PartMissing("audio output", problem + (f" (device {sp['device']!r})" if sp["device"] else ""),
                              "plug a USB speaker or a speaker on the 3.5 mm jack and check `aplay -l` "
                              "(hardware/audio.md), pick [speech] device from `aplay -L`, or "
                              "[speech] enabled = false")
        parts.set("audio", "ok", device)
    elif player.available():
        parts.set("audio", "ok", device)
    else:
        parts.set("audio", "missing", "no sound card: prompts are written as WAV files and the buzzer plays them")
    return SpeechAnnouncer(game, sp["language"], voice=sp["voice"], cache_dir=sp["cache_dir"],
                           speed_wpm=sp["speed_wpm"], timeout_s=sp["timeout_s"], device=sp["device"],
                           buzzer=lights)
