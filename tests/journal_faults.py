"""Fault-injection helpers for tests/test_journal_faults.py, run as child processes.

``python -m tests.journal_faults start PATH``: open (create) the journal with the service's
lock and start a session, as `companion run` does first; prints ``opening`` just before, so
that the parent can SIGKILL it in the first milliseconds of the start.

``python -m tests.journal_faults full-disk PATH``: play a Carrousel game in a Service on a
manual clock while the file size limit (RLIMIT_FSIZE, Python ignores SIGXFSZ so writes fail
with EFBIG) is set just above the journal's size, then lifted; prints one JSON line with the
calls announced and the service's own calls.
"""

from __future__ import annotations

import json
import resource
import sys


def start(path: str) -> None:
    from companion.journal import Journal

    sys.stdout.write("opening\n")
    sys.stdout.flush()
    with Journal(path, lock=True, checkpoint_s=None) as journal:
        journal.start_session("carrousel", {"dead_end_s": 20.0}, {"players": ["Ana", "Ben"], "seed": 7})


class _Recorder:
    def __init__(self) -> None:
        self.calls: list[dict] = []

    def announce(self, call, summary) -> None:
        self.calls.append(call.to_json())

    def close(self) -> None:
        pass


def full_disk(path: str) -> None:
    import os

    from companion.clock import ManualClock
    from companion.games.carrousel import CarrouselReferee, Claim, GameStart, Position
    from companion.journal import Journal
    from companion.service import Service, open_session

    journal = Journal(path, checkpoint_s=None)
    referee = CarrouselReferee()
    opened = open_session(referee, journal, {}, {"players": ["Ana", "Ben"]})
    rec = _Recorder()
    clock = ManualClock()
    service = Service(referee, clock, journal=journal, session=opened.session, announcers=[rec])
    service.emit(GameStart(t=0.0, players=("Ana", "Ben"), spaces=Position.from_text(".gbykr.").spaces, seed=3))
    service.run(until=1.0, stop_when_over=False)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    size = max(os.path.getsize(path), os.path.getsize(path + "-wal"))
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))  # the disk is full from now on
    for i in range(12):
        service.emit(Claim(t=2.0 + i, player="Ana" if i % 2 else "Ben"))
        service.run(until=2.5 + i, stop_when_over=False)
    backlog = journal.backlog
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))  # space again
    service.emit(Claim(t=20.0, player="Ana"))
    service.run(until=21.0, stop_when_over=False)
    journal.close()
    print(json.dumps({"calls": rec.calls, "backlog_while_full": backlog}))


if __name__ == "__main__":
    {"start": start, "full-disk": full_disk}[sys.argv[1]](sys.argv[2])
