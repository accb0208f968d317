"""Spoken prompts: calls read aloud by espeak-ng, in English, French or Brazilian Portuguese.

How a call becomes sound:

1. :class:`Catalogue` finds the call's sentence in ``companion/locale/<language>.toml`` (the
   message catalogue; no sentence lives in code) and fills in the call's fields (``{player}``,
   ``{kid}``; a colour or picture through the catalogue's ``[words.<field>]`` table).
2. :class:`EspeakRenderer` runs the real ``espeak-ng`` program once per distinct sentence and
   keeps the WAV in a cache folder (file name: a hash of voice, speed and text), so a prompt
   heard before starts at once.
3. :class:`AudioPlayer` plays the WAV with ALSA's ``aplay``.

:class:`SpeechAnnouncer` does all of this on its own worker thread behind a queue:
``announce`` only formats and queues, so the service loop never waits for speech. Every
program run has a timeout. When espeak-ng is missing or hangs (espeak-ng issue 777), when the
player hangs, or when there is no audio device, the announcer logs one line and plays the
call's buzzer pattern (``companion/data/signals.toml``) instead; with no audio device
the rendered WAVs are still written to the cache folder, so a grown-up can listen to them later.

Install: ``apt-get install espeak-ng alsa-utils`` (the README's set-up command does it).
"""

from __future__ import annotations

import hashlib
import logging
import os
import queue
import re
import shutil
import subprocess
import threading
import time
import tomllib
import wave
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from companion.announcers.signals import Signals, variant_keys, variant_word
from companion.announcers.wording import derived_fields
from companion.events import Call

__all__ = [
    "LOCALE_DIR",
    "BUZZER_PATTERNS_FILE",
    "DEFAULT_CACHE_DIR",
    "CatalogueError",
    "CacheDirError",
    "SpeechError",
    "check_cache_dir",
    "Catalogue",
    "languages",
    "EspeakRenderer",
    "AudioPlayer",
    "BuzzerPatterns",
    "BuzzerPlayer",
    "SpeechAnnouncer",
    "Spoken",
    "wav_duration_s",
]

log = logging.getLogger("companion.speech")

LOCALE_DIR = Path(__file__).resolve().parents[1] / "locale"
#: The buzzer patterns are the signals file's notes (one file for lights and buzzer).
BUZZER_PATTERNS_FILE = Path(__file__).resolve().parents[1] / "data" / "signals.toml"
DEFAULT_CACHE_DIR = "~/.cache/carousel-companion/speech"

Runner = Callable[..., "subprocess.CompletedProcess[bytes]"]


class CatalogueError(ValueError):
    """An unknown language or a broken message catalogue; the message names the file and key."""


class CacheDirError(ValueError):
    """``[speech] cache_dir`` cannot hold the prompts' WAV files (it cannot be created, is not
    a folder, or cannot be written); the message is one line naming the key, the path, what is
    wrong and the fix."""


def check_cache_dir(cache_dir: str | os.PathLike[str], source: str | os.PathLike[str] | None = None,
                    keep: bool = True) -> Path:
    """Check that the WAV cache folder ``[speech] cache_dir`` can be written, at start-up
    (``companion run``, ``say``, ``doctor``): the folder is created when missing and a small
    file is written in it and removed.

    Args:
        cache_dir: the configured folder (``~`` expanded).
        source: the configuration file that set it, named in the message (None: not named).
        keep: False to remove again the folders this check created (``companion doctor``
            changes nothing); True (the service) keeps them for the prompts.

    Returns:
        The folder, ``~`` expanded.

    Raises:
        CacheDirError: the folder cannot be created or written; espeak-ng could write no
            prompt, so the service refuses to start rather than fail at every prompt.
    """
    folder = Path(cache_dir).expanduser()
    made: list[Path] = []
    probe = folder
    while not probe.exists() and probe != probe.parent:
        made.append(probe)
        probe = probe.parent
    problem = ""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        problem = "it is a file, not a folder"
        made = []
    except OSError as exc:
        problem = f"that folder cannot be created ({exc.strerror or exc})"
        made = [m for m in made if m.exists()]
    if not problem:
        if not folder.is_dir():
            problem = "it is not a folder"
        else:
            try:
                import tempfile

                with tempfile.NamedTemporaryFile(dir=folder, prefix=".write-check-", suffix=".wav"):
                    pass
            except OSError as exc:
                problem = f"no file can be written in it ({exc.strerror or exc})"
    if not keep:
        for m in made:  # deepest first
            try:
                m.rmdir()
            except OSError:
                break
    if problem:
        where = f" in {source}" if source else ""
        raise CacheDirError(
            f"[speech] cache_dir = {str(cache_dir)!r}{where}: {problem}; expected a folder this user can write "
            "(the spoken prompts are rendered into it as WAV files); fix: set [speech] cache_dir to such a "
            "folder, or [speech] enabled = false")
    return folder


