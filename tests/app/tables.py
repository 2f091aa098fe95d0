"""Helpers for tests that seat players in a room and check what they see."""

from __future__ import annotations

from typing import Any

from .harness import Client, ServerProcess


async def seated(server: ServerProcess, names: list[str],
                 rules: dict[str, Any] | None = None) -> list[Client]:
    """A lobby: the first name creates the room, the others join; everyone connected."""
    host = server.create(names[0], rules)
    infos = [host] + [server.join(host["code"], name) for name in names[1:]]
    clients = [await Client(server, host["code"], info["token"]).connect() for info in infos]
    await level(clients)
    return clients


async def started(server: ServerProcess, names: list[str],
                  rules: dict[str, Any] | None = None) -> list[Client]:
    clients = await seated(server, names, rules)
    await ok(clients[0], {"type": "start"})
    await level(clients)
    assert all(c.view["room"]["status"] == "playing" for c in clients)
    return clients


async def level(clients: list[Client]) -> int:
    """Wait until every client has the newest version (answers come after their patches)."""
    target = max(c.version for c in clients)
    for c in clients:
        await c.until_view(lambda v, c=c: c.version >= target)
    assert {c.version for c in clients} == {target}
    return target


async def quiet(*clients: Client) -> None:
    """Nothing new reached these clients (a pong comes after any patch already on its way) and
    their sockets are open."""
    for c in clients:
        version, view = c.version, c.view
        seen: list[dict[str, Any]] = []

        def pong(m: dict[str, Any], seen: list[dict[str, Any]] = seen) -> bool:
            seen.append(m)
            return m["type"] == "pong"

        await c.send_raw('{"type": "ping"}')
        await c.until(pong)
        assert [m for m in seen if m["type"] in ("patch", "welcome")] == []
        assert (c.version, c.view) == (version, view)


async def ok(c: Client, msg: dict[str, Any], msg_id: str | None = None) -> dict[str, Any]:
    answer = await c.send(msg, msg_id=msg_id)
    assert answer["type"] == "ack", (msg, answer)
    return answer


async def refused(c: Client, msg: dict[str, Any], code: str, *others: Client,
                  msg_id: str | None = None) -> dict[str, Any]:
    """``msg`` gets ``error`` ``code`` (with its id) and changes nothing anyone sees."""
    watch = (c, *others)
    before = [(x.version, x.view) for x in watch]
    answer = await c.send(msg, msg_id=msg_id)
    assert answer["type"] == "error" and answer["code"] == code, (msg, answer)
    assert set(answer) == {"type", "id", "code", "message"} and answer["message"]
    await quiet(*watch)
    assert [(x.version, x.view) for x in watch] == before
    return answer
