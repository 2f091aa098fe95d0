"""RFC 6902 patches between two views of one player.

``jsonpatch.make_patch`` is general and costs ~400 us for a 1 KB view here; a move fans out
one diff per viewer, so this specialised differ does the same job in a few microseconds: dicts
key by key, lists by trimming the common prefix and suffix and then removing and adding the
middle. ``jsonpatch.apply_patch(old, diff(old, new)) == new`` is the property its tests check.
"""

from __future__ import annotations

from typing import Any

import orjson

from engine.view import OWN_GAME_KEYS

_ESCAPED: dict[str, str] = {}


def _escape(key: str) -> str:
    escaped = _ESCAPED.get(key)
    if escaped is None:
        escaped = key.replace("~", "~0").replace("/", "~1")
        if len(_ESCAPED) < 4096:  # view keys are a small fixed set; player ids add a few
            _ESCAPED[key] = escaped
    return escaped


#: Ops already found for a pair of old and new containers at a path, during one fan-out. The
#: entry keeps both objects alive, so their ids cannot be reused while the memo lives.
DiffMemo = dict[tuple[Any, ...], Any]


def diff(old: Any, new: Any, path: str = "", memo: DiffMemo | None = None) -> list[dict[str, Any]]:
    """The ops that turn ``old`` into ``new``. With a ``memo`` shared by the diffs of one
    fan-out, a pair of containers met before (the public parts every view of a table shares,
    see ``engine.views_for``) costs a look-up instead of a second walk."""
    ops: list[dict[str, Any]] = []
    if memo is None:
        _diff(old, new, path, ops)
    else:
        _diff_memo(old, new, path, ops, memo)
    return ops


