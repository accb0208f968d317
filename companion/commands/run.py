"""Run the referee service.

With no hardware (a laptop, CI) it plays on the simulated table: seeded players move the
horses at human pace, press their claim buttons (gpiozero mock pins), make mistakes and stall
into dead ends; every call is printed as it happens, and the LEDs and buzzer patterns are
driven on the mock pins. --speed runs the table's clock faster than real time.

Every observation and call is appended to the journal. If the journal holds an unfinished
game (the service was stopped or the power went), it is resumed with the same scores; --new
starts a fresh game instead.

Examples:
  companion run                        # simulated Carrousel table, real time
  companion run --speed 10 --seed 7    # ten times faster, another game
  companion run --journal /tmp/j.db --new
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import math
import signal
import sys
from typing import Any

__all__ = ["configure", "run", "build_carrousel_service"]

log = logging.getLogger("companion.run")


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``companion run``; each overrides its configuration key."""
    from companion.cli import finite_float

    parser.add_argument("--game", help="game to referee (default: [service] game)")
    parser.add_argument("--table", choices=["auto", "sim", "hardware"], help="'sim' = the simulated table")
    parser.add_argument("--speed", type=finite_float, help="simulated clock speed, 0.1-1000 (default 1)")
    parser.add_argument("--seed", type=int, help="seed of the simulated table")
    parser.add_argument("--players", help="comma-separated names, 2-4 (default: [players] names)")
    parser.add_argument("--journal", help="journal file (default: [service] journal)")
    parser.add_argument("--new", action="store_true", help="start a new game even if one is unfinished")
    parser.add_argument("--quiet-moves", action="store_true", help="do not print every legal move")
    parser.add_argument(
        "--until", type=finite_float, metavar="SECONDS", help="stop at this session time (the game stays resumable)"
    )
    parser.add_argument(
        "--camera",
        metavar="SPEC",
        help="Carrousel read by a camera: picamera2, opencv:0, opencv:FILE_OR_URL, folder:PATH "
        "(a real table), or sim (the simulated table seen through the simulated camera)",
    )


def _options(args: argparse.Namespace, config: Any) -> dict[str, Any]:
    """Merge command-line overrides into the configuration, checked like the file."""
    from companion.cli import UsageError

    svc = dict(config["service"])
    sim = dict(config["sim"])
    players = list(config["players"]["names"])
    if args.speed is not None:
        if not 0.1 <= args.speed <= 1000:
            raise UsageError(f"--speed: expected a number from 0.1 to 1000, got {args.speed}")
        svc["speed"] = args.speed
    if args.seed is not None:
        if args.seed < 0:
            raise UsageError(f"--seed: expected an integer >= 0, got {args.seed}")
        sim["seed"] = args.seed
    if args.players is not None:
        players = [p.strip() for p in args.players.split(",")]
        if not 2 <= len(players) <= 4 or len(set(players)) != len(players) or not all(players):
            raise UsageError(f"--players: expected 2 to 4 distinct names separated by commas, got {args.players!r}")
    if args.table:
        svc["table"] = args.table
    if args.journal:
        svc["journal"] = args.journal
    if args.game:
        svc["game"] = args.game
    return {"service": svc, "sim": sim, "players": players}


