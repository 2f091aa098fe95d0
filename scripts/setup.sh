#!/usr/bin/env bash
# Creates .venv and installs Mercyless from the lock files in requirements/ (pinned, hash-checked:
# scripts/lock.sh makes them), then the project itself, editable, with --no-deps. Idempotent and
# quiet: it installs again, in a new .venv, only when pyproject.toml or the lock (that EXTRAS picks)
# changes.
#   EXTRAS=""  the runtime dependencies only (requirements/runtime.txt)
#   EXTRAS=dev, bench or dev,bench (the default is dev): requirements/dev.txt, which locks the
#              runtime dependencies with both extras in one resolution
set -euo pipefail
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1
EXTRAS=${EXTRAS-dev}
case ",$EXTRAS," in
  ,,) lock=requirements/runtime.txt ;;
  *)
    for extra in ${EXTRAS//,/ }; do
      case $extra in dev|bench) ;; *) echo "setup.sh: unknown extra '$extra' (dev, bench)" >&2; exit 1 ;; esac
    done
    lock=requirements/dev.txt ;;
esac
PY=${PYTHON:-}
if [ -z "$PY" ]; then
  # the lock is made for CPython 3.11 (as is the Docker image): prefer it
  for candidate in python3.11 python3 python3.12 python3.13; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      PY=$candidate; break
    fi
  done
fi
[ -n "$PY" ] || { echo "Python 3.11+ is needed" >&2; exit 1; }
stamp=.venv/.installed-$(cat pyproject.toml requirements/build.txt "$lock" | sha256sum | cut -c1-16)
if [ ! -f "$stamp" ] || [ ! -x .venv/bin/python ]; then
  "$PY" -c 'import sys; sys.version_info[:2] == (3, 11) or print(
    "setup.sh: note: the lock is made for Python 3.11; this is", sys.version.split()[0], file=sys.stderr)'
  # a new venv each time, so that nothing the lock no longer names is left behind
  rm -rf .venv
  "$PY" -m venv .venv
  # pip and setuptools first (locked too), then the dependencies, then the project; the locked
  # setuptools builds what comes as source only (rlcard in the bench extra) and the project
  .venv/bin/python -m pip install -q --require-hashes -r requirements/build.txt
  .venv/bin/python -m pip install -q --require-hashes --no-build-isolation -r "$lock"
  .venv/bin/python -m pip install -qq --no-deps --no-build-isolation -e .
  touch "$stamp"
fi
