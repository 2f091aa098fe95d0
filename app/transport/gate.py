"""The door every frame a client sends passes first, before it is decoded, parsed or answered.

A frame is a ping (``{"type":"ping"}``, JSON whitespace allowed; told apart without parsing) or
a message (anything else, unparseable and invalid UTF-8 included). Each kind has a bucket of its
own: a player who clicks fast uses up the messages' and still gets pongs. A frame within its
bucket is let through. A frame past it costs a counter and nothing else (no decode, no parse,
no Redis, no answer), except that the first message past the limit in a window gets one
``rate_limited`` notice. A socket with ``flood_frames`` frames past the limit within one window
is flooding: the caller closes it (1008) and its address is slowed (app/processes/limits.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from enum import IntEnum

from app.core.protocol import BadMessage, Err, dumps, parse_json, usable_id
from app.core.settings import Settings
from app.processes.limits import TokenBucket
from app.rooms.intent import error

PONG_TEXT = '{"type":"pong"}'
PING_MAX = 64  # a longer frame is no ping (and is judged as a message)
#: dropped frames between two turns given to the loop: ``receive`` returns without waiting
#: while frames are queued, so a reader dropping a flood would hold the loop for all of them
YIELD_EVERY = 32
_PING_TEXT = '{"type":"ping"}'
_PING_BYTES = _PING_TEXT.encode()
_JSON_SPACE = " \t\n\r"
_SPACE_TABLE = str.maketrans("", "", _JSON_SPACE)
_SPACE_BYTES = _JSON_SPACE.encode()


def is_ping(frame: str | bytes) -> bool:
    """``frame`` is the ping message, as a JSON object of that one member (whitespace aside):
    told without parsing, in well under a microsecond."""
    if len(frame) > PING_MAX:
        return False
    if type(frame) is bytes:
        return frame.translate(None, _SPACE_BYTES) == _PING_BYTES
    return frame.translate(_SPACE_TABLE) == _PING_TEXT  # type: ignore[union-attr,arg-type]


class Verdict(IntEnum):
    MESSAGE = 0  # within the limit: handle it
    PING = 1  # within the pings' allowance: answer pong
    NOTICE = 2  # past the limit, the window's first message so: one rate_limited notice
    DROP = 3  # past the limit: nothing more
    FLOOD = 4  # flood_frames past the limit within one window: close (1008), slow the address


class Gate:
    __slots__ = ("_clock", "_flood_frames", "_noticed", "_over", "_window_end", "_window_s", "messages",
                 "pings")

    def __init__(self, messages: TokenBucket, pings: TokenBucket, window_s: float, flood_frames: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.messages = messages
        self.pings = pings
        self._window_s = window_s
        self._flood_frames = flood_frames
        self._clock = clock
        self._window_end = 0.0
        self._over = 0  # frames past the limit in this window
        self._noticed = False  # this window's notice went out

    @property
    def over(self) -> int:
        return self._over

    def admit(self, frame: str | bytes) -> Verdict:
        now = self._clock()
        ping = is_ping(frame)
        if (self.pings if ping else self.messages).take(now):
            return Verdict.PING if ping else Verdict.MESSAGE
        if now >= self._window_end:
            self._window_end = now + self._window_s
            self._over = 0
            self._noticed = False
        self._over += 1
        if self._over >= self._flood_frames:
            return Verdict.FLOOD
        if ping or self._noticed:
            return Verdict.DROP
        self._noticed = True
        return Verdict.NOTICE


def seconds(speed: float) -> Callable[[], float]:
    """Monotonic seconds of the server's clock (``CLOCK_SPEED``: tests run a night fast)."""
    if speed == 1:
        return time.monotonic
    return lambda: time.monotonic() * speed


def gate(settings: Settings, messages: TokenBucket, clock: Callable[[], float] = time.monotonic) -> Gate:
    """A socket's gate: ``messages`` is its message bucket (a player's, shared by their sockets,
    or the relaying process's own), the pings' is the socket's own; ``clock`` the buckets'."""
    return Gate(messages, TokenBucket(settings.ping_burst, settings.ping_per_s, clock),
                settings.flood_window_ms / 1000, settings.flood_frames, clock)


def notice(frame: str | bytes) -> str:
    """The window's one ``rate_limited`` answer, to the frame's id if it has one (one parse a
    window at most)."""
    msg_id = None
    try:
        raw = parse_json(frame)
    except BadMessage:
        raw = None
    if isinstance(raw, dict):
        msg_id = usable_id(raw)
    return dumps(error(msg_id, Err.RATE_LIMITED,
                       "slow down: messages past the limit are dropped unanswered for a while"))
