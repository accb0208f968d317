"""Watch the shaft encoder live: angle, speed, spins.

    companion encoder monitor                    # the backend of [encoder] (auto: Pico or sim)
    companion encoder monitor --backend sim --speed 5 --seconds 30
    companion encoder monitor --json             # observations and status as JSON Lines

Each spin_started / spin_stopped observation is printed as it happens; between them a status
line shows the count, the angle (degrees, ccw from the reference), the speed (turns/s) and the
link state. Ctrl-C stops.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``monitor`` subcommand and its options."""
    from companion.cli import finite_float

    sub = parser.add_subparsers(dest="encoder_command", metavar="ACTION")
    sub.required = True
    mon = sub.add_parser("monitor", help="live angle, speed and spins")
    mon.add_argument("--backend", choices=("auto", "pico", "gpio", "sim"),
                     help="override [encoder] backend")
    mon.add_argument("--seconds", type=finite_float, default=None, help="stop after this long")
    mon.add_argument("--speed", type=finite_float, default=1.0,
                     help="clock speed of the simulated shaft (default 1 = real time)")
    mon.add_argument("--interval", type=finite_float, default=0.5,
                     help="seconds between status lines (default 0.5)")
    mon.add_argument("--json", action="store_true", help="JSON Lines output")


def status_text(tracker, t: float) -> str:
    """One status line: time, count, angle, speed, reference and link state."""
    ang = tracker.angle_deg()
    ref = "referenced" if tracker.angle.referenced else "not referenced"
    link = "link up" if tracker.connected else "LINK DOWN"
    if tracker.fault:
        link = "FAULT: " + tracker.fault
    a = "   ?   " if ang is None else f"{ang:7.2f}"
    return (f"t={t:8.2f}s  count={tracker.count if tracker.count is not None else '?':>9}  "
            f"angle={a} deg  speed={tracker.speed_rps:+6.2f} turns/s  {ref}  {link}")


def run(args: argparse.Namespace) -> int:
    """Run the monitor until Ctrl-C or ``--seconds``; exit 2 on a fatal encoder fault."""
    from companion.cli import UsageError
    from companion.clock import MonotonicClock
    from companion.config import load
    from companion.rotation import encoder_pins, source_from_config

    if not 0 < args.speed <= 1000 or (args.seconds is not None and args.seconds <= 0) or args.interval <= 0:
        raise UsageError("--speed must be above 0 and at most 1000; --seconds and --interval above 0")
    config = load(args.config)
    import logging

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    clock = MonotonicClock(speed=args.speed)
    lock = threading.Lock()

    def out(text: str) -> None:
        with lock:
            print(text, flush=True)

    def emit(obs) -> None:
        out(obs.to_line() if args.json else f"{obs.t:8.2f}s  {obs.type}  " + ", ".join(
            f"{k}={v}" for k, v in obs.to_json().items() if k not in ("type", "t")))

    source = source_from_config(config, args.backend, pin_factory=encoder_pins(config, args.backend))
    tracker = source.tracker
    done = threading.Event()
    source.start(emit, clock)
    try:
        end = None if args.seconds is None else clock.now() + args.seconds
        while not done.is_set():
            t_next = clock.now() + args.interval * args.speed
            if end is not None:
                t_next = min(t_next, end)
            clock.wait(done, t_next)
            if args.json:
                out(json.dumps({"type": "encoder_status", "t": round(clock.now(), 3),
                                "count": tracker.count, "angle_deg": tracker.angle_deg(),
                                "speed_rps": round(tracker.speed_rps, 3),
                                "referenced": tracker.angle.referenced,
                                "connected": tracker.connected, "fault": tracker.fault}))
            else:
                out(status_text(tracker, clock.now()))
            if tracker.fault:
                print(f"companion: error: {tracker.fault}", file=sys.stderr)
                return 2
            if end is not None and clock.now() >= end:
                break
    finally:
        source.stop()
    return 0
