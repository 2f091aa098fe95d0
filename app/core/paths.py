"""Where the files beside the package live (web/, migrations/, alembic.ini): next to the source
tree in a checkout, or at ``MERCYLESS_HOME`` when installed from a wheel (the Docker image)."""

from __future__ import annotations

import os
from pathlib import Path

HOME = Path(os.environ.get("MERCYLESS_HOME") or Path(__file__).resolve().parents[2])
WEB_DIR = HOME / "web"
MIGRATIONS_DIR = HOME / "migrations"
ALEMBIC_INI = HOME / "alembic.ini"
