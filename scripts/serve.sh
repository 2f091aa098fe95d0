#!/usr/bin/env bash
# Run the server on the embedded defaults (in-process Redis, SQLite file): nothing else needed.
set -euo pipefail
cd "$(dirname "$0")/.."
# the same .venv as scripts/test.sh (requirements/dev.txt), so switching between them installs nothing
EXTRAS=dev scripts/setup.sh
exec .venv/bin/mercyless serve "$@"
