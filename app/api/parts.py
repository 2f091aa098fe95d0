"""What the HTTP routes use, one part at a time.

The composition root (app/main.py) puts each part on ``app.state`` under its own name; a route
reads the parts it needs and nothing else. The process's rooms are reached through one call,
``submit``: which actor runs a room, and how, is the hub's business, not a route's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request

from app.core.clock import Clock
from app.core.settings import Settings
from app.processes.limits import AddressLimits
from app.processes.quotas import Quotas
from app.rooms.intent import Intent
from app.storage.store import RoomStore

#: a room's serial inbox: ``await submit(code, intent)`` is the intent's answer
Submit = Callable[[str, Intent], Awaitable[dict[str, Any]]]


def settings(request: Request) -> Settings:
    return request.app.state.settings


def store(request: Request) -> RoomStore:
    return request.app.state.store


def clock(request: Request) -> Clock:
    return request.app.state.clock


def quotas(request: Request) -> Quotas:
    return request.app.state.quotas


def limits(request: Request) -> AddressLimits:
    return request.app.state.limits


def submit(request: Request) -> Submit:
    return request.app.state.submit
