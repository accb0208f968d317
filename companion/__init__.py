"""Carousel Companion: a Raspberry Pi service that referees real table games.

Data flows one way: sources (camera, encoder, buttons) -> readers -> observations ->
referee (a pure rules engine per game) -> calls -> announcers (LEDs, buzzer, speech, console),
with every observation and call appended to a SQLite journal. See README.md and docs/.
"""

__version__ = "0.1.0"
