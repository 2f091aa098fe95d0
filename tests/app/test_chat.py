"""Quick chat (issue #47.3, app/rooms/chat.py): a phrase goes out as its id, never as text, to
everyone in the room; an unknown phrase, a second one too soon and a muted player's are refused
and change nothing; only the host mutes and unmutes; a big screen only watches."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from app.core.protocol import CHAT_PHRASES

from .conftest import module_server
from .harness import Client, ServerProcess
from .tables import level, ok, refused, seated


@pytest.fixture
def server(backend: str, request: pytest.FixtureRequest, module_servers) -> ServerProcess:
    return module_server(backend, request, module_servers)


async def _spectators(server: ServerProcess, code: str) -> tuple[Client, Client]:
    """A person watching (``watch``) and a big screen (``/watch``), connected."""
    rooms = f"{server.url}/api/rooms/{code}"
    person = httpx.post(f"{rooms}/join", json={"name": "Eve", "watch": True}, timeout=10)
    screen = httpx.post(f"{rooms}/watch", json={}, timeout=10)
    assert person.status_code == 200 and screen.status_code == 200, (person.text, screen.text)
    return (await Client(server, code, person.json()["token"]).connect(),
            await Client(server, code, screen.json()["token"]).connect())


async def _heard(c: Client, **data: Any) -> dict[str, Any]:
    def found() -> dict[str, Any] | None:
        return next((e for e in c.events if all(e.get(k) == v for k, v in data.items())), None)
    if found() is None:
        await c.until(lambda m: found() is not None)
    event = found()
    assert event is not None
    return event


async def test_a_phrase_reaches_everyone_as_its_id(server):
    ann, bob = await seated(server, ["Ann", "Bob"])
    eve, tv = await _spectators(server, ann.code)
    await level([ann, bob, eve, tv])
    await ok(ann, {"type": "chat", "phrase": "nice_one"})
    for c in (ann, bob, eve, tv):
        # the id only: each reader's client says it in their language
        said = await _heard(c, kind="chat", player=ann.you)
        assert said == {"kind": "chat", "player": ann.you, "phrase": "nice_one"}
    # a person watching chats too; a big screen only watches
    await ok(eve, {"type": "chat", "phrase": "hi_all"})
    await _heard(bob, kind="chat", player=eve.you, phrase="hi_all")
    await level([ann, bob, eve, tv])
    await refused(tv, {"type": "chat", "phrase": "gg"}, "spectator", ann, bob, eve)
    assert "no_mercy" in CHAT_PHRASES and len(CHAT_PHRASES) == 10
    for c in (ann, bob, eve, tv):
        await c.close()


async def test_free_text_and_unknown_phrases_are_refused(server):
    ann, bob = await seated(server, ["Ann", "Bob"])
    for phrase in ("Nice one!", "", "nice_one ", "ouch"):
        await refused(ann, {"type": "chat", "phrase": phrase}, "bad_phrase", bob)
    await refused(ann, {"type": "chat", "phrase": 7}, "bad_message", bob)
    await refused(ann, {"type": "chat"}, "bad_message", bob)
    for c in (ann, bob):
        await c.close()


async def test_one_phrase_per_interval_per_player(server):
    ann, bob = await seated(server, ["Ann", "Bob"])
    await ok(ann, {"type": "chat", "phrase": "gg"})
    await level([ann, bob])
    # CHAT_INTERVAL_MS (2 s by default): the next one now is refused; Bob's own is not
    await refused(ann, {"type": "chat", "phrase": "sorry"}, "rate_limited", bob)
    await ok(bob, {"type": "chat", "phrase": "so_close"})
    await _heard(ann, kind="chat", player=bob.you, phrase="so_close")
    for c in (ann, bob):
        await c.close()


async def test_the_host_mutes_and_unmutes_and_the_muted_player_sees_why(server):
    ann, bob, cat = await seated(server, ["Ann", "Bob", "Cat"])
    # only the host mutes, and never a bot
    await refused(bob, {"type": "mute", "player_id": cat.you, "muted": True}, "not_host", ann, cat)
    await refused(ann, {"type": "mute", "player_id": "p-nobody", "muted": True}, "bad_message", bob)
    await refused(ann, {"type": "mute", "player_id": ann.you, "muted": True}, "bad_message", bob)
    await ok(ann, {"type": "mute", "player_id": bob.you, "muted": True})
    for c in (ann, bob, cat):
        await _heard(c, kind="muted", player=bob.you, muted=True, by=ann.you)
    await level([ann, bob, cat])
    assert bob.view["room"]["muted"] == [bob.you]
    # muting again changes nothing, and sends nothing
    version = ann.version
    await ok(ann, {"type": "mute", "player_id": bob.you, "muted": True})
    await refused(bob, {"type": "chat", "phrase": "sorry"}, "muted", ann, cat)
    assert ann.version == version
    await ok(cat, {"type": "chat", "phrase": "no_mercy"})  # the others still chat
    # unmuted: Bob's next phrase goes out
    await ok(ann, {"type": "mute", "player_id": bob.you, "muted": False})
    await _heard(bob, kind="muted", player=bob.you, muted=False)
    await level([ann, bob, cat])
    assert bob.view["room"]["muted"] == []
    await ok(bob, {"type": "chat", "phrase": "sorry"})
    await _heard(cat, kind="chat", player=bob.you, phrase="sorry")
    await ok(ann, {"type": "add_bot"})
    await level([ann, bob, cat])
    bot = next(p["id"] for p in ann.view["players"] if p["bot"])
    await refused(ann, {"type": "mute", "player_id": bot, "muted": True}, "bad_message", bob)
    for c in (ann, bob, cat):
        await c.close()
