"""Settings from the environment (pydantic-settings). Unset ``REDIS_URL`` means the embedded
store (a Valkey child process, app/storage/embedded.py); unset ``DATABASE_URL`` means a SQLite
file, so the server runs with nothing else."""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="", env_file=None, extra="ignore")

    redis_url: str | None = Field(default=None, description="redis://...; unset = the embedded store")
    database_url: str = Field(default="sqlite+aiosqlite:///./mercyless.sqlite3")
    key_prefix: str = "mercyless"
    # REDIS_URL names any node of a Redis Cluster: commits go to each room's shard, room channels
    # are sharded pub/sub (SPUBLISH/SSUBSCRIBE, Redis 7); docs/deploy.md "Redis Cluster"
    redis_cluster: bool = False
    # on a cluster, a commit is answered once this many replicas of its shard have it (WAIT;
    # fewer when the shard has fewer): an acknowledged action survives a failover; 0 = off
    ack_replicas: int = Field(default=1, ge=0)
    # how long a commit waits for them; past it the client is told to retry (its id is kept)
    ack_replica_timeout_ms: int = Field(default=1_000, gt=0)
    # how long a cluster command is retried while its shard fails over or a slot moves
    cluster_retry_ms: int = Field(default=10_000, gt=0)
    # the cluster's slot map is read again at least this often while commits flow (besides on
    # every MOVED and lost node), so a replica that joined is waited for (ACK_REPLICAS)
    cluster_refresh_ms: int = Field(default=5_000, gt=0)
    redis_max_connections: int = 64  # per process; more callers wait for a free one
    log_level: str = "INFO"
    allowed_origins: list[str] = Field(
        default_factory=list,
        description="Origins allowed to open WebSockets; empty = same host only (or no Origin header)")

    # bots
    bot_delay_ms: int = 800
    # added to every bot's drawn reaction time (engine.ai.reaction); tests set it past any catch
    # window to keep bots from catching
    bot_catch_delay_ms: int = 0
    # a hard bot's search per decision in a worker process (BOT_WORKERS), in the worker's CPU
    # time (and at most three times that of wall clock): what the tournament measures
    # (engine.ai.hard.SEARCH_BUDGET_MS); less while the workers have more searches than they
    # can make at once
    hard_bot_budget_ms: float = 85.0
    # a search not back this long after it was asked (the workers starved of CPU) is dropped:
    # the next tick decides on the loop with bot_inline_budget_ms
    bot_search_overdue_ms: int = Field(default=1_500, gt=0)

    # timers (rules.md "Timers"); the clock speed lets tests run long timers quickly
    reconnect_grace_ms: int = 100_000
    # a disconnected player's turn (or a choice the game waits for) is played by their seat's bot
    # this long after it came to them, or after they dropped if later: a closed tab does not run
    # the whole turn timer again and again. Their seat stays theirs (a hello takes it back).
    # 0: only the reconnect grace hands a seat to its bot
    away_turn_grace_ms: int = Field(default=10_000, ge=0)
    hello_timeout_ms: int = 10_000
    # a storm of new sockets (a restart under thousands of phones; app/transport/admission.py):
    # at most this many do their pre-welcome work (address check, the hello's load and commit)
    # at once, within the Redis pool's REDIS_MAX_CONNECTIONS so that rooms in play keep their
    # share; the rest wait in arrival order, and past hello_queue waiting a newcomer is closed
    # with 1013 and a retry_ms hint. 0: no bound
    hellos_at_once: int = Field(default=24, ge=0)
    hello_queue: int = Field(default=2_000, ge=0)
    # the pace a process welcomes a crowd back at: a stopping process asks its N phones to come
    # back spread over N / this seconds (1-30 s), in its close's reason (1012)
    welcomes_per_s: float = Field(default=500.0, gt=0)
    room_ttl_ms: int = 6 * 3600 * 1000
    # a room nobody ever opened (no hello yet) expires this long after its last change, and is
    # not counted against MAX_ROOMS: a flood of creations cannot fill the server
    unclaimed_room_ttl_ms: int = Field(default=600_000, gt=0)
    clock_speed: float = Field(default=1.0, gt=0)
    # how often a process looks in Redis for due rooms. A process wakes for the deadlines of its
    # own commits; the poll is for those of a process that died (found 15 s later at the
    # earliest, node_ttl_ms). Every poll is a loop wake-up and a round trip (docs/server.md)
    scheduler_poll_ms: int = 1_000
    # a process's heartbeat; one silent for node_ttl_ms is dead, and the seats it held are
    # marked disconnected (their reconnect grace starts)
    node_beat_ms: int = 5_000
    node_ttl_ms: int = 15_000
    # finished rounds wait this long in Redis after the first one is noted, so one transaction
    # writes all that ended meanwhile (under load ~17 a second; one each cost ~10% of the CPU)
    history_gather_ms: int = Field(default=1_000, ge=0)
    # the event loop runs the cyclic garbage collector between its callbacks, a little at a
    # time (app/core/gc_pacing.py); false leaves it to CPython's allocation counts
    gc_paced: bool = True
    # a socket of a room whose home is another process is relayed there (app/transport/relay.py); false:
    # every process serves its own sockets and catches up on the others' commits
    relay_sockets: bool = True
    relay_ping_ms: int = Field(default=1_000, gt=0)  # a relaying process pings each home this often
    relay_silence_ms: int = Field(default=5_000, gt=0)  # a side heard nothing from for this long is gone

    # where friends open the server (the invite link), e.g. https://uno.example.org; unset: the
    # host's own addresses when listening on all interfaces (mercyless serve --host 0.0.0.0)
    public_url: str | None = None
    # what mercyless serve listens on (set by it; the invite reads them)
    listen_host: str = "127.0.0.1"
    listen_port: int = 8000

    # the embedded store (no REDIS_URL): the folder of its Valkey child's append-only file, socket
    # and log; "" keeps it in memory only (app/storage/embedded.py)
    embedded_store: str = "mercyless-store"
    # when its append-only file is fsynced: "always" before a commit is answered (a power cut
    # loses nothing acknowledged), "everysec" once a second (docs/deploy.md weighs the two)
    embedded_fsync: Literal["always", "everysec"] = "always"
    # the file is rewritten in the background once it has doubled since the last rewrite and is
    # past this size
    embedded_rewrite_min_mb: int = Field(default=64, ge=1)

    # limits
    max_frame_bytes: int = 4096
    rate_burst: int = 20
    rate_per_s: float = 5.0
    reaction_interval_ms: int = 1000
    chat_interval_ms: int = Field(default=2000, ge=0)  # per player: one quick-chat phrase this often
    max_spectators: int = Field(default=30, ge=0)  # per room; joiners past it get room_full
    joins_per_min: int = Field(default=30, ge=0)  # successful HTTP joins per client address; 0 = no limit
    rooms_per_min: int = Field(default=10, ge=0)  # rooms created per client address; 0 = no limit
    max_rooms: int = Field(default=10_000, ge=0)  # rooms created within a room's lifetime; 0 = no limit
    qr_per_min: int = Field(default=30, ge=0)  # QR codes drawn per client address; 0 = no limit
    # what the per-address limits key on (docs/security.md)
    # every "per client address" limit counts the client's network (app/core/networks.py): one
    # host holds a whole IPv6 /64, so its full addresses would make it 2^64 clients; an IPv4
    # address (an IPv4-mapped IPv6 one too) counts alone unless this says otherwise
    limit_ipv6_prefix: int = Field(default=64, ge=0, le=128)
    limit_ipv4_prefix: int = Field(default=32, ge=0, le=32)
    # room look-ups (GET /api/rooms/{code}) per client network, found or not; 0 = no limit
    lookups_per_min: int = Field(default=60, ge=0)
    outbox_limit: int = 256
    send_timeout_s: float = 10.0
    # a socket not heard from for this long is pinged (the browser client pings every 15 s, so
    # it never is), and closed when its pong does not come within ws_ping_timeout_s
    ws_ping_interval_s: float = 16.0
    ws_ping_timeout_s: float = 10.0
    failed_joins_per_min: int = 10  # per client address; 0 = no limit (load tests)
    sockets_per_ip: int = 64  # open WebSockets per client address; 0 = no limit
    answers_kept: int = 4096
    # a socket's pings have an allowance of their own, apart from its messages (RATE_*), and
    # are answered where the socket landed (a relayed one's too)
    ping_burst: int = 20
    ping_per_s: float = 2.0
    # frames past a socket's limits cost a counter: at most one rate_limited notice a window, and
    # flood_frames of them within one window close the socket (1008) and refuse its address's
    # new sockets for flood_block_s, on every process (0 = not refused). There is no "never": a
    # socket left open is read, and every frame framed by the server, however fast it comes
    flood_window_ms: int = Field(default=1_000, gt=0)
    flood_frames: int = Field(default=100, gt=0)
    flood_block_s: float = 30.0
    # hellos counted a minute from the first, across processes; 0 = no limit
    hellos_per_token_per_min: int = 30
    hellos_per_ip_per_min: int = 300
    # a player whose socket closed is marked disconnected this long after, unless they said hello
    # again meanwhile (a flapping connection makes no disconnected/reconnected pair); 0 = at once
    drop_delay_ms: int = Field(default=2_000, ge=0)

    # the HTTP edge (docs/deploy.md "Settings that matter in production")
    # addresses of the proxies whose X-Forwarded-For names the client (uvicorn's
    # forwarded_allow_ips: comma-separated addresses or networks, "*" = any peer)
    forwarded_allow_ips: str = "127.0.0.1,::1"
    api_docs: bool = False  # /docs, /redoc and /openapi.json
    metrics: bool = False  # GET /metrics (Prometheus)
    max_body_bytes: int = Field(default=16_384, gt=0)  # a request's body; larger: 413
    max_header_bytes: int = Field(default=16_384, gt=0)  # a request's line and headers; larger: 431
    # a request's line, headers and body must arrive within this of its first byte (a new
    # connection's first request: of connecting), or the connection is closed (slowloris)
    request_read_timeout_s: float = Field(default=10.0, gt=0)
    # pending handshakes and the Host allow-list (docs/security.md)
    # connections whose first request head has not come yet (each holds a file descriptor until
    # it does, or for request_read_timeout_s), per peer network (the TCP peer: X-Forwarded-For
    # comes with the head; an IPv6 peer by its /64; peers in forwarded_allow_ips, proxies, count
    # in the total only) and in all on a process (at most a quarter of max_connections); one
    # past either is closed at once. 0 = no limit
    pending_handshakes_per_ip: int = Field(default=64, ge=0)
    max_pending_handshakes: int = Field(default=4096, ge=0)
    # connections and requests at once on a process (uvicorn's limit_concurrency: past it a
    # request gets 503; open WebSockets count); unset: the open-files limit (raised to its hard
    # limit at start) less a reserve for Redis, the database and the workers; 0 = no limit
    max_connections: int | None = Field(default=None, ge=0)
    # connections the kernel holds until the process accepts them (capped by net.core.somaxconn);
    # a queue accepted in one go is pending at once, so it stays within max_pending_handshakes
    listen_backlog: int = Field(default=4096, gt=0)
    # Host names answered besides the server's own (loopback, the listen host, its hostname and
    # hostname.local, its interfaces' addresses when listening on all, PUBLIC_URL's host); a
    # port is ignored, "*.example.org" allows its subdomains, ["*"] turns the check off (behind
    # a proxy that rewrites Host); others get 400 bad_host (DNS rebinding)
    allowed_hosts: list[str] = Field(default_factory=list)

    # worker processes that make the bots' searches (hard), off the event loop; 0: none, a
    # search runs on the loop with bot_inline_budget_ms (tests, a small embedded server)
    bot_workers: int = Field(default_factory=lambda: os.cpu_count() or 1, ge=0)
    bot_inline_budget_ms: float = Field(default=1.0, gt=0)


@lru_cache
def get_settings() -> Settings:
    return Settings()
