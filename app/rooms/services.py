"""What a room's actor needs of its process, and nothing more: the store, the clock, the
settings, the metrics, the local sockets, the deadline scheduler, the history outbox and the bot
workers."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Protocol

from app.core.clock import Clock
from app.core.metrics import Metrics
from app.core.settings import Settings
from app.rooms.sockets import LocalSockets
from app.storage.store import RoomStore
from engine import Action
from engine.ai.think import Thought


class Deadlines(Protocol):
    """The process's deadline scheduler (``app.processes.scheduler.Scheduler``)."""

    def note_due(self, code: str, due: int | None) -> None: ...

    async def arm(self, code: str, due: int | None, version: int | None = None) -> bool: ...


class HistoryOutbox(Protocol):
    """Where a room's finished rounds are announced (``app.history.writer.HistoryWriter``)."""

    async def note(self, code: str) -> None: ...


class Thinker(Protocol):
    """Where bots' searches are made off the event loop (``app.processes.thinkers.BotPool``)."""

    def budget_ms(self) -> float: ...

    def submit(self, thought: Thought) -> asyncio.Future[Action | None]: ...


@dataclass(eq=False)
class RoomServices:
    settings: Settings
    store: RoomStore
    clock: Clock
    metrics: Metrics
    sockets: LocalSockets
    deadlines: Deadlines
    node_id: str  # this process's id (a seat's ``node`` names the process holding its socket)
    publishes: bool  # other processes may hold the room's sockets: commits are published
    history: HistoryOutbox | None = None
    thinker: Thinker | None = None  # None: searches run on the loop, with the small budget