def diff_view(old: dict[str, Any], new: dict[str, Any], memo: DiffMemo,
              old_public: dict[str, Any] | None, new_public: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The ops that turn ``old`` into ``new``, two whole views of one viewer whose ``game`` parts
    were built from the public games ``old_public`` and ``new_public`` (``app.rooms.model.room_views``;
    None when not known: then as ``diff(old, new, memo=memo)``). Every key of such a ``game``
    but the viewer's own (``OWN_GAME_KEYS``) holds the public game's object, and ``room`` and
    ``players`` are built with it and shared by every view of that call: the ops for those
    three parts are found once per fan-out for each old public game (one look-up per viewer,
    usually the same one for all), and only the hand and the own keys are diffed per viewer
    (the per-viewer walk of ``game`` was the fan-out's largest cost)."""
    if old_public is None or new_public is None:
        ops: list[dict[str, Any]] = []
        _diff_memo(old, new, "", ops, memo)
        return ops
    return _shared(old, new, memo, old_public, new_public)[6] + _own_ops(old, new)


def patch_json(old: dict[str, Any], new: dict[str, Any], memo: DiffMemo,
               old_public: dict[str, Any] | None, new_public: dict[str, Any] | None) -> bytes:
    """``diff_view``'s ops as a JSON array. The shared parts' ops are serialised once per
    fan-out (kept in the memo beside them) and each viewer's own ops joined to them."""
    if old_public is None or new_public is None:
        return orjson.dumps(diff_view(old, new, memo, old_public, new_public))
    entry = _shared(old, new, memo, old_public, new_public)
    shared = entry[7]
    if shared is None:
        shared = entry[7] = orjson.dumps(entry[6])
    own = _own_ops(old, new)
    if not own:
        return shared
    if not entry[6]:
        return orjson.dumps(own)
    return b"%b,%b" % (shared[:-1], orjson.dumps(own)[1:])


def _shared(old: dict[str, Any], new: dict[str, Any], memo: DiffMemo,
            old_public: dict[str, Any], new_public: dict[str, Any]) -> list[Any]:
    """The memo's entry for the parts ``old`` and ``new`` share with the other views of their
    tables: ``[old room, old players, old public game, new room, new players, new public game,
    their ops, those ops' JSON or None]``."""
    old_room, old_players, new_room, new_players = old["room"], old["players"], new["room"], new["players"]
    mkey = (id(old_public), id(new_public))
    hit = memo.get(mkey)
    # the key's two objects are kept alive by the entry, so their ids cannot be reused while
    # the memo lives; the parts built with them are checked, not assumed
    if hit is None or hit[0] is not old_room or hit[1] is not old_players or hit[3] is not new_room \
            or hit[4] is not new_players:
        found: list[dict[str, Any]] = []
        if old_room is not new_room:
            _diff(old_room, new_room, "/room", found)
        if old_players is not new_players:
            _diff(old_players, new_players, "/players", found)
        _diff_public_game(old_public, new_public, found)
        hit = [old_room, old_players, old_public, new_room, new_players, new_public, found, None]
        if mkey not in memo:
            memo[mkey] = hit
    return hit


def _own_ops(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """The ops for one viewer's own parts: the hand and ``OWN_GAME_KEYS``."""
    ops: list[dict[str, Any]] = []
    old_hand, new_hand = old["hand"], new["hand"]
    # a hand is a list of card strings; an unchanged one is usually the same list (table_views)
    if old_hand is not new_hand and old_hand != new_hand:
        _diff_list(old_hand, new_hand, "/hand", ops)
    old_game, new_game = old["game"], new["game"]
    # the own keys are small (a choice, a card, the legal hints): one that changed is sent
    # whole, which costs one op instead of a walk, and is often shorter than the ops (a turn
    # that passes empties one seat's playable cards and fills another's)
    for key in OWN_GAME_KEYS:
        value = old_game.get(key, _MISSING)
        other = new_game.get(key, _MISSING)
        if value is other:
            continue
        if other is _MISSING:
            ops.append({"op": "remove", "path": _OWN_PATH[key]})
        elif value is _MISSING:
            ops.append({"op": "add", "path": _OWN_PATH[key], "value": other})
        elif type(value) is not type(other) or value != other:
            ops.append({"op": "replace", "path": _OWN_PATH[key], "value": other})
    return ops


_OWN_PATH = {key: f"/game/{key}" for key in OWN_GAME_KEYS}


def _diff_public_game(old_public: dict[str, Any], new_public: dict[str, Any],
                      ops: list[dict[str, Any]]) -> None:
    """The ops for every key of ``game`` but the own ones."""
    for key, value in old_public.items():
        if key in OWN_GAME_KEYS:
            continue
        other = new_public.get(key, _MISSING)
        if other is _MISSING:
            ops.append({"op": "remove", "path": f"/game/{_escape(key)}"})
        elif value is not other and (type(value) is not type(other) or value != other):
            kind = type(other)
            if type(value) is kind and (kind is dict or kind is list):
                _diff(value, other, f"/game/{_escape(key)}", ops)
            else:  # a scalar (or a changed type): replaced here, as _diff would
                ops.append({"op": "replace", "path": f"/game/{_escape(key)}", "value": other})
    if new_public.keys() != old_public.keys():
        for key, value in new_public.items():
            if key not in old_public and key not in OWN_GAME_KEYS:
                ops.append({"op": "add", "path": f"/game/{_escape(key)}", "value": value})


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON, for two views of one player. ``==`` runs in C over nested dicts and
    lists, so an unchanged part of a view costs one comparison. Python's ``==`` takes ``true``
    for ``1``; the type check keeps them apart at this level, and deeper down the views'
    schema does: a value at one path keeps its JSON type from view to view (a flag stays a
    flag, a count a count; only ``null`` comes and goes), the precondition of this differ."""
    return a is b or (type(a) is type(b) and a == b)


_MISSING = object()


def _diff_memo(old: Any, new: Any, path: str, ops: list[dict[str, Any]], memo: DiffMemo) -> None:
    """``_diff`` one level down with the memo: a view's top level and its ``game`` are a
    viewer's own dicts, the values inside them are shared between viewers."""
    if type(old) is not dict or type(new) is not dict:
        _diff(old, new, path, ops)
        return
    for key, value in old.items():
        other = new.get(key, _MISSING)
        if value is other:
            continue
        if other is _MISSING:
            ops.append({"op": "remove", "path": f"{path}/{_escape(key)}"})
            continue
        kind = type(other)
        if kind is not dict and kind is not list:  # a scalar: compared here, no path built
            if not (type(value) is kind and value == other):
                ops.append({"op": "replace", "path": f"{path}/{_escape(key)}", "value": other})
            continue
        if key == "game" and not path:
            _diff_memo(value, other, "/game", ops, memo)
            continue
        _diff_shared(value, other, path, key, ops, memo)
    if new.keys() != old.keys():
        for key, value in new.items():
            if key not in old:
                ops.append({"op": "add", "path": f"{path}/{_escape(key)}", "value": value})


def _diff_shared(value: Any, other: Any, path: str, key: str, ops: list[dict[str, Any]],
                 memo: DiffMemo) -> None:
    """The ops for ``key`` under ``path``, from the memo when this pair was diffed before in
    the fan-out (the parts its views share)."""
    mkey = (id(value), id(other), path, key)
    hit = memo.get(mkey)
    if hit is None:
        found: list[dict[str, Any]] = []
        _diff(value, other, f"{path}/{_escape(key)}", found)
        memo[mkey] = hit = (value, other, found)
    ops.extend(hit[2])


def _diff(old: Any, new: Any, path: str, ops: list[dict[str, Any]]) -> None:
    if _same(old, new):
        return
    if type(old) is dict and type(new) is dict:
        for key, value in old.items():
            if key not in new:
                ops.append({"op": "remove", "path": f"{path}/{_escape(key)}"})
                continue
            other = new[key]
            kind = type(other)
            if value is other or (type(value) is kind and value == other):
                continue
            if type(value) is kind and (kind is dict or kind is list):
                _diff(value, other, f"{path}/{_escape(key)}", ops)
            else:  # a scalar (or a changed type): replaced here, as _diff would
                ops.append({"op": "replace", "path": f"{path}/{_escape(key)}", "value": other})
        if new.keys() != old.keys():
            for key, value in new.items():
                if key not in old:
                    ops.append({"op": "add", "path": f"{path}/{_escape(key)}", "value": value})
        return
    if type(old) is list and type(new) is list:
        _diff_list(old, new, path, ops)
        return
    ops.append({"op": "replace", "path": path, "value": new})


def _diff_list(old: list[Any], new: list[Any], path: str, ops: list[dict[str, Any]]) -> None:
    n_old, n_new = len(old), len(new)
    start = 0
    limit = min(n_old, n_new)
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = n_old, n_new
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    common = min(end_old - start, end_new - start)
    # same-position items that changed: diff them in place (a player's card count, say)
    for i in range(start, start + common):
        _diff(old[i], new[i], f"{path}/{i}", ops)
    # then remove what is left of the old middle (from the back, so indexes stay valid)...
    for i in range(end_old - 1, start + common - 1, -1):
        ops.append({"op": "remove", "path": f"{path}/{i}"})
    # ...and add what is left of the new middle
    for i in range(start + common, end_new):
        ops.append({"op": "add", "path": f"{path}/{i}", "value": new[i]})
