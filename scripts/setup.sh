#!/usr/bin/env bash
# Creates .venv (if missing) and installs Mercyless with its test tools. Idempotent and quiet.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-}
if [ -z "$PY" ]; then
  for candidate in python3.12 python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
      PY=$candidate; break
    fi
  done
fi
[ -n "$PY" ] || { echo "Python 3.11+ is needed" >&2; exit 1; }
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.installed-$(sha256sum pyproject.toml | cut -c1-16)
if [ ! -f "$stamp" ]; then
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install -q -e ".[${EXTRAS:-dev}]"
  rm -f .venv/.installed-*
  touch "$stamp"
fi
