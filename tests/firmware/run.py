"""Runs the firmware checks under whichever interpreter runs this file (MicroPython or CPython).

Usage, from the repository root::

    micropython tests/firmware/run.py
    python tests/firmware/run.py

Puts ``firmware/`` and the stub ``machine``/``rp2`` modules on the path, runs every
``check_*`` function of the ``check_*.py`` modules here and ends with the line
``firmware: N passed, M failed``; the exit status is 1 when any failed.
"""

import sys

HERE = __file__.rsplit("/", 1)[0] if "/" in __file__ else "."
ROOT = HERE + "/../.."
sys.path.insert(0, HERE)
sys.path.insert(0, HERE + "/../firmware_stubs")
sys.path.insert(0, ROOT + "/firmware")

MODULES = ("check_quadrature", "check_protocol", "check_app", "check_pio", "check_main")


def main():
    passed = failed = 0
    impl = sys.implementation.name
    only = sys.argv[1:]
    for name in MODULES:
        mod = __import__(name)
        for attr in sorted(dir(mod)):
            if not attr.startswith("check_") or (only and attr not in only):
                continue
            fn = getattr(mod, attr)
            try:
                import machine

                machine.reset()
                fn()
            except Exception as exc:  # report and go on
                failed += 1
                print("FAIL %s.%s: %s: %s" % (name, attr, type(exc).__name__, exc))
                if impl != "micropython":
                    import traceback

                    traceback.print_exc()
                else:
                    sys.print_exception(exc)
            else:
                passed += 1
    print("firmware (%s): %d passed, %d failed" % (impl, passed, failed))
    return 1 if failed else 0


sys.exit(main())
