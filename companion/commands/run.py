"""Run the referee service.

With no hardware (a laptop, CI) it plays on the simulated table: seeded players move the
horses at human pace, press their claim buttons (gpiozero mock pins), make mistakes and stall
into dead ends; every call is printed as it happens. --speed runs the table's clock faster than
real time. At a real table (--table hardware, the default on a Raspberry Pi) only the real parts
are used: a part that is missing stops the start with one line naming it and the fix.

Every observation and call is appended to the journal. If the journal holds an unfinished
game (the service was stopped or the power went), it is resumed with the same scores, players
and seed; without --game that is the newest unfinished game whatever its kind (one started
with `companion enter --new-game` or on the game page too), said in one line. With --game G,
G's unfinished game is resumed (or a new G game starts) and an unfinished game of another kind
stays in the journal, named in one line with the command that resumes it. --new starts a
fresh game instead (of --game, else [service] game). What no sensor sees is told on the entry
socket beside the journal (`companion enter`) or, with --entries -, on standard input.

Examples:
  companion run                              # simulated Carrousel table, real time
  companion run --speed 10 --seed 7          # ten times faster, another game
  companion run --game carnival --table hardware --camera opencv:0
  companion run --table hardware --next-game wait    # the appliance (systemd unit)
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from typing import Any

__all__ = ["configure", "run", "check_players", "PLAYER_LIMITS"]

log = logging.getLogger("companion.run")


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``companion run``; each overrides its configuration key."""
    from companion.cli import finite_float

    parser.add_argument("--game", help="game to referee (default: the journal's unfinished game, whatever its "
                        "kind, else [service] game)")
    parser.add_argument("--table", choices=["auto", "sim", "hardware"],
                        help="'sim' = the simulated table; 'hardware' = only the real parts "
                        "(default: [service] table; auto = hardware on a Raspberry Pi)")
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
        help="the camera: picamera2, opencv:0, opencv:FILE_OR_URL, folder:PATH (a real table), "
        "or sim[:SEED] (the simulated table seen through the simulated camera: Carrousel, "
        "Monsieur Carrousel or Carrossel)",
    )
    parser.add_argument("--entries", metavar="-", choices=["-"],
                        help="also read entries (observations as JSON Lines) from standard input")
    parser.add_argument("--next-game", choices=["auto", "wait", "exit"],
                        help="after a game: wait for the next one, or exit (default: [service] next_game)")


def _options(args: argparse.Namespace, config: Any) -> dict[str, Any]:
    """Merge command-line overrides into the configuration, checked like the file."""
    from companion.cli import UsageError
    from companion.games import GAMES

    svc = dict(config["service"])
    if args.speed is not None:
        if not 0.1 <= args.speed <= 1000:
            raise UsageError(f"--speed: expected a number from 0.1 to 1000, got {args.speed}")
        svc["speed"] = args.speed
    seed = config["sim"]["seed"]
    if args.seed is not None:
        if args.seed < 0:
            raise UsageError(f"--seed: expected an integer >= 0, got {args.seed}")
        seed = args.seed
    players = list(config["players"]["names"])
    for key in ("table", "journal", "game", "next_game"):
        value = getattr(args, key)
        if value:
            svc[key] = value
    if svc["game"] not in GAMES:
        raise UsageError(f"--game {svc['game']}: expected one of {', '.join(GAMES)}")
    if args.players is not None:
        problem = check_players([p.strip() for p in args.players.split(",")], svc["game"])
        if problem:
            raise UsageError(f"--players: {problem}, separated by commas; got {args.players[:80]!r}")
        players = [p.strip() for p in args.players.split(",")]
    if args.until is not None and not args.until >= 0:
        raise UsageError(f"--until: expected session seconds >= 0, got {args.until}")
    table = svc["table"]
    camera = args.camera
    if table == "auto":
        from companion.pins import is_raspberry_pi

        real_camera = camera is not None and not camera.startswith("sim")
        table = "hardware" if real_camera or is_raspberry_pi() else "sim"
    if table == "sim" and camera is not None and not camera.startswith("sim"):
        raise UsageError(f"--camera {camera}: a real camera plays a real table; use --table hardware")
    if table == "hardware" and camera is not None and camera.startswith("sim"):
        raise UsageError(f"--camera {camera}: the simulated camera belongs to the simulated table (--table sim)")
    if table == "sim" and camera is not None and svc["game"] not in ("carrousel", "monsieur-carrousel", "carrossel"):
        raise UsageError(f"--camera {camera}: the simulated camera renders the Carrousel, Monsieur Carrousel and "
                         f"Carrossel tables, not {svc['game']}")
    next_game = svc["next_game"]
    if next_game == "auto":
        next_game = "wait" if table == "hardware" else "exit"
    return {"service": svc, "players": players, "seed": seed, "table": table, "camera": camera,
            "next_game": next_game}