def build_carrousel_service(config: Any, opts: dict[str, Any], make_clock: Any, journal: Any, new: bool = False,
                            stream: Any = None, show_moves: bool = True, camera: str | None = None) -> Any:  # noqa: C901
    """Assemble the Carrousel service on the simulated table: referee, buttons, lights and
    buzzer, console, simulated players; resumes the journal's unfinished game unless ``new``.

    Args:
        config: the :class:`~companion.config.Config`.
        opts: the merged options of :func:`_options` (service, sim, players).
        make_clock: ``make_clock(origin_s) -> Clock``; the origin is 0 for a new game and
            just after the last journaled time when resuming.
        journal: the open :class:`~companion.journal.Journal`.
        new: start a new game even if the journal has an unfinished one.
        stream: where the console writes (default standard output).
        show_moves: print every legal move.
        camera: ``"sim"`` (or ``"sim:SEED"``): the simulated players' horses and cards are
            rendered by the simulated camera and the referee learns them only from the frames,
            through the camera reader; None: the table sends its readings directly.

    Returns:
        The :class:`~companion.service.Service` (not yet running).

    Raises:
        companion.pins.PinFactoryError: the configured pin factory cannot start.
        ValueError: a bad camera calibration file.
    """
    from companion.announcers.console import ConsoleAnnouncer
    from companion.announcers.lights import LightsAndBuzzer
    from companion.games import referee_from_config
    from companion.pins import make_pin_factory
    from companion.service import Service, open_session
    from companion.sim.carrousel import SimulatedCarrouselTable
    from companion.sources.buttons import ClaimButtons

    pins = config["pins"]
    referee = referee_from_config("carrousel", config)
    sim_opts = opts["sim"]
    carrousel = config["carrousel"]
    options = {"advanced": carrousel["advanced"], "dead_end_s": carrousel["dead_end_s"]}
    opened = open_session(referee, journal, options, {"players": opts["players"], "seed": sim_opts["seed"]}, new)
    state, last_t, n, session = opened.state, opened.last_t, opened.n, opened.session
    players = [p.name for p in state.players] if state is not None and state.players else list(opened.table["players"])
    factory, is_mock = make_pin_factory(opts["service"]["pin_factory"])
    buttons = ClaimButtons(players, pins["claim_buttons"], config["buttons"]["bounce_s"], factory)
    lights = LightsAndBuzzer(players, pins["player_leds"], pins["buzzer"], factory)
    console = ConsoleAnnouncer(stream=stream, show_moves=show_moves)

    def press(seat: int) -> None:
        pin = buttons.mock_pin(seat)
        pin.drive_low()  # the button pulls the pin to ground...
        pin.drive_high()  # ...and is released

    clock = make_clock(opened.origin)
    scheduled_camera = None
    delay_s = 0.0
    camera_options: dict[str, Any] = {}
    if camera is not None:
        from companion.sources.carrousel_camera import (
            ScheduledCamera,
            camera_source_from_config,
            default_seats,
        )

        spec = camera if ":" in camera else f"sim:{sim_opts['seed']}"
        source = camera_source_from_config(
            config, players, spec=spec, clock=lambda: clock.now(),
            on_status=lambda text: log.info("camera: %s", text),
        )
        period = config["camera"]["frame_period_s"] or 0.1
        source.stamp_first_seen = True
        delay_s = config["camera"]["settle_s"] + 2 * period  # the service's jitter buffer
        scheduled_camera = ScheduledCamera(source, period_s=period, start_t=clock.now())
        camera_options = {
            "camera": source.frames,
            "seats": list(config["camera"]["seats"] or default_seats(len(players))),
            "camera_latency_s": config["camera"]["settle_s"] + 3 * period,
        }
    sim = SimulatedCarrouselTable(
        players,
        seed=opened.table["seed"],
        move_time_s=sim_opts["move_time_s"],
        illegal_rate=sim_opts["illegal_rate"],
        false_claim_rate=sim_opts["false_claim_rate"],
        stall_rate=sim_opts["stall_rate"],
        dead_end_s=carrousel["dead_end_s"],
        advanced=carrousel["advanced"],
        press=press if is_mock else None,
        start_t=clock.now(),
        **camera_options,
    )
    if opened.resumed:
        summary = referee.summary(state)
        if state.position is not None:
            sim.resume(state.position, summary, clock.now())
        scores = ", ".join(f"{p} {s}" for p, s in summary["scores"].items())
        console.stream.write(
            f"resumed session {session} at t={last_t:.1f} s after {n} observations; scores: {scores}\n"
        )
        console.stream.flush()
    extra = [scheduled_camera] if scheduled_camera is not None else []
    return Service(
        referee,
        clock,
        journal=journal,
        session=session,
        sources=[buttons, sim, *extra],
        scheduled=[sim, *extra],
        announcers=[console, lights, sim],
        state=state,
        last_t=last_t,
        delay_s=delay_s,
    )


class FirstBoardStarts:
    """Wraps a real table's camera source: the game starts (``game_start``) with the first
    full reading of the board; the cards the camera reads then correct the tracked ones.

    Args:
        source: the camera source.
        players: names in seat order; options: ``advanced``, ``dead_end_s``.
        started: True when resuming a game that has started already.
    """

    def __init__(self, source: Any, players: list[str], options: dict[str, Any], started: bool):
        self.source = source
        self.players = players
        self.options = options
        self.started = started
        self._early_cards: list[Any] = []

    def start(self, emit: Any, clock: Any) -> None:
        """Start the camera; hold its cards until the game has started."""
        import secrets

        from companion.games.carrousel import UNKNOWN, Board, GameStart

        def wrapped(obs: Any) -> None:
            if not self.started:
                if isinstance(obs, Board) and UNKNOWN not in obs.spaces:
                    self.started = True
                    # A physical deck: its order is not known, the camera's cards correct it.
                    emit(GameStart(t=obs.t, players=tuple(self.players), spaces=obs.spaces,
                                   seed=secrets.randbelow(2**31), **self.options))
                    for card in self._early_cards:
                        emit(dataclasses.replace(card, t=obs.t))
                else:
                    self._early_cards.append(obs)
                return
            emit(obs)

        self.source.start(wrapped, clock)

    def stop(self) -> None:
        """Stop the camera."""
        self.source.stop()


