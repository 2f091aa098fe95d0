"""Checks every test gets for free."""

from __future__ import annotations

import copy

import pytest

from engine import view

_PRISTINE_HINT = copy.deepcopy(view._NO_HINT)


@pytest.fixture(autouse=True)
def _shared_hint_left_alone():
    """``engine.view._NO_HINT`` is one object in every view of a seat that may do nothing, in
    every room: a test (or the code it runs) that changed it in place would have changed them
    all."""
    yield
    assert view._NO_HINT == _PRISTINE_HINT, "the shared 'may do nothing' hint was changed in place"