def _good_name(name: str) -> bool:
    """A player's name as the console and the voice can say it: 1-24 printable characters."""
    return 0 < len(name) <= 24 and name.isprintable()


#: Players each game takes at this table, (fewest, most): the rulebooks' counts within the
#: table's four places (four claim buttons and LEDs, hardware defaults). Monsieur Carrousel is
#: played alone too (its engine takes 1 to 6; the table has four places).
PLAYER_LIMITS: dict[str, tuple[int, int]] = {"carrousel": (2, 4), "monsieur-carrousel": (1, 4),
                                             "carrossel": (2, 4), "carnival": (2, 4)}


def check_players(names: list[str], game: str) -> str | None:
    """Why ``names`` cannot play ``game`` (one line), or None when they can.

    The one check of ``--players`` and of the game page's players: ``PLAYER_LIMITS[game]``
    distinct names of 1 to 24 printable characters.
    """
    low, high = PLAYER_LIMITS.get(game, (2, 4))
    count = f"{low} to {high}" if low != high else str(low)
    if not low <= len(names) <= high or len(set(names)) != len(names) or not all(names) \
            or not all(_good_name(p) for p in names):
        return f"{game} takes {count} players: distinct names of 1 to 24 printable characters each"
    return None


def _game_to_play(args: argparse.Namespace, journal: Any, configured: str) -> tuple[str, str | None]:
    """The game this run referees, and the one line that says why when the journal has a say.

    Without ``--game`` (the systemd unit's command) the journal's unfinished game is resumed,
    whatever its game (:func:`~companion.service.unfinished_game`): a game started with
    ``enter --new-game`` or on the game page survives a power blip, with its players, seed and
    table settings as journaled. With ``--game G`` (or ``--new``) G is played; an unfinished
    game of another kind stays in the journal, untouched, and the line says how it resumes.

    Args:
        args: the parsed command line (``game``: the ``--game`` given or None; ``new``).
        journal: the open :class:`~companion.journal.Journal`.
        configured: the game the command line and configuration ask for (``--game`` or
            ``[service] game``).

    Returns:
        ``(game, line)``: the game's name and a line for the console, or None when there is
        nothing to say (no unfinished game, or it is the game asked for).
    """
    from companion.service import unfinished_game

    pending = unfinished_game(journal)
    if pending is None or pending.game == configured:
        return configured, None
    if args.game is None and not args.new:
        return pending.game, (f"{journal.path} holds an unfinished {pending.game} game (session {pending.id}, "
                              f"started {pending.started_at}): resuming it (not [service] game {configured}); "
                              f"--new starts a new {configured} game instead")
    how = "--new" if args.game is None else f"--game {configured}"
    return configured, (f"{how}: a {configured} game is played; the unfinished {pending.game} game of session "
                        f"{pending.id} stays in {journal.path} (`companion run --game {pending.game}` resumes it)")


