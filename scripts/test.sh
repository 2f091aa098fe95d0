#!/usr/bin/env bash
# The whole test suite: lint, the engine's purity contract, then pytest (engine, app, web, bench);
# with arguments, pytest on what they name.
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS=dev,bench scripts/setup.sh
# the suite starts ~50 fresh interpreters (pytest's workers, the servers' fork servers, bench
# servers, bot workers): each compiled the repository's modules again (~1 s of CPU to import the
# app, ~4.5 s more to collect the suite) where the machine sets PYTHONDONTWRITEBYTECODE; kept in
# __pycache__/ (git ignores it), the first compiles them and the rest read them
unset PYTHONDONTWRITEBYTECODE
.venv/bin/ruff check engine app tests
.venv/bin/lint-imports
.venv/bin/ruff check bench
if [ $# -gt 0 ]; then  # a part of the suite, as asked
  exec .venv/bin/pytest "$@"
fi
# first, by themselves on a quiet machine, the few that check its own pace (after the parallel
# run, its processes' ends still shook the phone's calibration); then the rest in TEST_WORKERS
# (3) processes (pytest-xdist: on two cores a third keeps them busy while a test waits on a
# browser or a timer), each handed the next test as it finishes one (--maxschedchunk 1: xdist's
# first handout is otherwise a block of ~100 tests a worker, which put the slowest files,
# ordered first, all on one worker)
.venv/bin/pytest -m alone
# the server tests that touch Redis, once more on a Redis Cluster, beside the rest: by themselves
# they kept the cores a third busy for ~40 s (they wait on failovers, restarts, timers).
# TEST_REDIS_CLUSTER=1 makes tests/conftest.py start a local cluster (3 primaries, 3 replicas;
# stopped by pid at the end), and every test of the real Redis runs there (its servers with
# REDIS_CLUSTER=true); its output follows the rest's. TEST_CLUSTER_PASS=0 leaves it out.
cluster_pid=""
if [ "${TEST_CLUSTER_PASS:-1}" != 0 ]; then
  cluster_log=$(mktemp)
  TEST_REDIS_CLUSTER=1 .venv/bin/pytest -q -n 1 -k "not fake" \
    tests/app/test_multiprocess.py tests/app/test_relay.py tests/app/test_sessions.py \
    tests/app/test_errors.py tests/app/test_host_controls.py tests/app/test_restart_and_audit.py \
    tests/app/test_ops.py > "$cluster_log" 2>&1 &
  cluster_pid=$!
fi
status=0
.venv/bin/pytest -n "${TEST_WORKERS:-3}" --maxschedchunk 1 -m "not alone" || status=$?
if [ -n "$cluster_pid" ]; then
  cluster_status=0
  wait "$cluster_pid" || cluster_status=$?
  echo "== the same server tests on a Redis Cluster (TEST_REDIS_CLUSTER=1)"
  cat "$cluster_log"
  rm -f "$cluster_log"
  [ "$status" != 0 ] || status=$cluster_status
fi
exit "$status"
