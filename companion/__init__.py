"""Carousel Companion: a Raspberry Pi service that referees real table games.

Data flows one way: sources (camera, encoder, buttons) -> readers -> observations ->
referee (a pure rules engine per game) -> calls -> announcers (LEDs, buzzer, speech, console),
with every observation and call appended to a SQLite journal. See README.md and docs/.
"""

import os as _os

# One BLAS thread, set before numpy is first imported (a value already set wins): numpy's
# OpenBLAS hands a product of a few thousand rows to more threads, which then spin between the
# camera's frames; the readers' products are small (the Carrousel camera loop: 6.3 against 10.6
# ms of CPU a frame on numpy 1.24, docs/BENCHMARKS.md, issue 15).
_os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"