def _check_resume(args: argparse.Namespace, journal: Any, game: str) -> None:
    """Refuse --players/--seed that contradict the unfinished game about to be resumed."""
    from companion.cli import UsageError

    if args.new or (args.players is None and args.seed is None):
        return
    # the game open_session would resume: the newest unfinished one with entries
    unfinished = next((s for s in reversed(journal.sessions()) if s.game == game and not s.finished
                       and next(journal.entries(s.id), None) is not None), None)
    if unfinished is None:
        return
    raise UsageError(
        f"{journal.path} holds an unfinished {game} game (session {unfinished.id}, started "
        f"{unfinished.started_at}); it resumes with its own players and seed: leave out "
        "--players/--seed to resume it, or add --new to start another game"
    )


class _NextGame:
    """What the service waits for between games: ``new_game`` on the entry socket, or a long
    press on the first claim button (real pins only).

    Args:
        over: ``over() -> bool``: the current game has ended (a request is then taken at once,
            even before the service has closed the game and started waiting).
        current: ``current() -> str | None``: the current game's name (for the players' check).

    One request is taken per ended game: a second one (a double tap, two pages) is refused
    until the game it asked for has started (:meth:`started`), so it never starts a game by
    itself after that one ends.
    """

    def __init__(self, over: Any = None, current: Any = None) -> None:
        self.event = threading.Event()
        self.game: str | None = None
        self.players: list[str] | None = None
        self.waiting = False
        self.over = over or (lambda: False)
        self.current = current or (lambda: None)
        self._lock = threading.Lock()
        self._taken = False  # a request was taken and its game has not started yet

    def started(self) -> None:
        """The run loop's word that a game has started (its service is the current one): the
        next game over takes a request again."""
        with self._lock:
            self._taken = False

    def request(self, game: str | None, players: list[str] | None = None) -> str | None:
        """Entry socket's ``new_game`` (with the players, or None: the last game's); returns an
        error line or None. The players are checked by :func:`check_players`, as ``--players``."""
        from companion.games import GAMES

        if game is not None and game not in GAMES:
            return f"unknown game {game!r} (known: {', '.join(GAMES)})"
        if players is not None:
            problem = check_players([str(p).strip() for p in players], game or self.current() or "")
            if problem:
                return f"players: {problem}"
        with self._lock:  # two requests at once: one is taken
            if self._taken or self.event.is_set():
                return "a new game is already starting"
            if not (self.waiting or self.over()):
                return "a game is being played; it must end first (or stop the service)"
            self.game = game
            self.players = [str(p).strip() for p in players] if players is not None else None
            self._taken = True
            self.event.set()
        return None


