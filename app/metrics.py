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
        self.sockets = Gauge("mercyless_sockets", "Connected WebSockets", registry=r)
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

    def count_action(self, kind: str) -> None:
        """``actions{kind}`` + 1, the labelled child looked up once per kind (``labels()``
        checks and joins its arguments under a lock on every call; this runs on every commit)."""
        child = self._action_children.get(kind)
        if child is None:
            child = self._action_children[kind] = self.actions.labels(kind)
        child.inc()

    def render(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
