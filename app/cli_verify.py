"""``mercyless verify ROUND_ID`` / ``mercyless verify --file round.json``: deal a finished round
again from its seed and say whether it is the round that was played (app/history/verify.py).

Exit status: 0 the deal checks out, 1 it does not (what differs is printed), 2 bad input (no such
round, a file that is not a round's record, no database)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from app.history.verify import BadRecord, Verdict, verify_document, verify_stored

#: A record file larger than this is not one round's.
MAX_FILE_BYTES = 64 * 1024 * 1024


def run(round_id: str | None, file: str | None, database_url: str | None = None,
        out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    try:
        if file is not None:
            verdict, label = verify_document(_read(file)), file
        else:
            if not round_id:
                raise BadRecord("name a round: mercyless verify ROUND_ID, or --file round.json")
            verdict, label = asyncio.run(_from_database(round_id, database_url)), f"round {round_id}"
    except BadRecord as bad:
        print(f"mercyless verify: {bad}", file=err)
        return 2
    _report(verdict, label, out)
    return 0 if verdict.ok else 1


def _read(file: str) -> Any:
    path = Path(file)
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise BadRecord(f"{file} is too large to be a round's record")
        return json.loads(path.read_bytes())
    except OSError as bad:
        raise BadRecord(f"cannot read {file}: {bad.strerror or bad}") from None
    except ValueError as bad:
        raise BadRecord(f"{file} is not JSON: {bad}") from None


async def _from_database(round_id: str, database_url: str | None) -> Verdict:
    from sqlalchemy.exc import SQLAlchemyError

    from app.history.db import make_engine, sessions

    if database_url is None:
        from app.core.settings import get_settings

        database_url = get_settings().database_url
    engine = make_engine(database_url)
    try:
        found = await verify_stored(sessions(engine), round_id)
    except (SQLAlchemyError, OSError) as bad:
        raise BadRecord(f"cannot read the history database: {type(bad).__name__}") from None
    finally:
        await engine.dispose()
    if found is None:
        raise BadRecord(f"no round {round_id!r} in the history (the id is the one the round's page shows)")
    return found[0]


def _report(verdict: Verdict, label: str, out: TextIO) -> None:
    print(f"{label}: seed {verdict.seed}", file=out)
    print(f"  commitment (SHA-256 of the seed): {verdict.commitment}", file=out)
    print(f"  the seed deals: top card {verdict.top}; "
          + "; ".join(f"{pid} {' '.join(cards)}" for pid, cards in verdict.hands.items()), file=out)
    print(f"  checked: {', '.join(verdict.checked)}", file=out)
    if verdict.ok:
        print("FAIR DEAL: the seed deals this round and every recorded action follows from it.", file=out)
        return
    print("MISMATCH: this record is not what its seed deals:", file=out)
    for problem in verdict.problems:
        print(f"  - {problem}", file=out)