def run(args: argparse.Namespace) -> int:  # noqa: C901 - one flow, read top to bottom
    """Run ``companion run``: referee games until the last one ends (or Ctrl-C / SIGTERM /
    --until); with ``--next-game wait``, wait for the next game after each one."""
    from companion.assembly import assemble
    from companion.cli import UsageError
    from companion.clock import MonotonicClock, PacedClock
    from companion.config import load
    from companion.health import PartMissing
    from companion.journal import Journal
    from companion.sources.entries import EntryServer, socket_path_for
    from companion.systemd import Notifier

    config = load(args.config)
    opts = _options(args, config)
    level = config["service"]["log_level"].upper()
    logging.basicConfig(level=level, format="%(asctime)s %(name)s %(levelname)s: %(message)s", stream=sys.stderr)
    game, table = opts["service"]["game"], opts["table"]
    journal = Journal(opts["service"]["journal"], sync=config["service"]["journal_sync"],
                      checkpoint_s=config["service"]["journal_checkpoint_s"], lock=True)
    try:
        game, line = _game_to_play(args, journal, game)
        if line:
            print(f"companion: {line}", file=sys.stderr)
        if game != opts["service"]["game"]:  # the journal's unfinished game: its own checks (--camera sim)
            opts = _options(argparse.Namespace(**{**vars(args), "game": game}), config)
        _check_resume(args, journal, game)
    except BaseException:
        journal.close()  # a refused start leaves the journal unlocked
        raise
    speed = opts["service"]["speed"]
    # Restarted between games: the game waited for is the last one played (it names the table).
    waited = _waited_game(args, journal, opts["next_game"], game)
    waiting_first = waited is not None
    game = waited or game
    if table == "sim":
        # The simulated table runs on simulated time paced by the real clock: the same seed
        # plays the same game at any --speed.
        make_clock: Any = lambda origin: PacedClock(origin, speed)  # noqa: E731
        print(f"companion: the simulated {game} table (--table hardware plays a real one)", file=sys.stderr)
    else:
        make_clock = lambda origin: MonotonicClock(origin=origin)  # noqa: E731
    notifier = Notifier()
    current: dict[str, Any] = {}

    def game_over() -> bool:
        service = current.get("service")
        return service is not None and service.referee.is_over(service.state)

    nxt = _NextGame(game_over, lambda: current["service"].referee.name if current.get("service") else game)
    stopping = threading.Event()

    def status() -> dict[str, Any]:
        service = current.get("service")
        if service is None:
            return {"game": game, "table": table, "over": True, "waiting_for_next_game": nxt.waiting,
                    "parts": {}, "summary": {}}
        return {"game": service.referee.name, "session": service.session, "table": table,
                "t": round(service.clock.now(), 3), "over": service.referee.is_over(service.state),
                "summary": _jsonable(service.referee.summary(service.state)), "players": _players_in_play(service),
                "parts": service.parts.snapshot(), "paused": service.paused_at is not None,
                "waiting_for_next_game": nxt.waiting}

    entries = EntryServer(socket_path_for(journal.path), stdin=sys.stdin if args.entries == "-" else None,
                          status=status, on_new_game=nxt.request)
    web = _web_page(config, journal.path, table)  # [web]: the table's page (its hub now, its server below)
    _page_language_kept(web, journal)

    def on_signal(signum: int, _frame: Any) -> None:
        log.info("signal %d: stopping; the game stays resumable", signum)
        stopping.set()
        nxt.event.set()
        if current.get("service") is not None:
            current["service"].stop()

    if threading.current_thread() is threading.main_thread():  # (tests run it in a thread)
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
    heartbeat = (lambda: notifier.watchdog()) if notifier.watchdog_period_s else None
    new = args.new
    failed = False
    players, seed = opts["players"], opts["seed"]
    try:
        while True:
            if waiting_first:
                # Restarted between games (the last game over, none unfinished): the appliance was
                # waiting for the next game, and waits again; it does not start one by itself.
                waiting_first = False
                try:
                    if table == "hardware":
                        from companion.assembly import table_pins

                        table_pins(config, table)  # no pretend pins at a real table, even to wait
                    entries.open()
                    web.start(entries)
                except PartMissing as exc:
                    raise UsageError(str(exc)) from None
                chosen = _wait_next_game(nxt, config, table, game, notifier, stopping,
                                         keep=lambda: _keep_page_language(web, journal))
                if chosen is None:
                    break
                game = chosen
                if nxt.players is not None:
                    players, nxt.players = nxt.players, None
                new = True
            try:
                service = assemble(game, config, journal, make_clock, table, players=players, seed=seed, new=new,
                                   entries=entries, options={"camera": opts["camera"],
                                                             "show_moves": not args.quiet_moves, "web": web.hub},
                                   heartbeat=heartbeat)
            except (PartMissing, ValueError) as exc:
                raise UsageError(str(exc)) from None
            if not entries.is_open:
                try:
                    entries.open()  # once the table's parts are there: a missing one is the only line
                except PartMissing as exc:
                    service.close()
                    raise UsageError(str(exc)) from None
            try:
                web.start(entries)  # once per process; does nothing when [web] is off
            except PartMissing as exc:
                service.close()
                raise UsageError(str(exc)) from None
            if notifier.watchdog_period_s:
                service.heartbeat_s = notifier.watchdog_period_s
            current["service"] = service
            nxt.started()
            if service.referee.is_over(service.state):
                # Stopped after the last call but before the session was closed: close it now.
                journal.finish_session(service.session, dict(service.referee.summary(service.state)))
                print(f"the game of session {service.session} was already over")
            elif args.until is not None and service.clock.now() > args.until:
                # A resumed game already past --until: nothing to play; said, not done in silence.
                service.close()
                print(f"companion: --until {args.until:g}: the resumed game of session {service.session} is already "
                      f"at t={service.clock.now():.1f} s; nothing was played (give a later time, or --new)",
                      file=sys.stderr)
                break
            else:
                notifier.ready(f"refereeing {game} ({table} table)")
                try:
                    state = service.run(until=args.until)
                finally:
                    service.close()
                for line in service.ended:
                    print(f"companion: {line}", file=sys.stderr)
                if service.failure is not None:
                    print(f"companion: {service.failure} ({journal.path})", file=sys.stderr)
                    failed = True
                    break
                if not service.referee.is_over(state):
                    log.info("stopped at t=%.1f s; the unfinished game stays in %s: run again to resume it "
                             "(or --new)", service.clock.now(), journal.path)
                    break
                journal.finish_session(service.session, _jsonable(service.referee.summary(state)))
            if opts["next_game"] != "wait" or stopping.is_set() or args.until is not None:
                break
            game = _wait_next_game(nxt, config, table, game, notifier, stopping,
                                   keep=lambda: _keep_page_language(web, journal))
            if game is None:
                break
            if nxt.players is not None:
                players, nxt.players = nxt.players, None  # chosen on the game page (checked there)
            new = True
    finally:
        notifier.stopping()
        web.stop()
        entries.close()
        journal.close()
    return 1 if failed else 0


