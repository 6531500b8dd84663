"""Shared test setup: no test writes to the real user's data folder (``crib play`` and
``crib serve`` keep their games in ``$XDG_DATA_HOME/crib-rl/`` by default)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _private_data_folder(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg-data")))