class SpeechError(RuntimeError):
    """espeak-ng or the audio player failed: missing program, timeout, error exit or no device.

    ``reason`` is one word (``missing``, ``timeout``, ``failed``, ``no_device``, ``cache``: the
    WAV cache folder cannot be written) for logs and fallbacks.
    """

    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


# --------------------------------------------------------------------------- catalogues


def languages(locale_dir: Path = LOCALE_DIR) -> list[str]:
    """The languages with a catalogue (``en``, ``fr``, ``pt-BR``), sorted."""
    return sorted(p.stem for p in locale_dir.glob("*.toml"))


#: A place in a sentence: ``{field}``, ``{field:table}`` (words from ``[words.<table>]``),
#: ``{field:.1f}`` (a number's format) and a list's join, ``{field|dash}`` (``and``, ``or``,
#: ``comma``, ``dash``).
_FIELD = re.compile(r"\{([a-z_]+)(?::([a-z_]+|\.\d+f))?(?:\|(and|or|comma|dash))?\}")


class Catalogue:
    """The sentences of one language.

    Args:
        language: ``en``, ``fr`` or ``pt-BR`` (a file ``<language>.toml`` in ``locale_dir``).
        locale_dir: folder of the catalogues.

    Raises:
        CatalogueError: no catalogue for the language (the message lists the known ones), bad
            TOML, or no ``[meta] voice``.

    A call's sentence is looked up, first match wins, as ``[<game>] "<type>.<variant>"``, then
    ``[<game>] <type>``, then ``[common]`` with the same keys; the variant is the values of the
    fields named in ``[variants.<game>] <type>`` (comma-separated; booleans as ``true``/``false``,
    None or an empty list as ``none``), joined by dots. For the console, ``[console.<game>]``
    and ``[console.common]`` are looked up first. A call with no sentence is not spoken.

    Filling a sentence (:meth:`fill`): ``{field}`` is the call's field (or one worked out from
    it, :func:`companion.announcers.wording.derived_fields`); a text value is translated by
    ``[words.<field>]`` or, with ``{field:table}``, by ``[words.<table>]``; a list becomes
    "a, b and c" (``[meta] and``; ``|or``, ``|comma``, ``|dash`` for "a-b-c"); a mapping becomes
    "key value, key value" through ``[items] <field>`` (a sentence with ``{key}`` and
    ``{value}``), a list of records through ``[items] <field>`` filled with each record's fields
    (a record with a ``kind`` field through ``[items] "<field>.<kind>"`` when there is one: a
    reason's or a detail's own sentence);
    a number is written with the language's ``[meta] decimal`` mark, a count with ``{n:table}``
    through a table's ``one``/``other`` forms ("1 point", "3 points"); None and booleans through
    ``[meta] nothing``, ``yes``, ``no``. So no sentence ever shows a Python value.
    """

    def __init__(self, language: str, locale_dir: Path = LOCALE_DIR):
        path = locale_dir / f"{language}.toml"
        if not path.is_file():
            raise CatalogueError(
                f"no speech catalogue for language {language!r} (known: {', '.join(languages(locale_dir))})"
            )
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise CatalogueError(f"{path}: not valid TOML: {exc}") from None
        meta = data.get("meta", {})
        if not isinstance(meta.get("voice"), str):
            raise CatalogueError(f"{path}: [meta] voice is missing (an espeak-ng voice, e.g. 'fr-fr')")
        self.path = path
        self.language = language
        self.voice: str = meta["voice"]
        self.name: str = meta.get("name", language)
        self._meta = meta
        self._data = data

    def messages(self, game: str) -> dict[str, str]:
        """Every sentence of a game (key -> template), ``[common]`` included."""
        out = dict(self._data.get("common", {}))
        out.update(self._data.get(game, {}))
        return out

    def variant_fields(self, game: str) -> dict[str, tuple[str, ...]]:
        """Call type -> the fields whose values choose its variant (``[variants.common]``, for
        the service's own calls, then ``[variants.<game>]``)."""
        variants = self._data.get("variants", {})
        raw = {**variants.get("common", {}), **variants.get(game, {})}
        return {k: tuple(f.strip() for f in v.split(",")) for k, v in raw.items()}

    def keys_for(self, call: Call, game: str) -> list[str]:
        """The lookup keys of a call, most specific first (variants may use worked-out fields)."""
        return variant_keys(call, self.variant_fields(game).get(call.type), self.fields_of(call, game))

    def fields_of(self, call: Call, game: str) -> dict[str, Any]:
        """The call's fields (JSON form) with the ones worked out from them
        (:func:`~companion.announcers.wording.derived_fields`)."""
        fields = call.to_json()
        for k, v in derived_fields(game, fields).items():
            fields.setdefault(k, v)
        return fields

    def template_for(self, call: Call, game: str, console: bool = False) -> tuple[str, str] | None:
        """``(where, template)`` of the call's sentence (see the class doc), or None."""
        keys = self.keys_for(call, game)
        screen = self._data.get("console", {})
        tables = ([(f"console.{game}", screen.get(game, {})), ("console.common", screen.get("common", {}))]
                  if console else []) + [
            (game, self._data.get(game, {})),
            ("common", self._data.get("common", {})),
        ]
        for name, table in tables:
            for key in keys:
                template = table.get(key)
                if isinstance(template, str):
                    return f"{self.path}: [{name}] {key}", template
        return None

    def text(self, call: Call, game: str, console: bool = False, extra: Mapping[str, Any] | None = None) -> str | None:
        """The sentence for ``call`` with its fields filled in, or None when it has none.

        Args:
            call: the call.
            game: the game's name (its table).
            console: look in ``[console.<game>]`` and ``[console.common]`` first (sentences
                written for the screen).
            extra: more fields (e.g. the referee's summary); the call's own fields win.

        Raises:
            CatalogueError: the template names a field the call does not have.
        """
        found = self.template_for(call, game, console)
        if found is None:
            return None
        where, template = found
        fields = {**(extra or {}), **self.fields_of(call, game)}
        text = self.fill(template, fields, where)
        return text[:1].upper() + text[1:]  # a sentence may start with a filled-in word

    def suffix(self, call: Call, game: str, summary: Mapping[str, Any] | None = None) -> str:
        """The console's addition to a call's line (``[suffix.<game>] <type>``, e.g. the
        raindrops so far), filled with the call's fields and then the summary's; ``""`` when
        there is none.

        Raises:
            CatalogueError: the template names a field neither has.
        """
        table = self._data.get("suffix", {}).get(game, {})
        for key in self.keys_for(call, game):
            template = table.get(key)
            if isinstance(template, str):
                fields = {**(summary or {}), **self.fields_of(call, game)}
                return self.fill(template, fields, f"{self.path}: [suffix.{game}] {key}")
        return ""

    def observation_text(self, obs: Any, game: str) -> str | None:
        """A sentence for an observation shown on the console (``[observations.<game>]``,
        e.g. the carousel starting and stopping), or None.

        Raises:
            CatalogueError: the template names a field the observation does not have.
        """
        table = self._data.get("observations", {}).get(game, {})
        fields = obs.to_json()
        for key in (f"{obs.type}.{variant_word(fields.get('uncertain'))}", obs.type):
            template = table.get(key)
            if isinstance(template, str):
                return self.fill(template, fields, f"{self.path}: [observations.{game}] {key}")
        return None

    def fill(self, template: str, fields: Mapping[str, Any], where: str = "") -> str:
        """Fill ``{field}`` places (see the class doc for tables, lists, mappings, numbers).

        Raises:
            CatalogueError: a field that ``fields`` lacks (naming ``where``).
        """

        def sub(m: re.Match[str]) -> str:
            name, spec, join = m.group(1), m.group(2), m.group(3)
            if name not in fields:
                raise CatalogueError(f"{where}: unknown field {{{name}}} (the call has: {', '.join(fields)})")
            return self.words(fields[name], name, spec, join, where)

        return _FIELD.sub(sub, template)

    def words(self, value: Any, field: str, spec: str | None = None, join: str | None = None,
              where: str = "") -> str:
        """One value in words: ``field`` names its ``[words]`` and ``[items]`` tables unless
        ``spec`` names another words table (or is a number format such as ``.1f``); ``join``
        is how a list's items are joined (default ``and``)."""
        meta = self._meta
        if value is None:
            return str(meta.get("nothing", "nothing"))
        if isinstance(value, bool):
            return str(meta.get("yes" if value else "no", "yes" if value else "no"))
        if isinstance(value, int) and spec and not spec.startswith("."):
            forms = self._data.get("words", {}).get(spec, {})
            if "other" in forms:  # a count with its noun: "1 point", "3 points"
                one = value == 1 or (value == 0 and bool(meta.get("zero_is_singular", False)))
                return str(forms["one" if one else "other"]).replace("{n}", str(value))
        if isinstance(value, (int, float)):
            return self._number(value, spec)
        if isinstance(value, str):
            table = self._data.get("words", {}).get(spec if spec and not spec.startswith(".") else field, {})
            word = table.get(value)
            return str(word) if word is not None else value.replace("_", " ")
        if isinstance(value, Mapping):
            item = self._data.get("items", {}).get(field, "{key} {value}")
            nested = any(isinstance(v, (list, tuple, Mapping)) for v in value.values())
            parts = [
                self.fill(item, {"key": k, "value": _Literal(self.words(v, field, spec, join, where))}, where)
                if not isinstance(v, Mapping) else self.fill(item, {"key": k, **v}, where)
                for k, v in value.items()
            ]
            return ("; " if nested else ", ").join(parts) if parts else str(meta.get("nothing", "nothing"))
        if isinstance(value, _Literal):
            return value.text
        if isinstance(value, (list, tuple)):
            items = self._data.get("items", {})
            item = items.get(field)
            records = bool(item) and any(isinstance(v, Mapping) for v in value)
            parts = [
                # a record with a "kind" has its own sentence when the catalogue has one
                self.fill(items.get(f"{field}.{v.get('kind')}", item), v, where)
                if records and isinstance(v, Mapping) else self.words(v, field, spec, None, where)
                for v in value
            ]
            return self._join(parts, join or ("semicolon" if records else "and"))
        return str(value)

    def _number(self, value: float, spec: str | None) -> str:
        if isinstance(value, int):
            text = str(value)
        elif spec and spec.startswith("."):
            text = format(value, spec)
        elif float(value).is_integer():
            text = str(int(value))
        else:
            text = f"{value:.1f}"
        return text.replace(".", str(self._meta.get("decimal", ".")))

    def _join(self, parts: list[str], how: str) -> str:
        if not parts:
            return str(self._meta.get("nothing", "nothing"))
        if how == "dash":
            return "-".join(parts)
        if how == "comma":
            return ", ".join(parts)
        if how == "semicolon":
            return "; ".join(parts)
        if len(parts) == 1:
            return parts[0]
        word = str(self._meta.get("or" if how == "or" else "and", how))
        return ", ".join(parts[:-1]) + f" {word} " + parts[-1]

    def message(self, key: str, **fields: Any) -> str:
        """A ``[common]`` sentence by key, filled with ``fields`` (e.g. ``say_test``).

        Raises:
            CatalogueError: no such key.
        """
        common = self._data.get("common", {})
        if key not in common:
            raise CatalogueError(f"{self.path}: [common] has no key {key!r}")
        return self.fill(common[key], fields, f"{self.path}: [common] {key}")