class _PageOff:
    """The table's page when ``[web]`` has it off: no hub (no ``web`` announcer has one to publish
    to), nothing to start or stop; :class:`companion.web.WebPage`'s own behaviour when off,
    without loading the web modules (asyncio and ssl with them: 3 MB of a Carrousel service
    here, docs/BENCHMARKS.md, issue 15)."""

    hub = None
    server = None
    started = True

    def start(self, entries: Any) -> None:
        """Nothing: the page is off."""

    def stop(self) -> None:
        """Nothing: the page is off."""


def _web_page(config: Any, journal_path: Any, table: str) -> Any:
    """The :class:`companion.web.WebPage` of ``[web]`` (see it for ``config``, ``journal_path``
    and ``table``), or a :class:`_PageOff` when the page is off (``[web] enabled = false`` or
    ``web`` not in ``[service] announcers``, WebPage's own rule): the web modules are imported
    only for a page that is on."""
    if not (bool(config["web"]["enabled"]) and "web" in config["service"]["announcers"]):
        return _PageOff()
    from companion.web import WebPage

    return WebPage(config, journal_path, table)


def _page_language_kept(web: Any, journal: Any) -> None:
    """The language last chosen on the game page, as the journal's newest session with one
    kept it (``page_language`` in its table settings), for the page after a restart; the
    configured ``[speech] language`` when none was chosen (or the page is off)."""
    from companion.journal import JournalError

    hub = getattr(web, "hub", None)
    if hub is None:
        return
    try:
        sessions = journal.sessions()
    except JournalError:
        return  # a damaged sessions table: the resume says so
    from companion.web.app import LANGUAGES

    for session in reversed(sessions):
        language = session.table.get("page_language") if isinstance(session.table, dict) else None
        if language is not None:
            if language in LANGUAGES:
                hub.language = hub.chosen_language = language
            return


