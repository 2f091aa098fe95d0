"""What a socket's session and the relay use, handed in by the composition root (app/main.py)
rather than reached through the hub: the rooms of this process as a socket sees them, and the
few shared services a socket meets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from app.core.clock import Clock
from app.core.metrics import Metrics
from app.core.settings import Settings
from app.processes.limits import AddressLimits
from app.processes.quotas import Quotas
from app.rooms.intent import Intent
from app.rooms.sockets import LocalSockets, RoomSocket
from app.storage.pubsub import Listener
from app.storage.store import RoomStore
from app.transport.admission import Admission

if TYPE_CHECKING:
    from app.transport.relay import Relay


class RoomsHere(Protocol):
    """This process's rooms, as its sockets reach them (``app.processes.hub.Hub`` is the one)."""

    node_id: str  # this process's id: a seat's ``node`` names the process holding its socket
    sockets: LocalSockets

    @property
    def relay(self) -> Relay | None: ...  # sockets of rooms homed on another process go there

    @property
    def subscriber(self) -> Listener | None: ...  # other processes' messages

    @property
    def leaving(self) -> bool: ...  # the process got its stop signal

    async def submit(self, code: str, intent: Intent) -> dict[str, Any]: ...

    async def attach(self, conn: RoomSocket) -> None: ...

    async def detach(self, conn: RoomSocket) -> bool: ...


@dataclass(frozen=True, eq=False)
class SocketParts:
    rooms: RoomsHere
    settings: Settings
    clock: Clock
    store: RoomStore
    limits: AddressLimits
    quotas: Quotas
    metrics: Metrics
    admission: Admission  # the bounded queue before a new socket's welcome
