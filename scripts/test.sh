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
# first, by themselves on a quiet machine, the few that check its own pace (after the parallel
# run, its processes' ends still shook the phone's calibration); then the rest in TEST_WORKERS
# (2) processes (pytest-xdist; most of a test's time is a server starting or a browser waiting)
.venv/bin/pytest -m alone
.venv/bin/pytest -n "${TEST_WORKERS:-2}" -m "not alone"
