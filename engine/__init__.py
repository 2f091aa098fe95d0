"""Mercyless rules engine for UNO Show 'em No Mercy: pure Python, standard library only.

No I/O, no clock (time comes in as ``now_ms``), no global random generator (the seeded one lives
in the state). The public surface:

- :func:`new_game`, :func:`apply`, :func:`legal_actions`, :func:`next_deadline`
- :func:`view_for` - the only way state leaves the engine
- :class:`Rules`, :func:`make_rules`, :data:`PRESETS`, :func:`rules_catalog`
- :class:`Record`, :func:`replay`, :func:`digest`
- :func:`default_choice` - how the server resolves a choice for an absent player
- :func:`easy_move` - the ``easy`` bot policy; :data:`BOT_LEVELS` - every bot level
"""

from .actions import Action, ActionKind
from .autoplay import default_choice
from .bots import BOT_LEVELS, easy_move
from .cards import CARD_INFO, STANDARD_DECK, Color, Kind, card_info
from .errors import EngineError, ErrorCode, IllegalAction, RulesError
from .events import Event, EventKind
from .game import Transition, apply, new_game, next_deadline
from .legal import legal_actions
from .record import Record, Step, digest, replay
from .rules import PRESETS, Rules, make_rules, rules_catalog
from .state import Choice, GameState, Pending
from .view import SeatInfo, view_for, views_for

__all__ = [
    "BOT_LEVELS",
    "CARD_INFO",
    "PRESETS",
    "STANDARD_DECK",
    "Action",
    "ActionKind",
    "Choice",
    "Color",
    "EngineError",
    "ErrorCode",
    "Event",
    "EventKind",
    "GameState",
    "IllegalAction",
    "Kind",
    "Pending",
    "Record",
    "Rules",
    "RulesError",
    "SeatInfo",
    "Step",
    "Transition",
    "apply",
    "card_info",
    "default_choice",
    "digest",
    "easy_move",
    "legal_actions",
    "make_rules",
    "new_game",
    "next_deadline",
    "replay",
    "rules_catalog",
    "view_for",
    "views_for",
]
