"""What a process imports that it does not use is memory it keeps (issue 15: the camera loop's
peak memory). Each check runs in a fresh interpreter, so that what this test session has
already imported does not hide an import."""

from __future__ import annotations

import json
import subprocess
import sys


def _modules_after(code: str) -> set[str]:
    """The names in ``sys.modules`` after running ``code`` in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", code + "\nimport json, sys; print(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True, timeout=60)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_the_command_line_parser_loads_no_reader():
    # every command's parser is built at start (`companion run`, `companion --help`): building it
    # must not load numpy, OpenCV or a reader (it once loaded the dice reader through calibrate tray)
    mods = _modules_after("from companion.cli import build_parser\nbuild_parser()")
    assert "companion.cli" in mods
    heavy = {m for m in mods if m.split(".")[0] in ("numpy", "cv2")
             or m.startswith(("companion.readers", "companion.vision", "companion.sources.dice_camera"))}
    assert not heavy


def test_calibrate_tray_help_names_the_tray_file():
    from companion.cli import build_parser
    from companion.sources.dice_camera import TRAY_FILE

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices["calibrate"]
    tray = next(a for a in sub._actions if a.dest == "what").choices["tray"]
    out = next(a for a in tray._actions if a.dest == "out")
    assert str(TRAY_FILE) in out.help


def test_the_carrousel_camera_loop_loads_no_other_game():
    # what the Carrousel camera loop imports: its source, the reader and the frame sources; not
    # the dice reader, another game's reader or rules, the web page, speech or the journal
    mods = _modules_after("import companion.sources.carrousel_camera, companion.vision.carrousel, "
                          "companion.vision.frames\n"
                          "from companion.sources.carrousel_camera import CarrouselCameraSource")
    assert "companion.vision.carrousel" in mods
    unused = {m for m in mods if m.startswith((
        "companion.readers", "companion.web", "companion.announcers", "companion.sources.dice_camera",
        "companion.games.carnival", "companion.games.carrossel", "companion.games.monsieur",
        "companion.vision.monsieur", "companion.vision.carrossel", "companion.vision.sim", "companion.journal"))
        or m in ("sqlite3", "asyncio", "gpiozero")}
    assert not unused


def test_companion_run_loads_no_web_module_for_a_page_that_is_off():
    # `companion run` with [web] off (or no `web` announcer) has no page: the web modules (the
    # hub's asyncio, and ssl with it) are not imported; with the page on, it is the real page
    code = ("from companion.config import validate\n"
            "from companion.commands.run import _web_page\n"
            "for section in ({'web': {'enabled': False}}, {'service': {'announcers': ['console']}}):\n"
            "    page = _web_page(validate(section), '/nonexistent/j.db', 'hardware')\n"
            "    assert page.hub is None and page.server is None\n"
            "    page.start(None)\n"
            "    page.stop()\n")
    mods = _modules_after(code)
    assert "companion.commands.run" in mods
    assert not {m for m in mods if m.split(".")[0] in ("asyncio", "ssl", "uvicorn", "starlette")
                or m.startswith("companion.web")}
    on = _modules_after("from companion.config import validate\n"
                        "from companion.commands.run import _web_page\n"
                        "page = _web_page(validate({}), '/nonexistent/j.db', 'hardware')\n"
                        "assert page.hub is not None and type(page).__name__ == 'WebPage'\n")
    assert "companion.web.server" in on