def build_camera_service(config: Any, opts: dict[str, Any], journal: Any, spec: str, new: bool = False,
                         stream: Any = None, show_moves: bool = True) -> Any:
    """Assemble the Carrousel service on a real table: the camera reader (its own thread, the
    real clock), the claim buttons, LEDs and buzzer, the console; resumes the journal's
    unfinished game unless ``new``.

    Raises:
        ValueError: a bad camera spec or calibration file.
        companion.vision.frames.FrameSourceError: the camera cannot be opened.
    """
    from companion.announcers.console import ConsoleAnnouncer
    from companion.announcers.lights import LightsAndBuzzer
    from companion.clock import MonotonicClock
    from companion.games import referee_from_config
    from companion.pins import make_pin_factory
    from companion.service import Service, open_session
    from companion.sources.buttons import ClaimButtons
    from companion.sources.carrousel_camera import camera_source_from_config

    referee = referee_from_config("carrousel", config)
    carrousel = config["carrousel"]
    options = {"advanced": carrousel["advanced"], "dead_end_s": carrousel["dead_end_s"]}
    opened = open_session(referee, journal, options, {"players": list(opts["players"]), "camera": spec}, new)
    state = opened.state
    players = [p.name for p in state.players] if state is not None and state.players else list(opened.table["players"])
    clock = MonotonicClock(origin=opened.origin)
    camera = camera_source_from_config(config, players, spec=spec, clock=clock.now,
                                       on_status=lambda text: log.info("camera: %s", text))
    camera.stamp_first_seen = True
    period = config["camera"]["frame_period_s"] or 0.1
    factory, _ = make_pin_factory(opts["service"]["pin_factory"])
    pins = config["pins"]
    buttons = ClaimButtons(players, pins["claim_buttons"], config["buttons"]["bounce_s"], factory)
    lights = LightsAndBuzzer(players, pins["player_leds"], pins["buzzer"], factory)
    console = ConsoleAnnouncer(stream=stream, show_moves=show_moves)
    return Service(referee, clock, journal=journal, session=opened.session,
                   sources=[FirstBoardStarts(camera, players, options, started=opened.resumed), buttons],
                   announcers=[console, lights], state=opened.state, last_t=opened.last_t,
                   # a claim is judged on the board as it stood at the press, which the camera
                   # reports only once stable: everything is applied settle_s + 2 frames late
                   delay_s=config["camera"]["settle_s"] + 2 * period)


def build_stream_service(game: str, config: Any, opts: dict[str, Any], make_clock: Any, journal: Any,
                         new: bool = False, stream: Any = None) -> Any:
    """Assemble the service for a game whose simulated table is a seeded stream of
    observations (Carrossel, Carnival): referee, simulated table, console; resumes the
    journal's unfinished game (the same seed replays the same stream, so what the journal
    holds is skipped) unless ``new``.

    Args: as :func:`build_carrousel_service`.

    Returns:
        The :class:`~companion.service.Service` (not yet running).
    """
    from companion.announcers.console import ConsoleAnnouncer
    from companion.games import referee_from_config
    from companion.service import Service, open_session

    referee = referee_from_config(game, config)
    section = game.replace("-", "_")
    options = dict(config[section]) if section in config.values else {}
    opened = open_session(referee, journal, options, {"players": list(opts["players"]), "seed": opts["sim"]["seed"]}, new)
    state, last_t, n, session = opened.state, opened.last_t, opened.n, opened.session
    players, seed = list(opened.table["players"]), opened.table["seed"]
    clock = make_clock(opened.origin)
    if game == "carrossel":
        from companion.sim.carrossel import SimulatedCarrosselTable

        sim: Any = SimulatedCarrosselTable(seed=seed, players=players)
    elif game == "carnival":
        from companion.sim.carnival import SimulatedCarnivalTable

        sim = SimulatedCarnivalTable(players, seed=seed, move_time_s=opts["sim"]["move_time_s"],
                                     start_t=clock.now())
    else:  # pragma: no cover - guarded by SIM_TABLES
        raise ValueError(game)
    console = ConsoleAnnouncer(stream=stream)
    if opened.resumed:
        sim.resume(n, clock.now())
        console.stream.write(f"resumed session {session} at t={last_t:.1f} s after {n} observations\n")
        console.stream.flush()
    return Service(referee, clock, journal=journal, session=session, sources=[sim], scheduled=[sim],
                   announcers=[console], state=state, last_t=last_t)


