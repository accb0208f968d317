"""The Monsieur Carrousel reader and renderer as module-scoped pytest fixtures, shared by the
Monsieur vision test files (``from tests.monsieur_fixtures import reader, renderer``): one
reader (its seat layout planned once) and one renderer per test module."""

from __future__ import annotations

import pytest

from companion.vision.monsieur import MonsieurReader
from companion.vision.sim_monsieur import MonsieurRenderer


@pytest.fixture(scope="module")
def reader() -> MonsieurReader:
    """A :class:`~companion.vision.monsieur.MonsieurReader` with the shipped calibration."""
    return MonsieurReader()


@pytest.fixture(scope="module")
def renderer() -> MonsieurRenderer:
    """A :class:`~companion.vision.sim_monsieur.MonsieurRenderer` of the shipped table."""
    return MonsieurRenderer()