def _keep_page_language(web: Any, journal: Any) -> None:
    """Between games, a language chosen on the page (``hub.chosen_language``) kept in the
    journal's newest session's table settings (``page_language``), written when it differs, so
    that a restart before the next game shows the page in it (:func:`_page_language_kept`). A
    journal that cannot take it is logged once a choice, never raised: the page keeps working."""
    import sqlite3

    from companion.journal import JournalError

    hub = getattr(web, "hub", None)
    language = getattr(hub, "chosen_language", None)
    if language is None:
        return
    try:
        sessions = journal.sessions()
        if not sessions:
            return
        last = sessions[-1]
        table = dict(last.table) if isinstance(last.table, dict) else {}
        if table.get("page_language") == language:
            return
        table["page_language"] = language
        journal.set_table(last.id, table)
    except (JournalError, sqlite3.Error) as exc:
        if getattr(hub, "_language_unkept", None) != language:
            log.warning("journal: cannot keep the page's language %s (%s); a restart shows the configured one",
                        language, exc)
            hub._language_unkept = language


def _players_in_play(service: Any) -> list[str] | None:
    """The game's own players, in seat order: its state's (as ``game_start`` gave them, at a real
    table too), else the table's configured ones (a game not yet started)."""
    players = getattr(service.state, "players", None)
    if players:
        return [p if isinstance(p, str) else str(p.name) for p in players]
    return service.players


def _waited_game(args: argparse.Namespace, journal: Any, next_game: str, configured: str) -> str | None:
    """The game ``run`` waits to start when it starts between games (``--next-game wait``, no
    ``--game``, ``--new`` or ``--until``, a game already played to its end in the journal and none
    unfinished): the last game played (``configured`` when no finished game is one this version
    knows); None when it does not start between games. The appliance restarted after a game was
    over then waits for the next game (a long press or ``enter --new-game``), as it did before the
    restart, instead of starting one; its first start ever (an empty journal) plays ``[service]
    game``.

    Raises:
        companion.journal.JournalError: the sessions table is damaged.
    """
    from companion.games import GAMES
    from companion.service import unfinished_game

    if next_game != "wait" or args.game is not None or args.new or args.until is not None:
        return None
    finished = [s.game for s in journal.sessions() if s.finished]
    if not finished or unfinished_game(journal) is not None:
        return None
    return next((g for g in reversed(finished) if g in GAMES), configured)


def _wait_next_game(nxt: _NextGame, config: Any, table: str, game: str, notifier: Any,
                    stopping: threading.Event, keep: Any = None) -> str | None:
    """Wait (between games) for ``new_game`` on the entry socket or a long press (3 s) on the
    first claim button; return the next game's name, or None when the service stops.
    ``keep()``, when given, is called on this thread before the wait, every second of it and
    at its end (:func:`_keep_page_language`: a language chosen on the page between games)."""
    from companion.assembly import table_pins

    nxt.waiting = True
    button = None
    if table == "hardware":
        try:
            factory, is_mock = table_pins(config, table)  # never pretend pins at a real table (PartMissing)
            from gpiozero import Button

            button = Button(config["pins"]["claim_buttons"][0], pull_up=True, hold_time=3.0, pin_factory=factory)
            button.when_held = lambda: nxt.request(None)  # taken once, as a new_game on the socket
        except Exception as exc:  # the socket still works without the button
            log.warning("long press for a new game unavailable: %s", exc)
    line = (f"game over: a new {game} game starts with a long press (3 s) on button 1 or "
            f"`companion enter --new-game [GAME]`")
    print(line, flush=True)
    notifier.status(line)
    keep = keep or (lambda: None)
    try:
        keep()
        while not nxt.event.wait(1.0):
            keep()
            if stopping.is_set():
                return None
            if notifier.watchdog_period_s:
                notifier.watchdog()  # waiting between games is alive: WatchdogSec must not kill it
    finally:
        nxt.waiting = False
        keep()
        if button is not None:
            button.close()
    nxt.event.clear()
    if stopping.is_set():
        return None
    chosen, nxt.game = nxt.game, None
    return chosen or game


def _jsonable(value: Any) -> Any:
    """``value`` with tuples as lists and other non-JSON values as text (for status and the journal)."""
    import json

    return json.loads(json.dumps(value, default=str))