#: Games `companion run` can play on the simulated table.
SIM_TABLES = ("carrousel", "carrossel", "carnival", "monsieur-carrousel")


def _check_resume(args: argparse.Namespace, journal: Any, game: str) -> None:
    """Refuse --players/--seed that contradict the unfinished game about to be resumed."""
    from companion.cli import UsageError

    if args.new or (args.players is None and args.seed is None):
        return
    unfinished = journal.unfinished(game)
    if unfinished is None:
        return
    raise UsageError(
        f"{journal.path} holds an unfinished {game} game (session {unfinished.id}, started "
        f"{unfinished.started_at}); it resumes with its own players and seed: leave out "
        "--players/--seed to resume it, or add --new to start another game"
    )


def run(args: argparse.Namespace) -> int:
    """Run ``companion run`` until the game has a winner (or Ctrl-C / SIGTERM / --until)."""
    from gpiozero.exc import GPIOZeroError

    from companion.cli import UsageError
    from companion.clock import PacedClock
    from companion.config import load
    from companion.journal import Journal
    from companion.pins import PinFactoryError

    config = load(args.config)
    opts = _options(args, config)
    if args.until is not None and not (args.until >= 0 and math.isfinite(args.until)):
        raise UsageError(f"--until: expected session seconds >= 0, got {args.until}")
    level = config["service"]["log_level"].upper()
    logging.basicConfig(level=level, format="%(asctime)s %(name)s %(levelname)s: %(message)s", stream=sys.stderr)
    game = opts["service"]["game"]
    if game not in SIM_TABLES:
        raise UsageError(f"--game {game}: expected one of {', '.join(SIM_TABLES)}")
    if args.camera is not None and game != "carrousel":
        raise UsageError(f"--camera: the camera reads Carrousel tables; not {game}")
    if opts["service"]["table"] == "hardware" and args.camera is None:
        args.camera = config["camera"]["source"]
    journal = Journal(
        opts["service"]["journal"],
        sync=config["service"]["journal_sync"],
        checkpoint_s=config["service"]["journal_checkpoint_s"],
        lock=True,
    )
    _check_resume(args, journal, game)
    speed = opts["service"]["speed"]
    try:
        # The simulated table runs on simulated time paced by the real clock: the same seed
        # plays the same game at any --speed.
        make_clock = lambda origin: PacedClock(origin, speed)  # noqa: E731
        if game == "carrousel" and args.camera is not None and not args.camera.startswith("sim"):
            service = build_camera_service(config, opts, journal, args.camera, new=args.new,
                                           show_moves=not args.quiet_moves)
        elif game == "carrousel":
            service = build_carrousel_service(
                config, opts, make_clock, journal, new=args.new, show_moves=not args.quiet_moves,
                camera=args.camera,
            )
        elif game == "monsieur-carrousel":
            from companion.commands.run_monsieur_carrousel import build_monsieur_carrousel_service

            if opts["service"]["table"] == "hardware":
                raise UsageError("--table hardware: Monsieur Carrousel runs on the simulated table in this version")
            service = build_monsieur_carrousel_service(config, opts, make_clock, journal, new=args.new)
        else:
            service = build_stream_service(game, config, opts, make_clock, journal, new=args.new)
    except (PinFactoryError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    except GPIOZeroError as exc:
        raise UsageError(f"GPIO: {exc} (check [pins] in the configuration)") from None

    if service.referee.is_over(service.state):
        # Stopped after the last call but before the session was closed: close it now.
        summary = dict(service.referee.summary(service.state))
        journal.finish_session(service.session, summary)
        print(f"the game of session {service.session} was already over: {summary}")
        journal.close()
        return 0

    def on_signal(signum: int, _frame: Any) -> None:
        log.info("signal %d: stopping; the game stays resumable", signum)
        service.stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        state = service.run(until=args.until)
    finally:
        service.close()
    if service.referee.is_over(state):
        journal.finish_session(service.session, service.referee.summary(state))
    else:
        log.info(
            "stopped at t=%.1f s; the unfinished game stays in %s: run again to resume it (or --new)",
            service.clock.now(), journal.path,
        )
    journal.close()
    return 0
