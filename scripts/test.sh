#!/usr/bin/env bash
# The whole test suite: lint, the engine's purity contract, then pytest (engine, app, web, bench);
# with arguments, pytest on what they name.
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS=dev,bench scripts/setup.sh
.venv/bin/ruff check engine app tests
.venv/bin/lint-imports
.venv/bin/ruff check bench
if [ $# -gt 0 ]; then  # a part of the suite, as asked
  exec .venv/bin/pytest "$@"
fi
# the tests in TEST_WORKERS (2) processes (pytest-xdist; most of a test's time is a server process
# starting or a browser waiting, so more workers than the machine's 2 cores still pay), then the
# few that check the machine's own pace, by themselves
.venv/bin/pytest -n "${TEST_WORKERS:-2}" -m "not alone"
.venv/bin/pytest -m alone
