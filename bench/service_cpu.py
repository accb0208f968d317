"""CPU of the service at a real table, per game: ``companion run --table hardware`` as a
subprocess, its process CPU time (``/proc/PID/stat`` utime + stime, every thread; espeak-ng and
aplay children apart) over a window of wall time once it is up.

What each game's service runs on:

* Carrousel: the camera is a video file (``[camera] source = "opencv:FILE"``): a table rendered
  by :class:`companion.vision.sim.SimulatedCamera` (four players' cards, the horses moving by one
  legal move every 1.3 s), 30 frames a second of video, sensor noise (sigma 2 grey levels) drawn
  afresh in every frame as from a real sensor, Motion JPEG. Read at ``[camera] frame_period_s``:
  1/30 s (every frame of a 30 fps camera) and the default 0.1 s.
* Carnival: the dice tray video of ``tests/dice_video.py`` (a real photo's three dice tumbling,
  then at rest; 30 fps, the same fresh noise), ``[dice] tray`` set, the game started with a
  ``game_start`` entry on the socket so the dice camera reads for the active player; the same
  two frame periods.
* Monsieur Carrousel and Carrossel: no camera (their kits read none: Monsieur Carrousel's
  seats are confirmed with YES, Carrossel's plays are entered); their real input is the shaft
  encoder: the firmware's encoder app on a pty as the Pico (``tests/real_table.RunningPico``),
  at rest, its heartbeat at 100 lines a second. Monsieur Carrousel speaks its first prompt
  (espeak-ng, aplay to ALSA's null device) and waits for the die; Carrossel waits for its
  ``game_start`` entry (then is sent one, and waits for the first play).

Every service has its default announcers (console, speech, lights) on gpiozero's mock pins.
The measured figures are CPU seconds / wall seconds of the service process over ``--window-s``
(default 20 s) after ``--warmup-s`` (default 4 s: imports, calibration, the first frames);
100 % = one core, and the process's peak resident memory (``VmHWM``). Target: under 30 % of
one core (issue 15: the Carrousel camera at 30 frames/s under 15 %, peak memory under 80 MB).
The reference operation (one
``cv2.cvtColor`` BGR -> Lab of a 640 x 480 frame) is timed in the same run (CPU time of the
thread, as the service's is CPU time), by the service's own interpreter (``--companion``'s
virtual environment); the CPU of the bench's own fake Pico
thread is not counted (it is another process).

Bytecode: an installed service loads its modules' cached bytecode, so the services run with a
bytecode cache of their own (``PYTHONPYCACHEPREFIX`` in the run's temporary folder, the working
tree left alone), filled by a first, unreported run of the first game; ``--no-bytecode``:
``PYTHONDONTWRITEBYTECODE=1`` and no cache (every module compiled at start).

    .venv/bin/python bench/service_cpu.py [--window-s 20] [--warmup-s 4] [--games ...]
        [--companion .ci/.venv-pi-stack/bin/companion] [--no-bytecode]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import cv2
import numpy as np

from bench._common import child_env, machine

FPS = 30.0
COMPANION = ROOT / ".venv" / "bin" / "companion"


def _noisy_writer(path: Path, size: tuple[int, int]) -> Any:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), FPS, size)
    if not writer.isOpened():
        raise SystemExit(f"{path}: OpenCV cannot write Motion JPEG video here")
    return writer


def _noise(image: np.ndarray, rng: np.random.Generator, sigma: float = 2.0) -> np.ndarray:
    return np.clip(image.astype(np.int16) + rng.normal(0, sigma, image.shape).astype(np.int16), 0, 255).astype(np.uint8)


def given_or_written_video(given: str | None, folder: str, seconds: float) -> Path:
    """The Carrousel table video ``given`` (a path), else one of ``seconds`` written into
    ``folder`` by :func:`carrousel_video` (saying how long that took)."""
    import time

    if given:
        return Path(given)
    video = Path(folder) / "carrousel.avi"
    t0 = time.monotonic()
    n = carrousel_video(video, seconds)
    print(f"{n} frames of video written in {time.monotonic() - t0:.0f} s", flush=True)
    return video


def carrousel_video(path: Path, seconds: float, seed: int = 11) -> int:
    """A Carrousel table video (see the module doc); returns the frames written."""
    import random

    from companion.games.carrousel import Position
    from companion.vision.sim import Conditions, SimulatedCamera

    rng = random.Random(seed)
    noise = np.random.default_rng(seed)
    camera = SimulatedCamera(seed=seed, conditions=Conditions(
        height_mm=600, tilt_deg=8, azimuth_deg=30, roll_deg=5, light=1.0, kelvin=5000, gradient=0.05,
        vignetting=0.2, noise_sigma=0.0, blur_px=0.0, jpeg_quality=0, hands=()))
    cards = {"south": ("black", "yellow", "blue"), "east": ("green", "yellow", "blue"),
             "north": ("yellow", "green", "red"), "west": ("blue", "red", "green")}
    position = Position.from_text(".gbyrk.")
    writer = _noisy_writer(path, (640, 480))
    total = int(seconds * FPS)
    per_state = int(1.3 * FPS)
    n = 0
    try:
        while n < total:
            camera.set_table(spaces=position.spaces, cards=cards)
            image = camera.read().image
            for _ in range(min(per_state, total - n)):
                writer.write(_noise(image, noise))
                n += 1
            position = position.apply(rng.choice(position.legal_moves()))
    finally:
        writer.release()
    return n


def dice_video(path: Path, seconds: float, seed: int = 1) -> int:
    """The dice tray video of tests/dice_video.py at 30 fps with fresh noise in every frame."""
    from tests.dice_video import roll_video

    rolls = max(1, int(seconds / 1.6) + 1)
    raw = roll_video(path.with_suffix(".raw.avi"), rolls=rolls, fps=FPS, tumble_s=0.6, rest_s=1.0, seed=seed)
    cap = cv2.VideoCapture(str(raw.path))
    noise = np.random.default_rng(seed)
    writer = None
    n = 0
    try:
        while True:
            ok, image = cap.read()
            if not ok:
                break
            if writer is None:
                writer = _noisy_writer(path, (image.shape[1], image.shape[0]))
            writer.write(_noise(image, noise))
            n += 1
    finally:
        cap.release()
        if writer is not None:
            writer.release()
    raw.path.unlink()
    return n


def write_config(tmp: Path, **sections: dict[str, Any]) -> Path:
    from tests.real_table import write_config as real_table_config

    return real_table_config(tmp, **sections)


def cpu_s(pid: int) -> tuple[float, float]:
    """(utime + stime of the process, of its waited-for children), seconds (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    # fields[0] is the state (field 3 of proc(5)): utime, stime, cutime, cstime are fields 14-17
    return (int(fields[11]) + int(fields[12])) / tick, (int(fields[13]) + int(fields[14])) / tick


def peak_rss_mb(pid: int) -> float:
    """Peak resident memory of the process so far (``VmHWM`` of /proc/PID/status), MB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def service_env(args: argparse.Namespace, tmp: Path) -> dict[str, str]:
    """The services' environment: a bytecode cache in ``tmp`` (or none with ``--no-bytecode``)."""
    return child_env(None if args.no_bytecode else tmp / "bytecode")


def reference_op_of(companion: Path) -> float:
    """CPU seconds (of the thread) of the reference operation (bench/_common.py), timed by
    ``companion``'s interpreter (the ``python`` beside it: the same OpenCV and numpy as the
    service), as the service's CPU time is counted."""
    python = companion.parent / "python"
    code = "import time; from bench._common import reference_op_s; print(reference_op_s(clock=time.thread_time))"
    out = subprocess.run([str(python), "-c", code],
                         cwd=ROOT, capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def measure(name: str, game: str, config: Path, args: argparse.Namespace, entry: dict[str, Any] | None,
            log: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run one service, return its CPU share over the window."""
    from companion.sources.entries import request, socket_path_for

    cmd = [str(args.companion), "run", "--config", str(config), "--game", game, "--table", "hardware", "--new",
           "--next-game", "exit"]
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        try:
            journal = Path(config.parent / "journal.db")
            socket = socket_path_for(journal)
            deadline = time.monotonic() + 20
            while not Path(socket).exists():
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"{name}: the service did not start (see {log}):\n{log.read_text()[-2000:]}")
                time.sleep(0.05)
            if entry is not None:
                time.sleep(0.5)
                reply = request(socket, entry)
                if not reply.get("ok"):
                    raise SystemExit(f"{name}: entry refused: {reply}")
            time.sleep(args.warmup_s)
            if proc.poll() is not None:
                raise SystemExit(f"{name}: the service ended early (see {log}):\n{log.read_text()[-2000:]}")
            c0, k0 = cpu_s(proc.pid)
            w0 = time.monotonic()
            time.sleep(args.window_s)
            c1, k1 = cpu_s(proc.pid)
            w1 = time.monotonic()
            alive = proc.poll() is None
            peak = peak_rss_mb(proc.pid) if alive else float("nan")
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    if not alive:
        raise SystemExit(f"{name}: the service ended during the window (the video too short?); see {log}")
    wall = w1 - w0
    text = log.read_text(errors="replace")
    return {"name": name, "cpu": (c1 - c0) / wall, "children": (k1 - k0) / wall, "wall": wall, "peak_mb": peak,
            "console_lines": len(text.splitlines()), "tail": text.splitlines()[-3:]}


def warm_up(game: str, tmp: Path, args: argparse.Namespace, entry: dict[str, Any] | None, env: dict[str, str],
            **sections: dict[str, Any]) -> None:
    """A short, unreported run of ``game``'s service (its own folder): fills the bytecode cache."""
    run_dir = tmp / "warm-up"
    run_dir.mkdir()
    short = argparse.Namespace(**{**vars(args), "warmup_s": 1.0, "window_s": 1.0})
    measure("warm-up", game, write_config(run_dir, **sections), short, entry, run_dir / "companion.log", env)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--window-s", type=float, default=20.0)
    ap.add_argument("--warmup-s", type=float, default=4.0)
    ap.add_argument("--games", nargs="*", default=["carrousel", "carnival", "monsieur-carrousel", "carrossel"])
    ap.add_argument("--periods", nargs="*", type=float, default=[1 / 30, 0.1],
                    help="[camera] frame_period_s values for the camera games")
    ap.add_argument("--companion", type=Path, default=COMPANION,
                    help="the companion command to run (default %(default)s; the Pi's stack: "
                         ".ci/.venv-pi-stack/bin/companion)")
    ap.add_argument("--no-bytecode", action="store_true", help="compile the modules at every start")
    args = ap.parse_args(argv)
    from tests.dice_video import TRAY
    from tests.real_table import RunningPico

    ref_before = reference_op_of(args.companion)
    results = []
    seconds = args.warmup_s + args.window_s + 4.0  # of video, read at 30 fps at most
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        env = service_env(args, tmp)
        warm = not args.no_bytecode  # the first service run fills the bytecode cache, unreported
        for game in args.games:
            if game in ("carrousel", "carnival"):
                video = tmp / f"{game}.avi"
                t0 = time.monotonic()
                frames = (carrousel_video if game == "carrousel" else dice_video)(video, seconds)
                print(f"{game}: {frames} frames of video written in {time.monotonic() - t0:.1f} s", flush=True)
                for period in args.periods:
                    run_dir = tmp / f"{game}-{period:.3f}"
                    run_dir.mkdir()
                    camera = {"source": f"opencv:{video}", "frame_period_s": period}
                    extra: dict[str, Any] = {}
                    entry = None
                    if game == "carrousel":
                        extra = {"players": {"names": ["Ana", "Ben", "Cleo", "Dev"]}}
                    else:
                        extra = {"players": {"names": ["Ana", "Ben"]}, "dice": {"tray": list(TRAY)}}
                        entry = {"type": "game_start", "game": "carnival", "players": ["Ana", "Ben"],
                                 "discard": ["carousel:seats", "swings:lights"]}
                    config = write_config(run_dir, camera=camera, **extra)
                    if warm:
                        warm = False
                        warm_up(game, tmp, args, entry, env, camera=camera, **extra)
                    r = measure(f"{game}, camera at {1 / period:.0f} frames/s", game, config, args, entry,
                                run_dir / "companion.log", env)
                    results.append(r)
                    print(f"  {r['name']}: {r['cpu'] * 100:.1f} % of one core; console: {r['console_lines']} lines, "
                          f"last: {r['tail']}", flush=True)
            else:
                pico = RunningPico()
                try:
                    run_dir = tmp / game
                    run_dir.mkdir()
                    config = write_config(run_dir, players={"names": ["Ana", "Ben"]},
                                          encoder={"backend": "pico", "port": pico.port, "index": True})
                    entry = ({"type": "game_start", "game": "carrossel", "players": ["Ana", "Ben"], "seed": 3}
                             if game == "carrossel" else None)
                    if warm:
                        warm = False
                        warm_up(game, tmp, args, entry, env, players={"names": ["Ana", "Ben"]},
                                encoder={"backend": "pico", "port": pico.port, "index": True})
                    r = measure(f"{game}, encoder at rest (100 Hz heartbeat)", game, config, args, entry,
                                run_dir / "companion.log", env)
                finally:
                    pico.close()
                results.append(r)
                print(f"  {r['name']}: {r['cpu'] * 100:.1f} % of one core", flush=True)
    ref_after = reference_op_of(args.companion)
    ref_s = (ref_before + ref_after) / 2
    load1 = os.getloadavg()
    python = args.companion.parent / "python"
    versions = subprocess.run([str(python), "-c", "import cv2, numpy; print(cv2.__version__, numpy.__version__)"],
                              capture_output=True, text=True, check=True).stdout.split()
    print(f"machine: {machine()}; load average {load0[0]:.1f} before, {load1[0]:.1f} after")
    print(f"{args.companion}: OpenCV {versions[0]}, numpy {versions[1]}; "
          f"{'no bytecode cache' if args.no_bytecode else 'bytecode cached'}")
    print(f"reference op (cvtColor BGR->Lab 640x480, CPU time): {ref_before * 1e6:.0f} us before, "
          f"{ref_after * 1e6:.0f} us after")
    print(f"window {args.window_s:g} s after {args.warmup_s:g} s; CPU of the service process / wall time:")
    worst = 0.0
    for r in results:
        per_s = r["cpu"]  # CPU seconds per wall second
        worst = max(worst, per_s)
        print(f"| {r['name']} | {per_s * 100:.1f} % | {per_s / ref_s:,.0f} ref ops/s | "
              f"children {r['children'] * 100:.1f} % | peak memory {r['peak_mb']:.0f} MB | "
              f"{'met' if per_s < 0.30 else 'NOT met'} |")
    print(f"target < 30 % of one core: {'met' if worst < 0.30 else 'NOT met'} (worst {worst * 100:.1f} %)")
    return 0 if worst < 0.30 else 1


if __name__ == "__main__":
    raise SystemExit(main())
