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
# (3) processes (pytest-xdist: on two cores a third keeps them busy while a test waits on a
# browser or a timer), each handed the next test as it finishes one (--maxschedchunk 1: xdist's
# first handout is otherwise a block of ~100 tests a worker, which put the slowest files,
# ordered first, all on one worker)
.venv/bin/pytest -m alone
.venv/bin/pytest -n "${TEST_WORKERS:-3}" --maxschedchunk 1 -m "not alone"
