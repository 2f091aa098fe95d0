"""Prometheus metrics (``GET /metrics``): rooms, sockets, actions, latency, errors, timers."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST


class Metrics:
    """One registry per app, so tests can run several apps in one process."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.rooms = Gauge("mercyless_rooms", "Rooms with an actor in this process", registry=r)
        self.sockets = Gauge("mercyless_sockets", "Connected WebSockets whose sessions run here", registry=r)
        self.relayed = Gauge("mercyless_relayed_sockets",
                             "WebSockets accepted here and relayed to their room's home process", registry=r)
        self.actions = Counter("mercyless_actions", "Accepted changes committed", ["kind"], registry=r)
        self.latency = Histogram(
            "mercyless_action_seconds", "From an intent entering its room's inbox to its commit",
            buckets=(0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5), registry=r)
        self._action_children: dict[str, Any] = {}
        self.errors = Counter("mercyless_errors", "Refused messages by error code", ["code"], registry=r)
        self.timers = Counter("mercyless_timers_fired", "Deadline ticks taken from the scheduler",
                              registry=r)
        self.conflicts = Counter("mercyless_commit_conflicts",
                                 "Commits that lost the version check and were retried", registry=r)
        self.history = Counter("mercyless_rounds_written", "Finished rounds written to the database",
                               registry=r)
        self.gc_pauses = Histogram(
            "mercyless_gc_pause_seconds",
            "Garbage collections run by the event loop's pacer (app/core/gc_pacing.py), by the oldest "
            "generation collected (1: young and middle, 2: full); each pauses every room of the process",
            ["generation"], buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5),
            registry=r)
        self._gc_children: dict[int, Any] = {}
        self.loop_late = Histogram(
            "mercyless_loop_late_seconds",
            "How much later than asked the event loop woke the collector's pacer (every 20 ms-1 s): "
            "what any room's next step waits on the work queued before it",
            buckets=(0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1), registry=r).observe

    def count_action(self, kind: str) -> None:
        """``actions{kind}`` + 1, the labelled child looked up once per kind (``labels()``
        checks and joins its arguments under a lock on every call; this runs on every commit)."""
        child = self._action_children.get(kind)
        if child is None:
            child = self._action_children[kind] = self.actions.labels(kind)
        child.inc()

    def gc_pause(self, generation: int, seconds: float) -> None:
        """A collection of ``generation`` took ``seconds`` (every 20 ms under load: the labelled
        child is looked up once, as for the actions)."""
        child = self._gc_children.get(generation)
        if child is None:
            child = self._gc_children[generation] = self.gc_pauses.labels(str(generation))
        child.observe(seconds)

    def render(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
