"""The fast constructor of the engine's NamedTuple values (events, transitions, plays...).

Each value type binds its own right after its class (``new_event = record_maker(Event)``) and
the hot paths build through that; nothing else in the engine calls ``tuple.__new__``.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MethodType
from typing import Any, TypeVar

R = TypeVar("R", bound=tuple[Any, ...])


def record_maker(cls: type[R]) -> Callable[[tuple[Any, ...]], R]:
    """A constructor of ``cls`` that takes every field, in order, as one tuple.

    A NamedTuple's own constructor is a Python-level function, about twice the cost of this
    C-level one (a method bound to the class), and every move builds a few values. Nothing
    checks the fields and no default applies: the tuple must hold them all.
    """
    return MethodType(tuple.__new__, cls)
