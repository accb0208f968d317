"""Measure the encoder's counts per turn of the rotating part and save it.

    companion calibrate encoder                  # 5 turns, timed by the index pulse
    companion calibrate encoder --turns 10 --output my-encoder.toml
    companion calibrate encoder --manual         # no index sensor: turn N times, press Enter

With an index sensor, turn the part slowly in one direction: the count at each index pulse is
recorded, and counts per turn = (last - first) / turns; turns that disagree by more than 0.5 %
(a slipping coupling, a missed pulse) stop the calibration with an error. Without one
(``--manual``), line the part up with a mark, press Enter, turn it exactly ``--turns`` times back
to the mark and press Enter again. The result goes to ``[encoder] calibration`` (default:
``encoder.toml`` in the calibration folder, ``[calibration] dir``), which the angle model then uses.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import threading
from collections.abc import Sequence
from pathlib import Path

__all__ = ["CalibrationError", "counts_per_rev_from_index", "write_calibration"]


class CalibrationError(ValueError):
    """The measurement is not trustworthy; the message says why."""


def counts_per_rev_from_index(index_counts: Sequence[int], tolerance: float = 0.005) -> tuple[float, float]:
    """Counts per turn from the counts latched at successive index pulses.

    Args:
        index_counts: counts (unwrapped) at N+1 successive index pulses (N >= 1 turns), all
            turned the same way.
        tolerance: largest relative spread between single turns (0.005 = 0.5 %).

    Returns:
        ``(counts_per_rev, spread)``: the mean (counts per turn, > 0) and the largest relative
        difference of one turn from it.

    Raises:
        CalibrationError: fewer than 2 pulses, a reversal, or turns that disagree.
    """
    if len(index_counts) < 2:
        raise CalibrationError("need at least two index pulses (one full turn)")
    turns = [b - a for a, b in zip(index_counts, index_counts[1:])]
    if not (all(d > 0 for d in turns) or all(d < 0 for d in turns)):
        raise CalibrationError("the part changed direction: turn it one way only")
    turns = [abs(d) for d in turns]
    mean = abs(index_counts[-1] - index_counts[0]) / len(turns)
    spread = max(abs(d - mean) / mean for d in turns)
    if spread > tolerance:
        raise CalibrationError(
            f"turns disagree by {spread:.1%} (counts per turn {turns}): a slipping coupling "
            "or a missed index pulse; fix it and calibrate again"
        )
    return mean, spread


def write_calibration(path: str | Path, counts_per_rev: float, turns: int, method: str,
                      spread: float) -> Path:
    """Write the calibration TOML file (creating its folder); returns the path."""
    p = Path(path).expanduser()
    p.parent.mkdir(parents=True, exist_ok=True)
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    p.write_text(
        f"# written by `companion calibrate encoder` on {now}\n"
        "[encoder]\n"
        f"counts_per_rev = {counts_per_rev:.3f}\n"
        f"turns = {turns}\n"
        f'method = "{method}"\n'
        f"spread = {spread:.5f}\n",
        encoding="utf-8",
    )
    return p


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the options."""
    from companion.cli import finite_float

    parser.add_argument("--turns", type=int, default=5, help="turns to measure (default 5)")
    parser.add_argument("--manual", action="store_true",
                        help="no index sensor: press Enter at the start and after the turns")
    parser.add_argument("--backend", choices=("auto", "pico", "gpio", "sim"),
                        help="override [encoder] backend")
    parser.add_argument("--output", help="file to write (default: [encoder] calibration, else encoder.toml "
                                         "in the calibration folder)")
    parser.add_argument("--timeout", type=finite_float, default=300.0,
                        help="seconds to wait for the turns (default 300)")
    parser.add_argument("--speed", type=finite_float, default=1.0, help="clock speed of the simulation")


def run(args: argparse.Namespace) -> int:
    """Measure and write; exit 2 with a message when the measurement fails."""
    from companion.cli import UsageError
    from companion.clock import MonotonicClock
    from companion.config import load
    from companion.rotation import encoder_pins, reader_from_config
    from companion.rotation.samples import CountSample, IndexPulse, LinkFault, LinkLost

    if args.turns < 1:
        raise UsageError("--turns must be at least 1")
    if args.timeout <= 0 or not 0 < args.speed <= 1000:
        raise UsageError("--timeout must be > 0 seconds and --speed from above 0 to 1000")
    from companion.calibration_dir import check_writable, writable_path

    config = load(args.config)
    try:
        output = (check_writable(args.output or config["encoder"]["calibration"])
                  if args.output or config["encoder"]["calibration"] else writable_path("encoder.toml", config))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    reader = reader_from_config(config, args.backend, pin_factory=encoder_pins(config, args.backend))
    if hasattr(reader, "spin_every_s") and not args.manual:
        reader.spin_every_s = None  # the simulated "person" turns it steadily instead
        reader.flick(1.0)
        reader.coulomb = reader.viscous = 0.0
    clock = MonotonicClock(speed=args.speed)
    pulses: list[int] = []
    last = {"count": None, "fault": None}
    done = threading.Event()

    def on(sample) -> None:
        if isinstance(sample, IndexPulse):
            pulses.append(sample.count)
            print(f"index pulse {len(pulses)}: count {sample.count}", flush=True)
            if len(pulses) >= args.turns + 1:
                done.set()
        elif isinstance(sample, CountSample):
            last["count"] = sample.count
        elif isinstance(sample, (LinkFault, LinkLost)):
            last["fault"] = sample.reason
            done.set()

    reader.start(on, clock)
    try:
        if args.manual:
            input("Line the part up with a mark and press Enter... ")
            start = last["count"]
            input(f"Turn it exactly {args.turns} times back to the mark, then press Enter... ")
            end = last["count"]
            if start is None or end is None or start == end:
                raise UsageError("no counts received: is the encoder connected?")
            cpr, spread, method = abs(end - start) / args.turns, 0.0, "manual"
        else:
            if not getattr(reader, "has_index", False):
                raise UsageError("this encoder has no index sensor: use --manual")
            print(f"Turn the part slowly one way, {args.turns} turns or more...", flush=True)
            clock.wait(done, clock.now() + args.timeout * args.speed)
            if last["fault"]:
                raise UsageError(f"encoder: {last['fault']}")
            if len(pulses) < args.turns + 1:
                raise UsageError(f"only {len(pulses)} index pulses in {args.timeout:g} s "
                                 f"(need {args.turns + 1})")
            try:
                cpr, spread = counts_per_rev_from_index(pulses[: args.turns + 1])
            except CalibrationError as exc:
                raise UsageError(str(exc)) from None
            method = "index"
    finally:
        reader.stop()
    path = write_calibration(output, cpr, args.turns, method, spread)
    print(f"counts per turn: {cpr:.2f} (spread {spread:.3%}) -> {path}")
    return 0
