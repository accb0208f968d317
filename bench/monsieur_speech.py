"""Benchmark: Monsieur Carrousel's spoken prompts (issue: Monsieur Carrousel for small kids).

Measures, on this machine:

1. espeak-ng render time per prompt, for each language (en, fr, pt-BR): every sentence the
   engine can say (one call of each type and variant), rendered into an empty cache.
2. From the spin's stop to the first audio sample of the weather prompt, with the WAV cached
   (target: under 300 ms): the engine applies ``spin_stopped``, the speech announcer gets the
   ``weather`` call, finds the sentence, finds the cached WAV and starts ``aplay``. Measured up
   to (a) the moment aplay is started and (b) the moment aplay has handed every sample to the
   ALSA device and exited. With ``--device null`` (the default here: this machine has no sound
   card) ALSA discards samples at once, so (b) bounds the time to the first sample from above.

Run:  /work/venv/bin/python bench/monsieur_speech.py [--device null] [--repeat 50]
Prints a Markdown table to paste into docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from companion.announcers.speech import AudioPlayer, Catalogue, EspeakRenderer, SpeechAnnouncer  # noqa: E402
from companion.games import monsieur_carrousel as mc  # noqa: E402

GAME = "monsieur-carrousel"


def sample_calls() -> list:
    c = [
        mc.GameStarted(t=0, players=("Ana", "Ben"), layout="1A", difficulty="easy", raindrops=8),
        mc.Turn(t=0, player="Ana", number=1, kids_left=12),
        mc.RollAgain(t=0, player="Ana"),
        mc.TwinsHelp(t=0, player="Ana", colour="red", twins=("Caspar", "Arto")),
        mc.KidOnSeat(t=0, player="Ana", kid="Lulu", seat=1, colour="red", picture="lion", seated=1),
        mc.Spin(t=0, player="Ana", purpose="weather", kid="Lulu"),
        mc.Spin(t=0, player="Ana", purpose="finger", colour="blue"),
        mc.MemoryGuess(t=0, player="Ana", kid="Mimi", seat=3, picture="dolphin"),
        mc.SunHigh(t=0, player="Ana"),
        mc.Raindrop(t=0, player="Ana", raindrops=3, left=5),
        mc.AnswerAgain(t=0, question="memory"),
        mc.SeatsMismatch(t=0, expected=(1,), seen=(1, 2)),
        mc.GameWon(t=0, raindrops=2, turns=20),
        mc.GameLost(t=0, empty_seats=3, turns=20),
    ]
    for pointed in (False, True):
        c.append(mc.WrongSeat(t=0, player="Ana", kid="Lulu", seat=2, colour="red", seat_colour="blue",
                              picture="car", pointed=pointed))
        c.append(mc.SeatKid(t=0, player="Ana", kid="Lulu", colour="red", seats=(1,), seat=1, picture="lion",
                            pointed=pointed))
    for reason in ("short", "zone", "seat", "no_stop", "uncertain"):
        c.append(mc.SpinAgain(t=0, player="Ana", reason=reason))
    for right in (True, False):
        c.append(mc.GuessJudged(t=0, player="Ana", kid="Mimi", right=right, picture="dolphin", colour="blue"))
    for zone in ("sun", "rain"):
        c.append(mc.Weather(t=0, player="Ana", kid="Lulu", zone=zone))
    for ask in (True, False):
        c.append(mc.SunbeamFragment(t=0, player="Ana", ask=ask))
    for complete, removed in ((True, True), (True, False), (False, False)):
        c.append(mc.SunbeamJudged(t=0, player="Ana", complete=complete, raindrop_removed=removed))
    return c


def render_times(lang: str) -> list[float]:
    cat = Catalogue(lang)
    texts = sorted({cat.text(call, GAME) for call in sample_calls()})
    with tempfile.TemporaryDirectory() as tmp:
        r = EspeakRenderer(cat.voice, tmp)
        out = []
        for text in texts:
            t0 = time.perf_counter()
            r.render(text)
            out.append(time.perf_counter() - t0)
    return out


def stop_to_audio(lang: str, device: str, repeat: int) -> tuple[list[float], list[float]]:
    ref = mc.MonsieurCarrouselReferee()
    layout = ref.table.layouts["1A"]
    state = ref.initial_state()
    state, _ = ref.apply(state, mc.GameStart(t=0, players=("Ana", "Ben")))
    state, _ = ref.apply(state, mc.DieRolled(t=1, colour="red"))
    seat = layout.seats_of("red")[0]
    state, _ = ref.apply(state, mc.KidSeated(t=2, seat=seat, kid="Lulu"))
    stop = mc.SpinStopped(t=5, angle_deg=mc.seat_for(layout, ref.table.board, seat, "sun"), revolutions=1.5,
                          direction="ccw")
    spawned: list[float] = []
    exited: list[float] = []

    def timed_run(cmd, **kw):
        if cmd[-1] != "-l":
            spawned.append(time.perf_counter())
        result = subprocess.run(cmd, **kw)
        if cmd[-1] != "-l":
            exited.append(time.perf_counter())
        return result

    with tempfile.TemporaryDirectory() as tmp:
        sp = SpeechAnnouncer(GAME, lang, cache_dir=tmp, player=AudioPlayer(device, run=timed_run))
        weather = ref.apply(state, stop)[1][0]
        sp.warm([sp.catalogue.text(weather, GAME)])  # the cached WAV of the weather prompt
        sp.announce(weather, {})
        sp.drain(10)
        spawned.clear()
        exited.clear()
        to_spawn, to_exit = [], []
        for _ in range(repeat):
            spawned.clear()
            exited.clear()
            t0 = time.perf_counter()
            _, calls = ref.apply(state, stop)  # weather, sunbeam_fragment, turn
            for call in calls:
                sp.announce(call, {})
            sp.drain(30)
            # the weather prompt is the first one played after the stop
            to_spawn.append(spawned[0] - t0)
            to_exit.append(exited[0] - t0)
        sp.close()
    assert all(s.outcome == "played" for s in sp.history), sp.history[-1]
    return to_spawn, to_exit


def ms(values: list[float]) -> str:
    v = sorted(values)
    p95 = v[min(len(v) - 1, int(round(0.95 * (len(v) - 1))))]
    return f"{1000 * statistics.median(v):.1f} / {1000 * p95:.1f} / {1000 * v[-1]:.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="null", help="ALSA device for aplay (default: null)")
    ap.add_argument("--repeat", type=int, default=50)
    args = ap.parse_args()
    version = subprocess.run(["espeak-ng", "--version"], capture_output=True, text=True).stdout.split("  ")[0]
    print(f"machine: {platform.machine()}, Python {platform.python_version()}, "
          f"{version.strip()}, aplay -D {args.device}")
    print("\n| language | prompts | espeak-ng render ms per prompt, median / p95 / max |")
    print("|---|---|---|")
    for lang in ("en", "fr", "pt-BR"):
        times = render_times(lang)
        print(f"| {lang} | {len(times)} | {ms(times)} |")
    print("\n| language | stop -> aplay started, ms median / p95 / max | stop -> aplay done (null device), "
          "ms median / p95 / max | target |")
    print("|---|---|---|---|")
    for lang in ("en", "fr", "pt-BR"):
        a, b = stop_to_audio(lang, args.device, args.repeat)
        print(f"| {lang} | {ms(a)} | {ms(b)} | < 300 |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
