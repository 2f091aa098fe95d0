"""After a commit, every local socket of the room gets its update: a patch from the view it has
(filter first, then diff: ``room_views`` is the choke point) or else the whole view.

The frames are made as bytes: orjson's own output, the patch's fixed head and its events (the
same for every viewer who owns no secret in them) made once per fan-out; every view shares its
public parts, and the differ remembers what it found for a shared pair of old and new parts, so
the public part is diffed once per fan-out.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from app.core.protocol import Close
from app.rooms.diff import DiffMemo, patch_json
from app.rooms.intent import Intent
from app.rooms.model import Loaded, room_views
from app.rooms.sockets import RoomSocket
from engine import Event


def fanout(conns: dict[str, RoomSocket] | None, loaded: Loaded, events: list[Event], now: int,
           node_id: str, recent: Iterable[Event] = (), behind_only: bool = False,
           answering: Intent | None = None, answer: dict[str, Any] | None = None) -> None:
    """Send each of the room's sockets ``conns`` its update (``behind_only``: only those that
    have not seen ``loaded``'s version yet); ``answering``'s socket gets ``answer`` behind its
    patch, in the same write. A socket whose player is gone from the room, or said hello on
    another process (``node_id`` is this one), is closed instead. A welcome carries ``recent``
    events."""
    if not conns:
        return
    room = loaded.room
    members, elsewhere = room.members_and_elsewhere(node_id)
    targets: list[RoomSocket] = []
    for conn in list(conns.values()):
        player = conn.player
        if player not in members:  # removed by the host, or left
            conn.close(Close.BAD_TOKEN)
            continue
        if player in elsewhere:  # the player said hello on another process
            conn.close(Close.REPLACED)
            continue
        if behind_only and conn.view is not None and conn.version >= room.version:
            continue
        targets.append(conn)
    if not targets:
        return
    public, views = room_views(loaded, [conn.player for conn in targets], now)
    memo: DiffMemo = {}
    owners = {e.owner for e in events if e.owner is not None}
    wire: dict[str | None, bytes] = {}  # the events as each viewer may see them, serialised once
    version = room.version
    head = b'{"type":"patch","version":%d,"now":%d,"ops":' % (version, now)
    reply = answering.reply if answering is not None and answer is not None else None
    for conn in targets:
        view = views[conn.player]
        if conn.view is None or conn.version != version - 1:
            frame = welcome_frame(conn.player, version, now, view, recent)
        else:
            key = conn.player if conn.player in owners else None
            seen = wire.get(key)
            if seen is None:
                seen = wire[key] = b',"events":%b}' % orjson.dumps([e.to_wire(key) for e in events])
            frame = head + patch_json(conn.view, view, memo, conn.public, public) + seen
        if conn is reply:
            assert answering is not None
            conn.send_frames([frame, orjson.dumps(answer)])
            answering.reply = None  # answered (if the send raised, the error answer goes out)
        else:
            conn.send(frame)
        conn.view = view
        conn.public = public
        conn.version = version


def welcome(conn: RoomSocket, loaded: Loaded, now: int, recent: Iterable[Event] = ()) -> None:
    """Send ``conn`` the whole view at the room's current version (hello, sync)."""
    room = loaded.room
    public, views = room_views(loaded, (conn.player,), now)
    view = views[conn.player]
    conn.send(welcome_frame(conn.player, room.version, now, view, recent))
    conn.view = view
    conn.public = public
    conn.version = room.version


def welcome_frame(player: str, version: int, now: int, view: dict[str, Any],
                  recent: Iterable[Event] = ()) -> bytes:
    """protocol.md ``welcome``: ``player``'s whole view at ``version``, and the events of late
    (``log``, oldest first, as ``player`` may see them)."""
    return orjson.dumps({"type": "welcome", "you": player, "version": version, "now": now, "state": view,
                         "log": [e.to_wire(player) for e in recent]})
