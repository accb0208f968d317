"""Speak a sentence through espeak-ng to check the audio (and the language's voice).

The sentence is rendered to a WAV file in the speech cache and played with aplay. With no audio
device the WAV is still written and its path printed, so it can be copied and listened to.

Examples:
  companion say "Lulu is on the lion!"
  companion say "Lulu est sur le lion !" --lang fr
  companion say --lang pt-BR            (the language's test sentence)
  companion say "Hello" --out hello.wav (write the WAV here, do not play)
"""

from __future__ import annotations

import argparse
import shutil
import sys

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``companion say``."""
    parser.add_argument("text", nargs="?", help="what to say (default: the language's test sentence)")
    parser.add_argument("--lang", help="en, fr or pt-BR (default: [speech] language)")
    parser.add_argument("--out", metavar="FILE", help="copy the WAV here instead of playing it")
    parser.add_argument("--device", help="ALSA device for aplay (default: [speech] device)")


def run(args: argparse.Namespace) -> int:
    """Render, then play (or write) the sentence; exit 0 when it was played or written, 1
    when speech failed (the reason is printed).

    Raises:
        companion.cli.UsageError: an unknown language, nothing to say, or a ``[speech]
            cache_dir`` that cannot be written (the line names the key and the path).
    """
    from companion import config as config_mod
    from companion.announcers.speech import (
        AudioPlayer,
        CacheDirError,
        Catalogue,
        CatalogueError,
        EspeakRenderer,
        SpeechError,
        check_cache_dir,
        wav_duration_s,
    )
    from companion.cli import UsageError

    cfg = config_mod.load(args.config)
    speech = cfg["speech"]
    language = args.lang or speech["language"]
    try:
        catalogue = Catalogue(language)
    except CatalogueError as exc:
        raise UsageError(str(exc)) from None
    text = args.text if args.text is not None else catalogue.message("say_test")
    if not text.strip():
        raise UsageError("nothing to say: TEXT is empty")
    try:
        check_cache_dir(speech["cache_dir"], cfg.source)
    except CacheDirError as exc:
        raise UsageError(str(exc)) from None
    renderer = EspeakRenderer(speech["voice"] or catalogue.voice, speech["cache_dir"], speech["speed_wpm"],
                              speech["timeout_s"])
    try:
        wav = renderer.render(text)
    except SpeechError as exc:
        print(f"companion say: {exc}", file=sys.stderr)
        return 1
    info = f"{wav} ({wav_duration_s(wav):.2f} s, voice {renderer.voice})"
    if args.out:
        shutil.copyfile(wav, args.out)
        print(f"wrote {args.out} ({wav_duration_s(wav):.2f} s, voice {renderer.voice})")
        return 0
    player = AudioPlayer(args.device if args.device is not None else speech["device"], speech["timeout_s"])
    if not player.available():
        print(f"no audio device: wrote {info}")
        return 0
    try:
        player.play(wav)
    except SpeechError as exc:
        print(f"companion say: {exc}; the WAV is {info}", file=sys.stderr)
        return 1
    print(f"played {info}")
    return 0
