"""Test doubles shared by the service tests."""

from __future__ import annotations


class Recorder:
    """An announcer that keeps every call it is given, in order (``calls``)."""

    def __init__(self):
        self.calls = []

    def announce(self, call, summary):
        self.calls.append(call)

    def close(self):
        pass