class _Literal:
    """Text already in words (a mapping's value inside an ``[items]`` sentence)."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


def _word(value: Any) -> str:
    return variant_word(value)


# --------------------------------------------------------------------------- espeak-ng


def wav_duration_s(path: str | os.PathLike[str]) -> float:
    """Duration of a WAV file in seconds (frames / frame rate), read with :mod:`wave`.

    Raises:
        wave.Error, OSError: not a readable WAV file.
    """
    with wave.open(str(path), "rb") as w:
        return w.getnframes() / float(w.getframerate())


class EspeakRenderer:
    """Renders sentences to WAV files with the ``espeak-ng`` program, cached by content.

    Args:
        voice: an espeak-ng voice (``en-gb``, ``fr-fr``, ``pt-br``; ``espeak-ng --voices``).
        cache_dir: folder of the WAV files (created when missing).
        speed_wpm: words per minute (espeak-ng ``-s``; its default is 175; slower suits kids).
        timeout_s: seconds before a render is abandoned (espeak-ng can hang: issue 777).
        program: the espeak-ng executable.
        run: :func:`subprocess.run` or a stand-in with its signature (tests).

    The WAV is 16-bit mono PCM at 22050 Hz (espeak-ng's output).
    """

    def __init__(
        self,
        voice: str,
        cache_dir: str | os.PathLike[str],
        speed_wpm: int = 140,
        timeout_s: float = 5.0,
        program: str = "espeak-ng",
        run: Runner = subprocess.run,
    ):
        self.voice = voice
        self.cache_dir = Path(cache_dir).expanduser()
        self.speed_wpm = speed_wpm
        self.timeout_s = timeout_s
        self.program = program
        self._run = run

    def path_for(self, text: str) -> Path:
        """The cache file of a sentence (it may not exist yet)."""
        digest = hashlib.sha1(f"{self.voice}\0{self.speed_wpm}\0{text}".encode()).hexdigest()[:20]
        return self.cache_dir / f"{self.voice}-{digest}.wav"

    def is_cached(self, text: str) -> bool:
        """True when the sentence's WAV is already in the cache."""
        p = self.path_for(text)
        return p.is_file() and p.stat().st_size > 44

    def render(self, text: str) -> Path:
        """Return the WAV of ``text``, rendering it with espeak-ng unless cached.

        Raises:
            SpeechError: espeak-ng missing (``missing``), slower than ``timeout_s``
                (``timeout``), exiting with an error or writing no audio (``failed``), or the
                cache folder that cannot be created or written (``cache``: the folder went
                away or filled up after the start's :func:`check_cache_dir`).
        """
        path = self.path_for(text)
        if self.is_cached(text):
            return path
        try:
            self.cache_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SpeechError(f"the WAV cache {self.cache_dir} ([speech] cache_dir) cannot be created: "
                              f"{exc.strerror or exc}", "cache") from None
        tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        cmd = [self.program, "-v", self.voice, "-s", str(self.speed_wpm), "-w", str(tmp), "--stdin"]
        try:
            result = self._run(cmd, input=text.encode("utf-8"), capture_output=True, timeout=self.timeout_s)
        except FileNotFoundError:
            raise SpeechError(f"{self.program} not found (install it: apt-get install espeak-ng)", "missing") from None
        except subprocess.TimeoutExpired:
            tmp.unlink(missing_ok=True)
            raise SpeechError(f"{self.program} did not finish within {self.timeout_s} s", "timeout") from None
        if result.returncode != 0 or not tmp.is_file() or tmp.stat().st_size <= 44:
            tmp.unlink(missing_ok=True)
            err = (result.stderr or b"").decode("utf-8", "replace").strip().splitlines()
            raise SpeechError(
                f"{self.program} failed (exit {result.returncode}): {err[-1] if err else 'no audio written'}",
                "failed",
            )
        try:
            os.replace(tmp, path)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise SpeechError(f"the WAV cache {self.cache_dir} ([speech] cache_dir) cannot be written: "
                              f"{exc.strerror or exc}", "cache") from None
        return path


# --------------------------------------------------------------------------- playback


class AudioPlayer:
    """Plays WAV files with ALSA's ``aplay``.

    Args:
        device: an ALSA PCM name for ``aplay -D`` (``""`` = the default device; ``"null"``
            discards the samples, which the benchmark and tests use).
        timeout_s: extra seconds beyond the file's duration before playback is abandoned.
        program: the player executable.
        run: a stand-in for :func:`subprocess.run` (tests); default: the program is started
            with :class:`subprocess.Popen` so that :meth:`stop` can end it.
    """

    def __init__(self, device: str = "", timeout_s: float = 5.0, program: str = "aplay",
                 run: Runner | None = None):
        self.device = device
        self.timeout_s = timeout_s
        self.program = program
        self._run = run or self._run_stoppable
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._cut = False
        self._keep_playing: Callable[[], bool] | None = None

    def _run_stoppable(self, cmd: list[str], capture_output: bool = True, timeout: float | None = None,
                       **_: Any) -> subprocess.CompletedProcess[bytes]:
        """:func:`subprocess.run` with the process kept for :meth:`stop`."""
        pipe = subprocess.PIPE if capture_output else None
        with subprocess.Popen(cmd, stdout=pipe, stderr=pipe) as proc:
            with self._lock:
                self._proc = proc
                if self._keep_playing is not None and not self._keep_playing():  # cut before it started
                    self._cut = True
                    proc.terminate()
            try:
                out, err = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                raise
            finally:
                with self._lock:
                    self._proc = None
        return subprocess.CompletedProcess(cmd, proc.returncode, out or b"", err or b"")

    def stop(self) -> bool:
        """End the WAV being played now, if any (its :meth:`play` returns False); True when
        one was stopped. A ``run`` stand-in cannot be stopped."""
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                return False
            self._cut = True
            self._proc.terminate()
            return True

    def available(self) -> bool:
        """True when the player exists and, for the default device, ALSA lists a sound card."""
        if shutil.which(self.program) is None:
            return False
        if self.device:
            return True
        try:
            result = self._run([self.program, "-l"], capture_output=True, timeout=self.timeout_s)
        except (OSError, subprocess.TimeoutExpired):
            return False
        return result.returncode == 0 and b"no soundcards found" not in (result.stderr + result.stdout)

    def check(self) -> str:
        """Play a tenth of a second of silence on the device: ``""`` when it played, else why
        not (aplay's last line), so that a named device that does not exist is found at start."""
        import tempfile

        if not self.available():
            return "no sound card (aplay -l lists none)" if shutil.which(self.program) else f"{self.program} is not installed"
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "silence.wav"
            with wave.open(str(path), "wb") as w:
                w.setnchannels(1)
                w.setsampwidth(2)
                w.setframerate(22050)
                w.writeframes(b"\0\0" * 2205)
            try:
                self.play(path)
            except SpeechError as exc:
                return str(exc)
        return ""

    def play(self, path: str | os.PathLike[str], keep_playing: Callable[[], bool] | None = None) -> bool:
        """Play one WAV file to the end; False when :meth:`stop` cut it short, or when
        ``keep_playing()`` is already False as the player starts (no call may come between
        the caller's last check and the start).

        Raises:
            SpeechError: player missing (``missing``), hanging (``timeout``), or failing, e.g.
                no audio device (``failed``).
        """
        cmd = [self.program, "-q"] + (["-D", self.device] if self.device else []) + [str(path)]
        try:
            limit = wav_duration_s(path) + self.timeout_s
        except (OSError, wave.Error, EOFError):
            raise SpeechError(f"{path}: not a readable WAV file", "failed") from None
        with self._lock:
            self._cut = False
            self._keep_playing = keep_playing
        try:
            result = self._run(cmd, capture_output=True, timeout=limit)
        except FileNotFoundError:
            raise SpeechError(f"{self.program} not found (install it: apt-get install alsa-utils)", "missing") from None
        except subprocess.TimeoutExpired:
            raise SpeechError(f"{self.program} did not finish within {limit:.1f} s", "timeout") from None
        with self._lock:
            self._keep_playing = None
            if self._cut:
                return False
        if result.returncode != 0:
            err = (result.stderr or b"").decode("utf-8", "replace").strip().splitlines()
            raise SpeechError(f"{self.program} failed: {err[-1] if err else result.returncode}", "failed")
        return True


# --------------------------------------------------------------------------- buzzer fallback


#: A buzzer pattern: notes as (gpiozero Tone name such as ``"C5"``, or None for a rest; seconds).
Pattern = tuple[tuple[str | None, float], ...]


class BuzzerPatterns:
    """The buzzer patterns that stand in for speech: the notes of every call in
    ``companion/data/signals.toml`` (the file the lights use too).

    ``patterns`` maps ``"<game>.<key>"`` (``[common]`` entries: ``"<key>"``) and ``"default"`` to
    a pattern.

    Args:
        path: the signals file.

    Raises:
        CatalogueError: the file is missing or broken (the message names the key).
    """

    def __init__(self, path: Path = BUZZER_PATTERNS_FILE):
        from companion.announcers.signals import SignalsError

        try:
            self.signals = Signals(path)
        except SignalsError as exc:
            raise CatalogueError(str(exc)) from None
        self.patterns: dict[str, Pattern] = {"default": self.signals.default.notes}
        for game, table in self.signals.entries.items():
            for key, sig in table.items():
                self.patterns[key if game == "common" else f"{game}.{key}"] = sig.notes

    def pattern_for(self, game: str, keys: Sequence[str]) -> Pattern:
        """The pattern of the first key found as ``game.key``, then ``key``; else ``default``."""
        found = self.signals.find(game, keys)
        return found.notes if found is not None and found.notes else self.patterns["default"]

    def for_call(self, call: Call, game: str) -> Pattern:
        """The pattern of a call (its signals entry's notes, keys as the signals file's
        variants say); ``default`` when it has none."""
        return self.pattern_for(game, self.signals.keys_for(call, game))


class BuzzerPlayer:
    """Plays patterns on a gpiozero ``TonalBuzzer`` (a passive piezo on a PWM pin through a
    transistor; default GPIO 12).

    Args:
        buzzer: a ``gpiozero.TonalBuzzer`` (or anything with ``play(tone)`` and ``stop()``).
        sleep: waits between notes (seconds); tests pass a recorder instead of time.sleep.

    Example::

        from gpiozero import TonalBuzzer
        BuzzerPlayer(TonalBuzzer(12)).play((("C5", 0.1), ("", 0.05), ("G5", 0.2)))
    """

    def __init__(self, buzzer: Any, sleep: Callable[[float], None] = time.sleep):
        self.buzzer = buzzer
        self._sleep = sleep

    @classmethod
    def on_pin(cls, pin: int, pin_factory: Any = None, sleep: Callable[[float], None] = time.sleep) -> BuzzerPlayer:
        """A player on a new ``TonalBuzzer`` at BCM ``pin`` (gpiozero imported here)."""
        from gpiozero import TonalBuzzer

        return cls(TonalBuzzer(pin, pin_factory=pin_factory), sleep)

    def play(self, pattern: Pattern) -> None:
        """Play the notes one after another (None is a rest). Blocks for the pattern's length."""
        from gpiozero.tones import Tone

        try:
            for note, seconds in pattern:
                if note:
                    self.buzzer.play(Tone(note))
                else:
                    self.buzzer.stop()
                self._sleep(seconds)
        finally:
            self.buzzer.stop()

    def close(self) -> None:
        """Release the buzzer's pin."""
        close = getattr(self.buzzer, "close", None)
        if close:
            close()


# --------------------------------------------------------------------------- the announcer


class Spoken:
    """What happened to one prompt: ``text``, the ``wav`` path (or None), and ``outcome``:
    ``played``, ``written`` (no audio device: the WAV is in the cache), ``buzzer`` (speech
    failed; the pattern was played), ``silent`` (speech failed, no buzzer) or ``cut`` (an
    ``[interruptible]`` prompt stopped or skipped because a later observation's call came;
    ``reason`` ``stopped`` or ``skipped``)."""

    __slots__ = ("text", "wav", "outcome", "reason", "call_type")

    def __init__(self, text: str, wav: Path | None, outcome: str, reason: str = "", call_type: str = ""):
        self.text = text
        self.wav = wav
        self.outcome = outcome
        self.reason = reason
        self.call_type = call_type

    def __repr__(self) -> str:
        return f"Spoken({self.outcome}, {self.text!r}, {self.reason!r})"


class SpeechAnnouncer:
    """Speaks the referee's calls (an :class:`companion.announcers.Announcer`).

    Args:
        game: the game's name (its catalogue table), e.g. ``"monsieur-carrousel"``.
        language: ``en``, ``fr`` or ``pt-BR``.
        voice: an espeak-ng voice; empty = the language's own (``[meta] voice``).
        cache_dir: the WAV cache folder.
        speed_wpm: espeak-ng speed, words per minute.
        timeout_s: limit of one espeak-ng run, and of playback beyond the file's length.
        device: ALSA device for aplay (``""`` = default).
        buzzer: what plays the fallback patterns: anything with ``play(pattern)`` (a
            :class:`BuzzerPlayer`, or the service's lights-and-buzzer announcer, which owns the
            buzzer pin), or None. Its owner closes it.
        renderer, player: stand-ins for tests (default: espeak-ng and aplay).
        queue_size: prompts waiting at most; beyond it the oldest waiting prompt is dropped.
        keep: how many :class:`Spoken` records :attr:`history` keeps.

    A prompt the signals file lists in ``[interruptible] <game>`` (Monsieur Carrousel's "turn
    the carousel") is cut short when a call with a later time ``t`` is announced (the carousel
    has stopped: its answer must be heard now, not after the rest of the instruction), and
    skipped when that happens before it started. Calls of the same observation (the same
    ``t``) never cut each other, nor does an ``invalid_observation`` (a button pressed while
    the carousel is turning).

    Raises:
        CatalogueError: an unknown language.
    """

    def __init__(
        self,
        game: str,
        language: str = "en",
        voice: str = "",
        cache_dir: str | os.PathLike[str] = DEFAULT_CACHE_DIR,
        speed_wpm: int = 140,
        timeout_s: float = 5.0,
        device: str = "",
        buzzer: Any = None,
        renderer: EspeakRenderer | None = None,
        player: AudioPlayer | None = None,
        queue_size: int = 32,
        keep: int = 200,
    ):
        self.game = game
        self.catalogue = Catalogue(language)
        self.renderer = renderer or EspeakRenderer(voice or self.catalogue.voice, cache_dir, speed_wpm, timeout_s)
        self.player = player or AudioPlayer(device, timeout_s)
        self.buzzer = buzzer
        self.patterns = BuzzerPatterns()
        self.signals = self.patterns.signals
        self.history: list[Spoken] = []
        self.dropped = 0  # prompts dropped because the queue was full
        self._keep = keep
        self._latest_t: float | None = None  # the latest call time announced
        self._speaking: tuple[str, float] | None = None  # (call type, t) of the prompt being played
        self._queue: queue.Queue[tuple[str, Pattern, str, float | None] | None] = queue.Queue(queue_size)
        self._audio: bool | None = None
        self._warned: set[str] = set()
        self._closed = False
        self._thread = threading.Thread(target=self._work, name="speech", daemon=True)
        self._thread.start()

    # -- the Announcer protocol ------------------------------------------------------------

    def announce(self, call: Call, summary: Mapping[str, Any] | None = None) -> None:
        """Queue the call's sentence (if it has one and the game's ``[unspoken]`` list in the
        signals file does not name it); returns at once."""
        if not self.signals.spoken(self.game, call.type):
            return
        try:
            text = self.catalogue.text(call, self.game)
        except CatalogueError as exc:
            log.error("%s", exc)
            return
        if text is None:
            return
        t = float(call.t)
        if call.type != "invalid_observation" and (self._latest_t is None or t > self._latest_t):
            self._latest_t = t  # (only the service loop announces; the worker reads it)
        speaking = self._speaking
        if (speaking is not None and speaking[1] < t and call.type != "invalid_observation"
                and self.signals.cut_short(self.game, speaking[0])):
            self.player.stop()
        self._put((text, self.patterns.for_call(call, self.game), call.type, t))

    def say(self, text: str) -> None:
        """Queue a sentence as it is (``companion say``); returns at once."""
        self._put((text, self.patterns.pattern_for(self.game, ["say"]), "say", None))

    def close(self, timeout_s: float = 10.0) -> None:
        """Finish the queued prompts (at most ``timeout_s``) and stop the worker; idempotent."""
        if self._closed:
            return
        self._closed = True
        self.drain(timeout_s)
        try:
            self._queue.put_nowait(None)
        except queue.Full:
            pass
        self._thread.join(timeout_s)

    # -- helpers ---------------------------------------------------------------------------

    def pending(self) -> int:
        """Prompts queued and not yet finished."""
        return self._queue.unfinished_tasks

    def drain(self, timeout_s: float | None = None) -> bool:
        """Wait until every queued prompt is finished; False when ``timeout_s`` ran out."""
        q = self._queue
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        with q.all_tasks_done:
            while q.unfinished_tasks:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                q.all_tasks_done.wait(remaining)
        return True

    def warm(self, texts: Sequence[str]) -> int:
        """Render sentences into the cache now (at start-up), so they play at once later.
        Returns how many were rendered; failures are logged, never raised."""
        n = 0
        for text in texts:
            try:
                if not self.renderer.is_cached(text):
                    self.renderer.render(text)
                    n += 1
            except SpeechError as exc:
                self._warn(exc.reason, f"speech: cannot render prompts: {exc}")
                break
        return n

    def _put(self, item: tuple[str, Pattern, str, float | None]) -> None:
        if self._closed:
            return
        while True:
            try:
                self._queue.put_nowait(item)
                return
            except queue.Full:
                try:  # drop the oldest waiting prompt: the newest one matters now
                    self._queue.get_nowait()
                    self._queue.task_done()
                    self.dropped += 1
                    self._warn("dropped", "speech: prompts come faster than they can be spoken; "
                                          "the oldest waiting ones are dropped")
                except queue.Empty:
                    pass

    def _warn(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            log.warning("%s", message)

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is None:
                    return
                self._speak(*item)
            except Exception:  # never let one prompt kill the announcer
                log.exception("speech: unexpected error")
            finally:
                self._queue.task_done()

    def _stale(self, call_type: str, t: float | None) -> bool:
        """True for an ``[interruptible]`` prompt once a call of a later time was announced."""
        latest = self._latest_t
        return (t is not None and latest is not None and latest > t
                and self.signals.cut_short(self.game, call_type))

    def _speak(self, text: str, pattern: Pattern, call_type: str, t: float | None = None) -> None:
        wav: Path | None = None
        try:
            wav = self.renderer.render(text)
            if self._audio is None:
                self._audio = self.player.available()
                if not self._audio:
                    self._warn("no_device", f"speech: no audio device; writing prompts to {self.renderer.cache_dir} "
                                            "and using the buzzer")
            if not self._audio:
                raise SpeechError("no audio device", "no_device")
            if self._stale(call_type, t):
                self._record(Spoken(text, wav, "cut", "skipped", call_type))
                return
            self._speaking = (call_type, t) if t is not None else None
            try:
                played = self.player.play(wav, keep_playing=lambda: not self._stale(call_type, t))
            finally:
                self._speaking = None
            self._record(Spoken(text, wav, "played" if played else "cut", "" if played else "stopped", call_type))
        except SpeechError as exc:
            if exc.reason != "no_device":
                self._warn(exc.reason, f"speech: {exc}; using the buzzer")
            if self.buzzer is not None:
                self.buzzer.play(pattern)
            outcome = "written" if exc.reason == "no_device" else ("buzzer" if self.buzzer else "silent")
            self._record(Spoken(text, wav, outcome, exc.reason, call_type))

    def _record(self, spoken: Spoken) -> None:
        self.history.append(spoken)
        del self.history[: -self._keep]
