#!/usr/bin/env bash
# The whole test suite: lint, the engine's purity contract, then pytest (engine, app, web).
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS=dev,bench scripts/setup.sh
.venv/bin/ruff check engine app tests
.venv/bin/lint-imports
.venv/bin/pytest "$@"
